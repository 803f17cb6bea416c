package subscriptions

// Updated queues notifications/resources/updated for uri on this stream
// alone (bounded and coalesced like every update): for a subscription the
// stream holds itself rather than through the registry (a per-principal
// backend's, never shared with another principal's stream).
func (s *Stream) Updated(uri string) { s.queueUpdate(uri) }
