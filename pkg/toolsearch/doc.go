// Package toolsearch ranks a catalogue's tools for a free-text query: an
// in-memory BM25F index over each tool's name (split on '_', '-', case and
// digits), description (its first sentence again, as a field of its own),
// parameter names and descriptions, and its backend's
// name and description, with English stop words dropped, Snowball (Porter2)
// stemming, and the query expanded by a small hand table of synonyms and
// by WordNet's (wordnet.txt, made by wordnetgen; WORDNET-LICENSE); a query
// word no tool has is read as the compound or abbreviation of words tools
// have ("flowchart", "info", "tokenomics": unknown.go), and chat shorthand
// as the words it stands for ("tmrw", "pics": shorthand.go); a query's
// literals (paths, file names, URLs, domains, dates, times of day, IP and
// email addresses, AS numbers, Maven coordinates, blobs) count as the kind
// of thing they name (a media file's kind too: "png" → image), not as
// their words; number words ("one") count for nothing.
// Chinese text, a tool's or a request's, is read with the English words a
// glossary gives its words ("新闻" → news: glossary.go). CJK text is read as pairs of characters. In a
// request of several parts, the tools of the server that answers it best
// rise together (siblings.go); another server's copy of a tool already
// found goes after the distinct tools (copies.go); past the first three,
// the hits are re-ordered so each part is served (xQuAD, diversify.go).
// Steps a request implies but does not name (a path to save to: writing a
// file, or creating a .docx, .pptx or .xlsx document; a route: geocoding)
// and arithmetic ("17% of 2340") a calculation, are ranked as parts of
// it, and a relative
// date ("tomorrow") brings a clock to the fourth place (implied.go). A
// found tool brings the tools of its server that its texts name as
// prerequisites right after it (prereq.go). An Index is immutable and safe
// for concurrent searches; Build makes a new one.
package toolsearch

// Doc is one tool as the index sees it. Key is the caller's handle (the
// advertised name), returned with each Hit; the text fields are indexed.
type Doc struct {
	Key                string
	Name               string
	Description        string
	Params             []Param
	Backend            string
	BackendDescription string
}

// Param is one input parameter of a tool: its property name and description.
type Param struct {
	Name        string
	Description string
}

// Hit is one search result: the index of its Doc in the slice given to Build,
// its Key, and its score (higher is better; only comparable within a search).
type Hit struct {
	Doc   int
	Key   string
	Score float64
}
