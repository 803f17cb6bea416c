package cluster

// keyspace names every Redis key vmcp writes, under prefix:
//
//	node:ID      -> the node's URL (TTL NodeTTL): node ID's liveness
//	nodes        -> set of node IDs ever announced (pruned lazily)
//	sess:SESSION -> ownerValue(owner ID, principal) (TTL SessionTTL)
//	ev:SESSION   -> the session's event stream (Redis Stream; TTL SessionTTL)
//
// On a Redis Cluster (tagged) the ID part is a hash tag, node:{ID},
// sess:{SESSION}, ev:{SESSION}: a session's two keys share one slot, so
// anything that ever touches both runs on one shard, and sessions spread
// over every primary by session ID. No command, transaction or script
// touches two sessions or a session and a node together there (Lookup
// reads the owner's node record in a second GET; pipelines are not
// atomic and go-redis splits them by slot). On one Redis (a URL or a
// Sentinel-managed primary) keys are untagged, exactly as before Redis
// Cluster support, so nodes of both versions share one Redis during a
// rolling upgrade. A prefix with its own hash tag ({prod}:vmcp:) puts
// every key in that one slot (allowed, but nothing is sharded).
type keyspace struct {
	prefix string
	tagged bool
}

func (k keyspace) id(kind, id string) string {
	if k.tagged {
		return k.prefix + kind + ":{" + id + "}"
	}
	return k.prefix + kind + ":" + id
}

func (k keyspace) node(id string) string   { return k.id("node", id) }
func (k keyspace) sess(id string) string   { return k.id("sess", id) }
func (k keyspace) events(id string) string { return k.id("ev", id) }
func (k keyspace) nodes() string           { return k.prefix + "nodes" }

// Keys names the Redis keys of a cluster under prefix, as its nodes write
// them on r's topology (for tests and tools that inspect Redis).
type Keys struct{ k keyspace }

// KeysFor returns the key names used with prefix (Options.KeyPrefix) on r.
func KeysFor(r Redis, prefix string) Keys {
	return Keys{keyspace{prefix: prefix, tagged: r.Sharded()}}
}

// Node is node id's liveness record (its URL, with a TTL).
func (k Keys) Node(id string) string { return k.k.node(id) }

// Session is session id's ownership record.
func (k Keys) Session(id string) string { return k.k.sess(id) }

// Events is session id's event stream (for Last-Event-ID replay).
func (k Keys) Events(id string) string { return k.k.events(id) }
