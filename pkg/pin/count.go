package pin

// count adds one to the backend's outcome in vmcp_tool_changes_total.
func (p *Pins) count(backend, outcome string) {
	if p.opts.Counter != nil {
		p.opts.Counter.WithLabelValues(backend, outcome).Inc()
	}
}

// warn logs at most 10 lines at once and one a second after that.
func (p *Pins) warn(msg string, k key, attrs ...any) {
	if p.logs.Allow() {
		head := []any{"backend", k.backend, "tool", k.tool}
		if k.owner != "" {
			head = append(head, "principal", k.owner)
		}
		p.opts.Log.Warn("pin: "+msg, append(head, attrs...)...)
	}
}
