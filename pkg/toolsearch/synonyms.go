package toolsearch

// synonymGroups are words people use interchangeably when asking for a tool
// in software and web tasks ("picture" for "image", "remove" for "delete").
// WordNet's synsets miss most of these senses (repo, doc, directory/folder)
// and add many wrong ones, so the table is kept small and by hand; every
// word of a group expands to the others at synonymWeight.
var synonymGroups = [][]string{
	{"image", "picture", "photo", "photograph", "img"},
	{"search", "find", "lookup", "query", "look"},
	{"delete", "remove", "erase"},
	{"create", "make", "new", "add", "generate"},
	{"get", "fetch", "retrieve", "obtain", "read"},
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
	{"weather", "forecast", "temperature"},
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
	{"summary", "summarize", "summarise"},
	{"convert", "transform", "export"},
	{"run", "execute", "exec"},
	{"time", "clock", "date"},
	{"currency", "exchange", "forex", "dollar", "euro", "yen", "pound"},
}

// synonyms maps a stemmed word to the stems of its synonyms.
var synonyms = buildSynonyms(synonymGroups)

func buildSynonyms(groups [][]string) map[string][]string {
	m := map[string][]string{}
	for _, g := range groups {
		var stems []string
		for _, w := range g {
			stems = append(stems, stem(w))
		}
		for _, a := range stems {
			for _, b := range stems {
				if a != b && !contains(m[a], b) {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
