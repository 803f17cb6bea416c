package legacy

// ClientInfo is the name and version the client of session id gave in its
// initialize (MCP clientInfo); ok is false for a session not live here.
func (d *Dispatcher) ClientInfo(id string) (name, version string, ok bool) {
	s := d.lookup(id)
	if s == nil {
		return "", "", false
	}
	p := s.front.InitializeParams()
	if p == nil || p.ClientInfo == nil {
		return "", "", true
	}
	return p.ClientInfo.Name, p.ClientInfo.Version, true
}
