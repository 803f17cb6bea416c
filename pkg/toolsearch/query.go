package toolsearch

import "strings"

// requestWords are words of a request's phrasing that name no capability
// ("please help me …", "can you give me …"); queries drop them, tool
// descriptions keep them.
var requestWords = map[string]bool{
	"please": true, "help": true, "give": true, "tell": true, "want": true,
	"need": true, "like": true, "could": true, "would": true, "can": true,
	"let": true, "us": true, "also": true, "then": true, "thank": true,
	"thanks": true, "i'm": true, "hi": true, "hello": true, "going": true,
	"whats": true, "hows": true, "wheres": true, "whos": true, "im": true, "pls": true, "plz": true,
}

// numberWords are numbers and places in an order written as words ("one",
// "first", "third"): a count or a place, like a digit, names no
// capability, yet WordNet's senses of them do ("one" → "single", "ace":
// read_pdf for "how much is one bitcoin worth").
var numberWords = map[string]bool{
	"one": true, "two": true, "three": true, "four": true, "five": true, "six": true, "seven": true,
	"eight": true, "nine": true, "ten": true, "eleven": true, "twelve": true, "twenty": true,
	"first": true, "third": true, "dozen": true, "hundred": true, "thousand": true, "million": true, "billion": true,
}

// placeWords are words of a place in an order that a tool's name may hold
// for its own sense ("next" in get_next_task: "what's my next task") but a
// request mostly uses of time ("when does T1 play next?"): stems, with the
// weight they count for.
var placeWords = map[string]float64{"next": 0.3}

// maxClauses bounds the clauses a query is split into; a clause of fewer
// than minClauseTerms terms joins the one before it.
const (
	maxClauses     = 8
	minClauseTerms = 3
)

// clauses splits a request into its parts: at sentence ends and commas
// followed by a space, semicolons, and the words "and" and "then", so
// "read the sheet, plot a bar chart and save it to ~/c.png" asks for three.
// Parts with no indexed word are dropped; a part of one or two terms
// after another is a follow-up of it ("how do i block past dates?
// example pls"), read with it.
func clauses(q string) []string {
	f := func(r rune) bool { return r == ';' || r == '\n' }
	var out []string
	for _, part := range strings.FieldsFunc(q, f) {
		for _, s := range splitSentences(part) {
			for _, c := range splitWords(s) {
				n := len(queryTerms(c))
				switch {
				case n > 0 && n < minClauseTerms && len(out) > 0:
					out[len(out)-1] += " " + c // a follow-up: "example pls", "how heavy is it"
				case n > 0 && len(out) < maxClauses:
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// splitSentences splits at '.', ',', '?', '!' followed by a space (not the
// dots of a path, a host or a number).
func splitSentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(s); i++ {
		if strings.IndexByte(".,?!", s[i]) >= 0 && s[i+1] == ' ' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// splitWords splits at the words "and" and "then".
func splitWords(s string) []string {
	var out []string
	var cur []string
	for _, w := range strings.Fields(s) {
		if lw := strings.ToLower(w); lw == "and" || lw == "then" {
			out = append(out, strings.Join(cur, " "))
			cur = cur[:0]
			continue
		}
		cur = append(cur, w)
	}
	return append(out, strings.Join(cur, " "))
}

// queryTerms are a query's terms: its words less stop words, number
// words and the request's phrasing, stemmed.
func queryTerms(q string) []string {
	ws := words(q)
	out := ws[:0]
	for _, w := range ws {
		if !dropped(w) && !requestWords[w] && !numberWords[w] {
			out = append(out, stem(w))
		}
	}
	return out
}
