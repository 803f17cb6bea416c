package edge

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/rs/cors"
	"github.com/vmcp/vmcp/pkg/wire"
	"golang.org/x/net/http/httpguts"
)

// CORS policy for browser clients of the MCP endpoint.
var (
	// corsMethods are the methods of Streamable HTTP.
	corsMethods = []string{http.MethodPost, http.MethodGet, http.MethodDelete}
	// corsHeaders are the request headers a page may send; Mcp-Param-*
	// headers (2026-07-28 x-mcp-header) are accepted by paramPrefix.
	corsHeaders = []string{"Content-Type", "Authorization", "MCP-Protocol-Version", "Mcp-Session-Id",
		"Last-Event-ID", "Mcp-Method", "Mcp-Name"}
	// corsExposed are the response headers a page may read: its session id
	// and the authentication challenge.
	corsExposed = []string{"Mcp-Session-Id", "WWW-Authenticate"}
)

// paramPrefix starts every Mcp-Param-* header name (lower case).
const paramPrefix = "mcp-param-"

// Origins validates the Origin of requests to the MCP endpoint and answers
// CORS for the allowed ones. A request without Origin (not a browser), or
// whose Origin names the request's own Host, passes without CORS headers.
type Origins struct {
	allowed map[string]bool // lower-case Origins
	listed  *cors.Cors      // AllowedHeaders = corsHeaders
	params  *cors.Cors      // AllowedHeaders = "*", for preflights paramHeadersOnly admits
}

// NewOrigins allows the Origins in allowed (scheme://host[:port],
// validated by pkg/config), compared case-insensitively.
func NewOrigins(allowed []string) *Origins {
	o := &Origins{allowed: map[string]bool{}}
	for _, a := range allowed {
		o.allowed[strings.ToLower(a)] = true
	}
	opts := cors.Options{
		AllowOriginFunc: o.listedOrigin,
		AllowedMethods:  corsMethods,
		AllowedHeaders:  corsHeaders,
		ExposedHeaders:  corsExposed,
	}
	o.listed = cors.New(opts)
	opts.AllowedHeaders = []string{"*"}
	o.params = cors.New(opts)
	return o
}

func (o *Origins) listedOrigin(origin string) bool { return o.allowed[strings.ToLower(origin)] }

// Allowed reports whether r's Origin is same-host or allowed. A request
// without Origin passes (not a browser), unless a browser marked it
// cross-site (Sec-Fetch-Site) and its method is not safe, as net/http's
// CrossOriginProtection rules.
func (o *Origins) Allowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		switch r.Header.Get("Sec-Fetch-Site") {
		case "", "same-origin", "none":
			return true
		}
		return r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions
	}
	if o.listedOrigin(origin) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// Guard refuses (403) what Allowed refuses and serves the rest with next,
// without CORS: for endpoints a page of another origin must not read.
func (o *Origins) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !o.Allowed(r) {
			o.refuse(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (o *Origins) refuse(w http.ResponseWriter, r *http.Request) {
	msg := fmt.Sprintf("Forbidden: Origin %s is not allowed (http.allowed_origins)", wire.Quote(r.Header.Get("Origin")))
	if r.Header.Get("Origin") == "" {
		msg = fmt.Sprintf("Forbidden: cross-site %s without Origin (Sec-Fetch-Site %s)", r.Method, wire.Quote(r.Header.Get("Sec-Fetch-Site")))
	}
	refuse(w, http.StatusForbidden, msg)
}

// Handler refuses (403, naming the Origin) a request whose Origin is not
// allowed, before next runs and without reading its body; answers an allowed preflight (OPTIONS with
// Access-Control-Request-Method) with 204 and the CORS policy, whatever the
// order and case of its requested header names; and adds
// Access-Control-Allow-Origin and -Expose-Headers to every other response
// to an allowed Origin.
func (o *Origins) Handler(next http.Handler) http.Handler {
	listed, params := o.listed.Handler(next), o.params.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !o.Allowed(r) {
			o.refuse(w, r)
			return
		}
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if preflight && r.ContentLength != 0 {
			dontRead(w) // rs/cors answers without reading a body; a preflight has none
		}
		if preflight {
			names, param, ok := requestedHeaders(r.Header.Values("Access-Control-Request-Headers"))
			if ok && len(names) > 0 {
				r = withRequestHeaders(r, names)
			}
			if ok && param {
				params.ServeHTTP(w, r)
				return
			}
		}
		listed.ServeHTTP(w, r)
	})
}

// maxRequestHeaders bounds the bytes of Access-Control-Request-Headers
// vmcp parses; a longer list is left as sent to rs/cors, which refuses it.
const maxRequestHeaders = 4096

// requestedHeaders parses a preflight's Access-Control-Request-Headers into
// its names, lower case, sorted and unique (the only form rs/cors accepts);
// ok reports whether each is in corsHeaders or Mcp-Param-* (a header name:
// an RFC 9110 token, so nothing else is echoed back), param whether
// any is Mcp-Param-* (the params policy answers those, the listed one the rest).
func requestedHeaders(values []string) (names []string, param, ok bool) {
	size := 0
	for _, v := range values {
		if size += len(v); size > maxRequestHeaders {
			return nil, false, false
		}
		for name := range strings.SplitSeq(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			switch {
			case name == "":
				continue
			case strings.HasPrefix(name, paramPrefix) && len(name) > len(paramPrefix) && httpguts.ValidHeaderFieldName(name):
				param = true
			case !listedHeader(name):
				return nil, false, false
			}
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), param, true
}

// withRequestHeaders is a shallow copy of r whose Access-Control-Request-Headers
// is names joined by commas (the request itself is not modified).
func withRequestHeaders(r *http.Request, names []string) *http.Request {
	c := *r
	c.Header = r.Header.Clone()
	c.Header.Set("Access-Control-Request-Headers", strings.Join(names, ","))
	return &c
}

func listedHeader(name string) bool {
	for _, h := range corsHeaders {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}
