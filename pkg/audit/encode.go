package audit

import (
	"strconv"

	"github.com/vmcp/vmcp/pkg/wire"
)

// appendLine appends r as one JSON line: what json.Marshal of line gives
// (same members, order and escaping), without reflection. Arguments must
// already be valid JSON (redacted and capped).
func appendLine(b []byte, r *Record) []byte {
	b = append(b, `{"time":`...)
	b = append(append(append(b, '"'), r.Time.UTC().Format(TimeFormat)...), '"')
	b = str(b, "node", r.Node, false)
	b = append(b, `,"principal":`...)
	if r.Principal == (Principal{}) {
		b = append(b, `"anonymous"`...)
	} else {
		b = wire.AppendString(append(b, `{"iss":`...), r.Principal.Issuer)
		b = append(wire.AppendString(append(b, `,"sub":`...), r.Principal.Subject), '}')
	}
	if r.Client != nil {
		b = wire.AppendString(append(b, `,"client":{"name":`...), r.Client.Name)
		b = append(wire.AppendString(append(b, `,"version":`...), r.Client.Version), '}')
	}
	b = str(b, "revision", r.Revision, false)
	b = str(b, "session", r.Session, true)
	b = str(b, "listen", r.Listen, true)
	b = str(b, "http", r.HTTP, false)
	for _, f := range [...]struct{ k, v string }{{"method", r.Method}, {"tool", r.Tool}, {"prompt", r.Prompt}, {"resource", r.Resource}, {"backend", r.Backend}} {
		b = str(b, f.k, f.v, true)
	}
	if r.Forwarded {
		b = append(b, `,"forwarded":true`...)
	}
	b = appendDecision(append(b, `,"decision":`...), r.Decision)
	b = appendOutcome(append(b, `,"outcome":`...), r.Outcome)
	b = strconv.AppendInt(append(b, `,"status":`...), int64(r.Status), 10)
	b = strconv.AppendInt(append(b, `,"bytes_in":`...), r.BytesIn, 10)
	b = strconv.AppendInt(append(b, `,"bytes_out":`...), r.BytesOut, 10)
	b = str(b, "traceparent", r.Traceparent, true)
	if len(r.Arguments) > 0 {
		b = append(append(b, `,"arguments":`...), r.Arguments...)
	}
	if r.Truncated {
		b = append(b, `,"arguments_truncated":true`...)
	}
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendFloat(b, float64(r.Duration.Microseconds())/1000, 'f', -1, 64)
	return append(b, '}', '\n')
}

// str appends ,"k":v (nothing for an empty v with omitEmpty).
func str(b []byte, k, v string, omitEmpty bool) []byte {
	if omitEmpty && v == "" {
		return b
	}
	return wire.AppendString(append(append(append(b, `,"`...), k...), `":`...), v)
}

func appendDecision(b []byte, d Decision) []byte {
	b = strconv.AppendBool(append(b, `{"allowed":`...), !d.Denied)
	if d.By != "" {
		b = wire.AppendString(append(b, `,"by":`...), d.By)
	}
	if d.Rule != nil {
		b = strconv.AppendInt(append(b, `,"rule":`...), int64(*d.Rule), 10)
	}
	return append(b, '}')
}

func appendOutcome(b []byte, o Outcome) []byte {
	switch {
	case o.Cancelled:
		return append(b, `"cancelled"`...)
	case o.Code == 0:
		return append(b, `"ok"`...)
	}
	return strconv.AppendInt(b, o.Code, 10)
}
