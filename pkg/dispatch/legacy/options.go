package legacy

// missing names the required options o lacks (New panics naming them: a
// dispatcher missing one would fail later, on a client's request).
func (o *Options) missing() []string {
	var out []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"Implementation", o.Implementation != nil},
		{"Logger", o.Logger != nil},
		{"EventStore", o.EventStore != nil},
		{"Codec", o.Codec != nil},
		{"ProgressGrace", o.ProgressGrace > 0},
		{"Core", o.Core != nil},
		{"Metrics", o.Metrics != nil},
	} {
		if !f.ok {
			out = append(out, f.name)
		}
	}
	return out
}
