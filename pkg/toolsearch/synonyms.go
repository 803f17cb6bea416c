package toolsearch

import (
	_ "embed"
	"strings"
	"sync"
)

// synonymGroups are words people use interchangeably when asking for a tool
// in software and web tasks ("picture" for "image", "remove" for "delete").
// WordNet's synsets miss most of these senses (repo, doc, directory/folder),
// so this table is kept by hand; every word of a group expands to the
// others at synonymWeight, before WordNet's (wordnet.txt).
var synonymGroups = [][]string{
	{"image", "picture", "photo", "photograph", "img"},
	{"search", "find", "lookup", "query", "look"},
	{"delete", "remove", "erase"},
	{"create", "make", "new", "add", "generate"},
	{"get", "fetch", "retrieve", "obtain", "read", "grab"},
	{"update", "modify", "edit", "change"},
	{"list", "enumerate", "show"},
	{"directory", "folder", "dir"},
	{"document", "doc", "docx", "word"},
	{"spreadsheet", "excel", "xlsx", "sheet", "workbook"},
	{"presentation", "slide", "slides", "powerpoint", "pptx", "deck"},
	{"repository", "repo"},
	{"website", "webpage", "site", "page", "url", "web"},
	{"save", "write", "store"},
	{"markdown", "md"},
	{"weather", "forecast", "temperature", "rain", "snow", "umbrella", "sunny", "cloudy", "windy", "humid", "chilly", "rainy", "snowy"},
	{"location", "place", "address", "geocode"},
	{"map", "route", "direction", "navigation"},
	{"movie", "film"},
	{"song", "music", "track", "audio"},
	{"video", "clip"},
	{"news", "headline", "article"},
	{"translate", "translation"},
	{"chart", "graph", "plot", "visualize", "visualization"},
	{"calculate", "compute", "math"},
	{"stock", "share", "equity", "ticker"},
	{"paper", "article", "publication"},
	{"email", "mail"},
	{"message", "chat"},
	{"summary", "summarize", "summarise", "overview", "synopsis", "gist"},
	{"convert", "transform", "export"},
	{"run", "execute", "exec"},
	{"time", "clock", "date"},
	{"price", "cost", "worth"},
	{"random", "roll", "dice"},
	{"integer", "int", "number"},
	{"extract", "pull"},
	{"accommodation", "lodging", "hotel", "homestay", "airbnb", "stay", "cabin", "rental"},
	{"field", "box", "textbox", "input"},
	{"transcript", "caption", "captions", "subtitle", "subtitles"},
	{"memory", "remember", "memorize"},
	{"size", "bloat", "heavy", "footprint"},
	{"candlestick", "candle", "ohlc", "kline", "historical"},
	{"currency", "exchange", "forex", "dollar", "euro", "yen", "pound"},
	{"split", "chop", "chunk"},
	{"merge", "combine", "stitch"},
	{"click", "tap", "press"},
	{"upload", "attach"},
}

// expansion is a term a query term expands to, and its weight.
type expansion struct {
	term   string
	weight float64
}

// expansions maps a stemmed word to the stems it expands to: the hand
// table's synonyms at synonymWeight, then WordNet's (wordnet.txt)
// synonyms at wordnetSynonymWeight, hypernyms at wordnetHypernymWeight and
// derivationally related words at wordnetDerivedWeight;
// built on first use.
var expansions = sync.OnceValue(func() map[string][]expansion { return buildExpansions(synonymGroups, wordnetTable) })

// wordnetTable is wordnetgen's output: "stem synonyms hypernyms derived" a line
// (Snowball stems; regenerate with: go run ./pkg/toolsearch/wordnetgen >
// pkg/toolsearch/wordnet.txt, after apt-get install wordnet-base).
//
//go:embed wordnet.txt
var wordnetTable string

func buildExpansions(groups [][]string, table string) map[string][]expansion {
	m := map[string][]expansion{}
	add := func(a, b string, w float64) {
		for _, e := range m[a] {
			if e.term == b {
				return
			}
		}
		if a != b {
			m[a] = append(m[a], expansion{b, w})
		}
	}
	for _, g := range groups {
		for _, a := range g {
			for _, b := range g {
				add(stem(a), stem(b), synonymWeight)
			}
		}
	}
	for line := range strings.Lines(table) {
		fs := strings.Fields(line)
		if len(fs) != 4 {
			continue
		}
		for i, w := range []float64{wordnetSynonymWeight, wordnetHypernymWeight, wordnetDerivedWeight} {
			for to := range strings.SplitSeq(fs[1+i], ",") {
				if to != "-" {
					add(fs[0], to, w)
				}
			}
		}
	}
	return m
}
