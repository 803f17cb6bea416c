package lintcheck

import "testing"

// wirePkg is the fixtures' pkg/wire: its revision constants.
const wirePkg = `package wire

// FirstModern is the first Modern revision.
const FirstModern = "2026-07-28"

// IsModern reports whether v is Modern.
func IsModern(v string) bool { return v >= FirstModern }
`

func TestWireVersionFiresOnLiteralsAndComparisons(t *testing.T) {
	src := `package p

import (
	"example.com/m/pkg/wire"
	w2 "example.com/m/pkg/wire"
)

const mine = "2025-11-25"

const alias = wire.FirstModern

var versions = []string{"2025-06-18"}

// F is a fixture.
func F(v string) bool {
	return v >= "2026-07-28" || v < wire.FirstModern || alias == v || mine != v || v > w2.FirstModern
}
`
	got := check(t, map[string]string{"pkg/wire/wire.go": wirePkg, "pkg/p/p.go": src})
	assertLines(t, only("wire-version", got),
		`pkg/p/p.go:8: wire-version: protocol revision literal "2025-11-25" outside pkg/wire: use wire's constants and wire.IsModern`,
		`pkg/p/p.go:12: wire-version: protocol revision literal "2025-06-18" outside pkg/wire: use wire's constants and wire.IsModern`,
		`pkg/p/p.go:16: wire-version: comparison with protocol revision FirstModern outside pkg/wire: use wire.IsModern`,
		`pkg/p/p.go:16: wire-version: comparison with protocol revision FirstModern outside pkg/wire: use wire.IsModern`,
		`pkg/p/p.go:16: wire-version: comparison with protocol revision alias outside pkg/wire: use wire.IsModern`,
		`pkg/p/p.go:16: wire-version: comparison with protocol revision mine outside pkg/wire: use wire.IsModern`,
		`pkg/p/p.go:16: wire-version: protocol revision literal "2026-07-28" outside pkg/wire: use wire's constants and wire.IsModern`)
}

func TestWireVersionQuietOnProseUsesAndExemptFiles(t *testing.T) {
	src := `package p

import (
	"fmt"
	"time"

	"example.com/m/pkg/wire"
)

// F is a fixture.
func F(v string) (bool, string, error) {
	h := map[string]string{"MCP-Protocol-Version": wire.FirstModern} // use, not comparison
	_ = time.Now().Format("2006-01-02")
	_ = h
	return wire.IsModern(v), "1.0", fmt.Errorf("not deliverable on a 2026-07-28 request stream")
}
`
	lit := "package p\n\nvar v = \"2026-07-28\"\n\nfunc f(s string) bool { return s == v }\n"
	got := check(t, map[string]string{
		"pkg/wire/wire.go":         wirePkg,
		"pkg/p/p.go":               src,
		"pkg/p/p_test.go":          lit,
		"test/harness/h.go":        lit,
		"internal/lintcheck/x.go":  lit,
		"pkg/wire/versions_sub.go": lit,
	})
	assertLines(t, only("wire-version", got))
}

func TestWireEnvelopeFiresOnHandBuiltMessages(t *testing.T) {
	src := "package p\n\n" +
		"type msg struct {\n\tJSONRPC string `json:\"jsonrpc\"`\n}\n\n" +
		"var a = `{\"jsonrpc\":\"2.0\",\"id\":1}`\n\n" +
		"var b = []byte(`{\"jsonrpc\": \"2.0\", \"method\":\"x\"}`)\n\n" +
		"var c = map[string]any{\"jsonrpc\": \"2.0\", \"version\": \"2.0\"}\n\n" +
		"func f(m msg) bool { return m.JSONRPC != \"2.0\" }\n\n" +
		"func g(version string) bool { return version == \"2.0\" }\n"
	assertLines(t, only("wire-envelope", check(t, map[string]string{"pkg/p/p.go": src, "pkg/p/p_test.go": src})),
		"pkg/p/p.go:7: wire-envelope: JSON-RPC envelope literal outside pkg/wire: build messages with pkg/wire",
		"pkg/p/p.go:9: wire-envelope: JSON-RPC envelope literal outside pkg/wire: build messages with pkg/wire",
		`pkg/p/p.go:11: wire-envelope: JSON-RPC envelope key "jsonrpc" outside pkg/wire: build messages with pkg/wire`,
		`pkg/p/p.go:13: wire-envelope: JSON-RPC version check jsonrpc == "2.0" outside pkg/wire: decode messages with pkg/wire`)
}

func TestWireSSEFiresOnFramingAndTheMediaType(t *testing.T) {
	src := `package p

import "bytes"

var head = "event: message\nid: _"

var tail = "x\ndata: y"

// F is a fixture.
func F(line []byte, ct string) ([]byte, bool) {
	d, _ := bytes.CutPrefix(line, []byte("data:"))
	_ = []byte("retry: 5")
	_ = "metadata: x, identity: y, data without colon"
	return d, ct == "text/event-stream"
}
`
	assertLines(t, only("wire-sse", check(t, map[string]string{"pkg/p/p.go": src, "pkg/p/p_test.go": src})),
		`pkg/p/p.go:5: wire-sse: SSE framing "event:" outside pkg/wire: read and write SSE with pkg/wire`,
		`pkg/p/p.go:7: wire-sse: SSE framing "data:" outside pkg/wire: read and write SSE with pkg/wire`,
		`pkg/p/p.go:11: wire-sse: SSE framing "data:" outside pkg/wire: read and write SSE with pkg/wire`,
		`pkg/p/p.go:12: wire-sse: SSE framing "retry:" outside pkg/wire: read and write SSE with pkg/wire`,
		`pkg/p/p.go:14: wire-sse: SSE framing "text/event-stream" outside pkg/wire: read and write SSE with pkg/wire`)
}
