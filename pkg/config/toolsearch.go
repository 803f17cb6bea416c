package config

import "fmt"

// ToolSearch configures vmcp's built-in tool search (pkg/metatools): two
// tools of its own, search_tools and call_tool, on both revisions. Off by
// default.
type ToolSearch struct {
	// Enabled turns tool search on. Default off.
	Enabled bool `yaml:"enabled"`
	// List is what tools/list shows: "search_only" (default) the two tools
	// alone, "all" them beside every tool. Every tool stays callable by
	// its own name either way.
	List string `yaml:"list"`
	// Embeddings, when its url is set, is an OpenAI-compatible
	// /v1/embeddings endpoint whose vectors are blended with the lexical
	// ranking (pkg/embeddings, pkg/metatools).
	Embeddings Embeddings `yaml:"embeddings"`
}

// Embeddings names an OpenAI-compatible embeddings endpoint.
type Embeddings struct {
	URL    string `yaml:"url"`     // e.g. http://127.0.0.1:8000/v1/embeddings
	Model  string `yaml:"model"`   // required with url
	APIKey string `yaml:"api_key"` // optional bearer token; ${VAR} expanded; never logged
}

// Values of ToolSearch.List.
const (
	ToolListSearchOnly = "search_only"
	ToolListAll        = "all"
)

// applyToolSearchDefaults sets list to search_only when unset.
func (c *Config) applyToolSearchDefaults() {
	setString(&c.ToolSearch.List, ToolListSearchOnly)
}

// validateToolSearch checks list and the embeddings endpoint: an absolute
// http(s) URL with a model.
func validateToolSearch(ps *problems, c *Config) {
	t := c.ToolSearch
	if t.List != ToolListSearchOnly && t.List != ToolListAll {
		ps.add("tool_search.list", fmt.Sprintf("want %q or %q, got %q", ToolListSearchOnly, ToolListAll, t.List))
	}
	e := t.Embeddings
	switch {
	case e.URL != "" && !isHTTPURL(e.URL):
		ps.add("tool_search.embeddings.url", fmt.Sprintf("invalid URL %q: want an absolute http or https URL", e.URL))
	case e.URL != "" && e.Model == "":
		ps.add("tool_search.embeddings.model", "required with tool_search.embeddings.url")
	case e.URL == "" && (e.Model != "" || e.APIKey != ""):
		ps.add("tool_search.embeddings.url", "required with tool_search.embeddings.model or api_key")
	}
}
