package toolsearch

import "strings"

// shorthand maps the chat shorthand people type in requests to the words
// it stands for ("tmrw" → "tomorrow", "pics" → "pictures"); "" drops a
// word of phrasing ("asap", "thx"); the commonest coins' names say they
// are cryptocurrencies. It is general usage, not any catalogue's: a word a
// catalogue uses as a name (LoL's "lol") is not here.
var shorthand = map[string]string{
	"tmrw": "tomorrow", "tmr": "tomorrow", "tmrow": "tomorrow", "tomoz": "tomorrow", "tmw": "tomorrow",
	"tdy": "today", "tonite": "tonight", "yday": "yesterday", "yest": "yesterday", "rn": "now",
	"wk": "week", "wks": "weeks", "yr": "year", "yrs": "years", "hr": "hour", "hrs": "hours",
	"mins": "minutes", "secs": "seconds", "bday": "birthday",
	"pic": "picture", "pics": "pictures", "pix": "pictures", "vid": "video", "vids": "videos",
	"msg": "message", "msgs": "messages", "convo": "conversation", "addr": "address",
	"temp": "temperature", "temps": "temperatures", "wx": "weather", "calc": "calculate",
	"govt": "government", "intl": "international", "approx": "approximately",
	"tix": "tickets", "rec": "recommend", "recs": "recommendations", "db": "database",
	"asap": "", "thx": "", "ty": "", "tysm": "", "btw": "", "fyi": "", "idk": "", "imo": "",
	"gonna": "", "wanna": "", "gotta": "", "ur": "", "abt": "", "wats": "", "wat": "", "thru": "",
	"pom": "pom maven", "antd": "antd ant design", "wiki": "wiki wikipedia", "grep": "grep search text",
	"rundown": "summary", "preprint": "paper", "preprints": "papers", "raffle": "raffle random", "valo": "valorant",
	"hn": "hacker news", "yt": "youtube", "gh": "github", "nyt": "new york times",
	"bitcoin": "bitcoin cryptocurrency", "btc": "btc bitcoin cryptocurrency", "ethereum": "ethereum cryptocurrency",
	"eth": "eth ethereum cryptocurrency", "solana": "solana cryptocurrency", "dogecoin": "dogecoin cryptocurrency",
	"xrp": "xrp cryptocurrency",
}

// shorthandPairs maps two-word idioms of requests to the words they
// stand for ("spin up" a deck creates it; "wall street" is the stock
// market), read like shorthand.
var shorthandPairs = map[string]string{
	"spin up": "create", "plug in": "charge", "jot down": "note", "check off": "done",
	"deep dive": "research", "going for": "price", "front page": "top stories", "wall street": "stock market",
	"four pillars": "bazi",
	// a wiki of one's own is not Wikipedia ("wiki" alone is, below)
	"company wiki": "company wiki", "internal wiki": "internal wiki", "team wiki": "team wiki",
	"our wiki": "our wiki", "repo wiki": "repo wiki", "project wiki": "project wiki", "left off": "continue", "swap out": "replace",
	"disk space": "disk size", "up space": "up size", "last modified": "last modified info", "changed between": "diff between", "tick off": "done", "mouse over": "hover",
}

// spelledOut returns q with each chat shorthand word or idiom (any case)
// standing alone replaced by what it stands for; other text is kept byte
// for byte. Its work is linear in len(q).
func spelledOut(q string) string {
	var b strings.Builder
	last := 0 // q[:last] is written or replaced
	for i := 0; i < len(q); {
		j := wordEnd(q, i)
		if j == i {
			i++
			continue
		}
		if !standsAlone(q, i, j) {
			i = j
			continue
		}
		w, end, ok := shorthandAt(q, i, j)
		if ok {
			b.WriteString(q[last:i])
			b.WriteString(w)
			last = end
		}
		i = max(j, end)
	}
	if last == 0 {
		return q
	}
	b.WriteString(q[last:])
	return b.String()
}

// wordEnd is the end of the run of ASCII letters at q[i:] (i if none).
func wordEnd(q string, i int) int {
	j := i
	for j < len(q) && isASCIILetter(q[j]) {
		j++
	}
	return j
}

// shorthandAt returns what the shorthand word q[i:j], or the idiom it
// begins with the next word (one space apart), stands for, and its end.
func shorthandAt(q string, i, j int) (string, int, bool) {
	if j+1 < len(q) && q[j] == ' ' {
		if k := wordEnd(q, j+1); k > j+1 && standsAlone(q, j+1, k) {
			if w, ok := shorthandPairs[strings.ToLower(q[i:k])]; ok {
				return w, k, true
			}
		}
	}
	w, ok := shorthand[strings.ToLower(q[i:j])]
	return w, j, ok
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// standsAlone reports whether q[i:j] is a word of prose, not a part of a
// path, a name, a URL or an address ("/tmp/pics", "get_temp", "db.example"):
// space or prose punctuation on both sides, a sentence's end after.
func standsAlone(q string, i, j int) bool {
	if i > 0 && !strings.ContainsRune(" \t\n\"'(,;", rune(q[i-1])) {
		return false
	}
	if j == len(q) || strings.ContainsRune(" \t\n\"'),;?!", rune(q[j])) {
		return true
	}
	return q[j] == '.' && (j+1 == len(q) || q[j+1] == ' ')
}
