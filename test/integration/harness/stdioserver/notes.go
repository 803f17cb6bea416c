package main

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noteURI is the server's one resource, subscribable; the "touch" tool
// tells its subscribers it changed.
const noteURI = "mem://note"

// noteOptions completes any argument with "alpha" and "alpha2" and takes
// resource subscriptions (the go-sdk server keeps the subscribers).
func noteOptions(opts *mcp.ServerOptions) {
	opts.CompletionHandler = func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"alpha", "alpha2"}, Total: 2}}, nil
	}
	opts.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
	opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
}

// addNote adds the prompt "greet" (argument "name"), the resource
// mem://note and the tool "touch", which sends notifications/resources/updated
// for it to the sessions subscribed.
func addNote(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + req.Params.Arguments["name"]}}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: noteURI, Name: "note", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: noteURI, Text: "note"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "touch", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: noteURI}); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "touched"}}}, nil
		})
}
