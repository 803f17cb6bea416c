package edge

import (
	"context"
	"net"
	"net/http"
)

func contextWithLocal(ctx context.Context, la net.Addr) context.Context {
	return context.WithValue(ctx, http.LocalAddrContextKey, la)
}
