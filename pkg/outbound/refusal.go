package outbound

import (
	"crypto/sha256"
	"sync"
	"time"
)

// A token endpoint that refuses a principal's exchange (invalid_grant,
// access_denied, ...) will refuse the same subject token again: without a
// memory of it, every request of that principal re-asked the endpoint.
// A refusal is kept per cache key (principal) with the digest of the
// subject token it refused, for refusalTTL: the principal's requests with
// that token fail at once with the same *Error (counted as
// OutcomeRefusedCached); a new subject token (the client re-authenticated)
// or the end of the window asks again. Only OAuth refusals are kept, not
// failures to reach the endpoint.

// refusalTTL is how long a refusal is answered from memory.
const refusalTTL = 10 * time.Second

// refusals holds recent refusals by key; at most max entries (a full set
// first drops expired entries, then arbitrary ones).
type refusals struct {
	max int

	mu      sync.Mutex
	entries map[string]refusal
}

type refusal struct {
	subject [sha256.Size]byte // digest of the refused subject token
	err     *Error
	until   time.Time
}

func newRefusals(max int) *refusals { return &refusals{max: max, entries: map[string]refusal{}} }

// get is the refusal kept for key and subject at now (nil: none). The
// subject is digested only when key has an entry.
func (r *refusals) get(key, subject string, now time.Time) *Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[key]
	if !ok {
		return nil
	}
	if !now.Before(e.until) {
		delete(r.entries, key)
		return nil
	}
	if e.subject != sha256.Sum256([]byte(subject)) {
		return nil
	}
	return e.err
}

// put keeps err, the refusal of subject for key, until now+refusalTTL.
func (r *refusals) put(key, subject string, err *Error, now time.Time) {
	sum := sha256.Sum256([]byte(subject))
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[key]; !ok && len(r.entries) >= r.max {
		r.evict(now)
	}
	r.entries[key] = refusal{subject: sum, err: err, until: now.Add(refusalTTL)}
}

// evict makes room for one entry (under mu): expired ones go first; if
// none was, one arbitrary entry goes.
func (r *refusals) evict(now time.Time) {
	n := len(r.entries)
	for k, e := range r.entries {
		if !now.Before(e.until) {
			delete(r.entries, k)
		}
	}
	if len(r.entries) < n {
		return
	}
	for k := range r.entries {
		delete(r.entries, k)
		return
	}
}

// forget drops key's refusal (a token was issued for it since).
func (r *refusals) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, key)
}
