package backends

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// negotiate is go-sdk client sending middleware for one connection: when
// the backend answers server/discover with -32022 listing data.supported
// (or a discover result listing only Legacy supportedVersions), the
// initialize the go-sdk then falls back to asks for the newest Legacy
// revision of that list that the SDK speaks, instead of its fixed
// 2025-11-25. (A Modern revision in the list is retried by the SDK itself.)
func negotiate() mcp.Middleware {
	var mu sync.Mutex
	var supported []string
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "server/discover":
				res, err := next(ctx, method, req)
				if list := supportedOf(res, err); list != nil {
					mu.Lock()
					supported = list
					mu.Unlock()
				}
				return res, err
			case "initialize":
				mu.Lock()
				v := newestLegacy(supported)
				mu.Unlock()
				if ir, ok := req.(*mcp.InitializeRequest); ok && ir.Params != nil && v != "" {
					ir.Params.ProtocolVersion = v
				}
			}
			return next(ctx, method, req)
		}
	}
}

// supportedOf is the versions a discover answer lists: data.supported of
// a -32022 error, or the result's supportedVersions (nil: none listed).
func supportedOf(res mcp.Result, err error) []string {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == mcp.CodeUnsupportedProtocolVersion && len(we.Data) > 0 {
		var d mcp.UnsupportedProtocolVersionData
		if json.Unmarshal(we.Data, &d) == nil && len(d.Supported) > 0 {
			return d.Supported
		}
	}
	if r, ok := res.(*mcp.DiscoverResult); ok && err == nil && len(r.SupportedVersions) > 0 {
		return r.SupportedVersions
	}
	return nil
}

// newestLegacy is the newest revision below 2026-07-28 that both the SDK
// and supported list ("" for none).
func newestLegacy(supported []string) string {
	for _, v := range mcp.SupportedProtocolVersions() { // newest first
		if !wire.IsModern(v) && slices.Contains(supported, v) {
			return v
		}
	}
	return ""
}
