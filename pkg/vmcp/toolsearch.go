package vmcp

import (
	"context"

	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/embeddings"
	"github.com/vmcp/vmcp/pkg/metatools"
	authz "github.com/vmcp/vmcp/pkg/policy"
)

// startToolSearch, with tool_search enabled, serves search_tools through
// the call core and indexes the catalogue on a goroutine of its own (until
// stopToolSearch); the catalogue lists the two tools (policy's Own).
func (s *Server) startToolSearch(cfg *config.Config, access *authz.Policy) {
	if !cfg.ToolSearch.Enabled {
		return
	}
	var emb *embeddings.Client
	if e := cfg.ToolSearch.Embeddings; e.URL != "" {
		emb = embeddings.New(e.URL, e.Model, e.APIKey)
	}
	s.tools = metatools.New(s.agg, access, emb, s.log)
	s.tools.Instrument(s.metrics.Registry)
	s.core.SetOwnTool(s.tools.Call)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.tools.Run(ctx)
	}()
	s.stopTools = func() { cancel(); <-done }
}

// stopToolSearch ends the indexing goroutine (a no-op without tool search).
func (s *Server) stopToolSearch() {
	if s.stopTools != nil {
		s.stopTools()
	}
}
