// Command plainproxy is the bench's floor: a plain net/http reverse proxy
// (httputil.ReverseProxy, responses flushed at once) that knows nothing of
// MCP. Its cost over talking to the backend directly is the cost of one
// more process and HTTP hop on the machine, which no proxy avoids.
// It serves full duplex: otherwise net/http closes a request's body once
// its response begins, and the proxy's transport, reading that body once
// more for its EOF, dropped the connection mid-response ("request
// terminated without response" in the walk row, 2026-12-03).
//
//	plainproxy -addr 127.0.0.1:0 -backend http://127.0.0.1:PORT/mcp
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	_ "net/http/pprof"
	"net/url"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	backend := flag.String("backend", "", "backend MCP endpoint URL")
	debug := flag.String("pprof", "", "if set, serve net/http/pprof on this address (the bench counts goroutines there)")
	flag.Parse()
	if *debug != "" {
		go func() { log.Println(http.ListenAndServe(*debug, nil)) }() // DefaultServeMux: net/http/pprof
	}
	u, err := url.Parse(*backend)
	if err != nil || u.Host == "" {
		log.Fatalf("plainproxy: -backend %q: not a URL", *backend)
	}
	p := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host}) },
		FlushInterval: -1,
	}
	p.Transport = &http.Transport{MaxIdleConnsPerHost: 512}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening http://%s%s\n", lis.Addr(), u.Path)
	log.Fatal(http.Serve(lis, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		p.ServeHTTP(w, r)
	})))
}
