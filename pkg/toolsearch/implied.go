package toolsearch

import (
	"regexp"
	"slices"
	"strings"
)

// A request often implies a step it never names: "save it to
// /root/x.md" needs a tool that writes a file (to x.docx, x.pptx or
// x.xlsx: one that creates that format's document), "nearby" or a route a
// place's coordinates, a tour or an itinerary places to visit, "estimate"
// a calculation. Each cue below adds that step's capability words as one
// more part of the request (ranked and fused like the parts the request
// names), so the tools offering it, on whatever backend, compete for a
// place. The cues name capabilities, never tools or servers.
//
// A relative date ("tomorrow", "next Wednesday") needs today's date in
// the user's timezone, which an agent does not know (so a clock that takes
// a timezone, not a server's own fixed-zone date tool): a fact the
// request's work needs, not a part of the work. Ranked and fused as a part, it takes a share of the places the
// parts the request names are diversified over (the tuned half lost by
// it); as an aside, its step's best tool only takes place asidePlace
// when the first asideReach hits lack it (or another server's copy).

// impliedCue is one cue: any of its phrases in the lower-cased request
// (with a file path too, when path is set) adds the query step, as an
// aside when aside is set.
type impliedCue struct {
	phrases []string
	path    bool
	exts    []string       // the path's extensions (any of), when set
	pattern *regexp.Regexp // matched instead of phrases, when set
	aside   bool
	step    string
}

// reportPhrases, with a text file's path, ask for a document to be made
// there ("generate a report at /root/x.md", "give me a markdown report on
// /root/x.md"); "report" or "document" alone may name the file to read
// ("what does the report in /root/q3.csv say").
var reportPhrases = []string{"generate", "give me a", "produce", "prepare", "compile", "put together", "as a report", "as a document"}

// textFiles are the extensions of files a text editor writes.
var textFiles = []string{".md", ".txt", ".csv", ".json", ".html", ".yaml", ".yml"}

// readPhrases, with a file's path, ask for work on what the file holds,
// which must be read first ("summarize /root/lease.pdf").
var readPhrases = []string{"summarize", "summarise", "analyze", "analyse", "explain", "translate", "what's in", "whats in", "what is in"}

// folderContents asks what a folder holds ("what's in my Downloads
// folder?", "contents of the 'meetings' directory"), which only listing it
// tells; its name would otherwise find tools of that name. The folder
// follows the question within two words, so "what's in the README in the
// project folder" (a file's place) is not one.
var folderContents = regexp.MustCompile(`(^|[^\w])(what's in|whats in|what is in|what's inside|what is inside|contents of|what files are in|what files are inside)` +
	` (the |my |this |your |our |that )?([\w'./~-]+ ){0,2}(folder|directory)\b`)

// savePhrases are the words that, with a file path, ask for a file to be
// written ("create an intro in /root/x.md").
var savePhrases = []string{"save", "write", "draft", "store", "export", "create"}

// impliedCues are the cues, each kept only where it paid on the tuning half
// of LiveMCPBench's tasks and cost no single-intent query set a hit
// (docs/arch/decisions.md).
var impliedCues = []impliedCue{
	{phrases: savePhrases, path: true, step: "write file"},
	{phrases: reportPhrases, path: true, exts: textFiles, step: "write file"},
	{phrases: readPhrases, path: true, exts: []string{".pdf"}, step: "read pdf"},
	{pattern: folderContents, step: "list directory contents"},
	{phrases: savePhrases, path: true, exts: []string{".docx"}, step: "create new word document"},
	{phrases: savePhrases, path: true, exts: []string{".pptx"}, step: "create new powerpoint presentation"},
	{phrases: savePhrases, path: true, exts: []string{".xlsx"}, step: "write excel workbook sheet"},
	{phrases: []string{"nearby", "near ", "route", "distance", "commute", "meeting point", "get there", "directions"}, step: "geocode address coordinates"},
	{phrases: []string{"tour of", "itinerary", "sightseeing", "attractions"}, step: "places nearby attractions"},
	{phrases: []string{"estimate", "calculate", "budget"}, step: arithmeticStep},
	{phrases: []string{"tomorrow", "yesterday", "next week", "next month", "next monday", "next tuesday", "next wednesday",
		"next thursday", "next friday", "next saturday", "next sunday", "near future", "last 24"}, aside: true, step: "current time timezone"},
}

// asidePlace is the place (from 0) an aside's tool takes, after the first
// hits of the parts the request names (diversify.go's keepFirst);
// asideReach is how many of the first hits are looked at for it.
const (
	asidePlace = keepFirst
	asideReach = 5
)

// maxCueBytes bounds how much of a request the cues read.
const maxCueBytes = 4096

// implied returns the steps q's cues imply (see impliedCues): parts, to
// rank and fuse with the request's, and asides; arith says q asks for
// arithmetic (arithmetic.go), which implies arithmeticStep.
func implied(q string, arith bool) (parts, asides []string) {
	if len(q) > maxCueBytes {
		q = q[:maxCueBytes]
	}
	q = strings.ToLower(q)
	if arith {
		parts = append(parts, arithmeticStep)
	}
	for _, c := range impliedCues {
		switch {
		case c.path && !hasPath(q, c.exts):
		case c.pattern == nil && !slices.ContainsFunc(c.phrases, func(p string) bool { return hasPhrase(q, p) }):
		case c.pattern != nil && !c.pattern.MatchString(q):
		case c.aside:
			asides = append(asides, c.step)
		case !slices.Contains(parts, c.step): // arithmetic may have implied it
			parts = append(parts, c.step)
		}
	}
	return parts, asides
}

// hasPhrase reports whether q holds phrase p as words of its prose: not
// inside another word or a name ("restore", "create_order.go", "saved/"),
// though an inflection may follow ("saved", "creates"); a phrase ending in
// a space or a digit ("near ", "last 24") only begins at a word.
func hasPhrase(q, p string) bool {
	for off := 0; ; {
		i := strings.Index(q[off:], p)
		if i < 0 {
			return false
		}
		i += off
		if (i == 0 || !nameByte(q[i-1])) && wordEnds(q[i+len(p):], p) {
			return true
		}
		off = i + 1
	}
}

// wordEnds reports whether rest, the text after phrase p, ends p's last
// word there or after an inflection ("s", "d", "ed", "es", "n").
func wordEnds(rest, p string) bool {
	if last := p[len(p)-1]; last == ' ' || last >= '0' && last <= '9' {
		return true
	}
	n := 0
	for n < len(rest) && rest[n] >= 'a' && rest[n] <= 'z' {
		n++
	}
	switch rest[:n] {
	case "", "s", "d", "ed", "es", "n":
	default:
		return false
	}
	rest = rest[n:]
	return rest == "" || !nameByte(rest[0]) || rest[0] == '.' && (len(rest) == 1 || !nameByte(rest[1]))
}

// nameByte reports whether b may be part of a lower-cased word or a name:
// a letter, a digit, or one of _ - / . (a file's or an identifier's).
func nameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || strings.IndexByte("_-/.", b) >= 0
}

// hasPath reports whether q holds a file path (ending in one of exts, when
// set): absolute with a folder ("/root/x.md", not a route's "/login"),
// home-relative, or relative as literal.go's isPath reads one
// ("notes/todo.txt", "./out.csv").
func hasPath(q string, exts []string) bool {
	for _, f := range strings.Fields(q) {
		f = strings.TrimRight(strings.TrimLeft(f, "`'\"([<"), "`'\")]>.,;:!?")
		f = strings.TrimPrefix(f, "file://")
		abs := strings.HasPrefix(f, "/")
		if abs && strings.Count(f, "/") < 2 || !abs && (strings.Contains(f, "://") || !isPath(f)) {
			continue
		}
		if len(exts) == 0 || slices.ContainsFunc(exts, func(e string) bool { return strings.HasSuffix(f, e) }) {
			return true
		}
	}
	return false
}

// placeAsides returns hits (best first) with the best allowed tool of each
// aside step at asidePlace (the next aside the next place) unless it or a
// copy of it is among the first asideReach hits; a copy ranked lower is
// moved up instead of adding it again.
func (ix *Index) placeAsides(hits []Hit, asides []string, allow func(int) bool) []Hit {
	at := min(asidePlace, len(hits))
	for _, s := range asides {
		best := ix.rank(queryTerms(s), 1, allow)
		if len(best) == 0 {
			continue
		}
		h := best[0]
		k := slices.IndexFunc(hits, func(x Hit) bool { return ix.base[x.Doc] == ix.base[h.Doc] })
		switch {
		case k >= 0 && k < max(at+1, asideReach):
			continue
		case k >= 0:
			h = hits[k]
			hits = slices.Delete(hits, k, k+1)
		}
		hits = slices.Insert(hits, at, h)
		at++
	}
	return hits
}
