package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// decodeSeeds are messages of every shape the dispatchers see, and the
// shapes Decode leaves to json.Unmarshal.
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p"}}}`,
	`{"jsonrpc":"2.0","id":"a\"b","result":{"content":[{"type":"text","text":"}]\\"}]}}`,
	` { "jsonrpc" : "2.0" , "id" : null , "error" : {"code":-32601,"message":"no"} } `,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":null}`,
	`{"jsonrpc":"2.0","method":"a","method":null,"id":1,"id":2}`,
	`{"JSONRPC":"2.0","Method":"x"}`,
	`{"jsonrpc":"2.0","\u006dethod":"x"}`,
	`{"jsonrpc":"2.0","method":"tools\/call"}`,
	`{"jsonrpc":"2.0","method":"caf` + "\xc3\xa9" + `"}`,
	`{"jsonrpc":"2.0","method":"bad` + "\xff" + `"}`,
	`{"jsonrpc":2,"method":"x"}`,
	`{"jsonrpc":"2.0","method":["x"]}`,
	`{"jsonrpc":"2.0","ID":7,"other":{"id":8}}`,
	`{}`, `[]`, `null`, `"x"`, `{"a":}`, `{"a":1,}`, `{"a":1} x`, ``, `{"method":"x"`,
}

// TestDecodeMatchesUnmarshal: Decode is json.Unmarshal for every seed.
func TestDecodeMatchesUnmarshal(t *testing.T) {
	for _, s := range decodeSeeds {
		if msg := decodeDiff([]byte(s)); msg != "" {
			t.Errorf("%q: %s", s, msg)
		}
	}
}

// FuzzDecodeMatchesUnmarshal: on any input, Decode and json.Unmarshal
// agree on the error and on every member.
func FuzzDecodeMatchesUnmarshal(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if msg := decodeDiff(b); msg != "" {
			t.Fatalf("%q: %s", b, msg)
		}
	})
}

// FuzzDecodeObjectMatchesUnmarshal: on any input, DecodeObject and
// json.Unmarshal into a map[string]json.RawMessage agree.
func FuzzDecodeObjectMatchesUnmarshal(f *testing.F) {
	for _, s := range append(decodeSeeds, `{"a":1,"a":2,"\u0062":[3],"caf\u00e9":{}, "x\ud800":null}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gerr := DecodeObject(b)
		var want map[string]json.RawMessage
		werr := json.Unmarshal(b, &want)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || (got == nil) != (want == nil) || len(got) != len(want) {
			t.Fatalf("%q: DecodeObject %q %v, json.Unmarshal %q %v", b, got, gerr, want, werr)
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || !bytes.Equal(g, v) {
				t.Fatalf("%q: member %q: DecodeObject %q, json.Unmarshal %q", b, k, g, v)
			}
		}
	})
}

// decodeDiff describes how Decode and json.Unmarshal disagree on b ("" if
// they do not).
func decodeDiff(b []byte) string {
	var got, want Message
	gerr, werr := Decode(b, &got), json.Unmarshal(b, &want)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		return fmt.Sprintf("Decode error %v, json.Unmarshal error %v", gerr, werr)
	}
	if got.JSONRPC != want.JSONRPC || got.Method != want.Method {
		return fmt.Sprintf("Decode %q %q, json.Unmarshal %q %q", got.JSONRPC, got.Method, want.JSONRPC, want.Method)
	}
	for _, f := range []struct {
		name      string
		got, want json.RawMessage
	}{{"id", got.ID, want.ID}, {"params", got.Params, want.Params}, {"result", got.Result, want.Result}, {"error", got.Error, want.Error}} {
		if !bytes.Equal(f.got, f.want) || (f.got == nil) != (f.want == nil) {
			return fmt.Sprintf("%s: Decode %q, json.Unmarshal %q", f.name, f.got, f.want)
		}
	}
	return ""
}

// BenchmarkDecode compares Decode with json.Unmarshal on a tools/call.
func BenchmarkDecode(b *testing.B) {
	msg := []byte(decodeSeeds[0])
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m Message
			_ = Decode(msg, &m)
		}
	})
	b.Run("Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m Message
			_ = json.Unmarshal(msg, &m)
		}
	})
}

// TestDecodeAllocatedLikeUnmarshal pins the point of Decode: a tools/call
// envelope costs one allocation (its method; two with -race), where
// json.Unmarshal made eleven (reflection and a copy of each raw member).
func TestDecodeAllocatedLikeUnmarshal(t *testing.T) {
	msg := []byte(decodeSeeds[0])
	var m Message
	limit := 1.0
	if raceDetector {
		limit = 2
	}
	if n := testing.AllocsPerRun(100, func() { m = Message{}; _ = Decode(msg, &m) }); n > limit {
		t.Fatalf("Decode allocated %.0f times per tools/call envelope, want at most %.0f", n, limit)
	}
}
