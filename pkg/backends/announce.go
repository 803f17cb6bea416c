package backends

import (
	"slices"
	"time"

	"github.com/vmcp/vmcp/pkg/aggregator"
)

// A backend's list_changed is passed on to clients even when the lists
// look the same (SEP-2575: a tool registered again unchanged). But a
// refresh running when the backend changed (one a stream's opening or
// reopening requested) finds the change by its difference and tells
// clients; the announcement, arriving during or just after that refresh,
// then forced the same notification again. An announcement is covered,
// and not forced, when a refresh found its kind changed no earlier than
// announceCover before the announcement arrived.

// announceCover is how long before an announcement's arrival a refresh
// that found its kind changed still covers it.
const announceCover = 2 * time.Second

// announcements are a backend's list_changed received since the last
// refresh and what the refreshes saw (all under Backend.mu).
type announcements struct {
	kinds []aggregator.Kind             // announced since the last refresh began
	at    map[aggregator.Kind]time.Time // when each kind was last announced
	diff  map[aggregator.Kind]time.Time // when a refresh last found each kind changed
	last  aggregator.Inventory          // the last listing
}

// announceChange records a notifications/<kind>/list_changed from the
// backend and requests a refresh that passes the kind on.
func (b *Backend) announceChange(method string) {
	k := map[string]aggregator.Kind{
		"notifications/tools/list_changed":     aggregator.KindTools,
		"notifications/prompts/list_changed":   aggregator.KindPrompts,
		"notifications/resources/list_changed": aggregator.KindResources,
	}[method]
	b.mu.Lock()
	if k != "" {
		if !slices.Contains(b.ann.kinds, k) {
			b.ann.kinds = append(b.ann.kinds, k)
		}
		if b.ann.at == nil {
			b.ann.at = map[aggregator.Kind]time.Time{}
		}
		b.ann.at[k] = time.Now()
	}
	b.mu.Unlock()
	b.requestRefresh()
}

// takeAnnounced returns and clears the kinds announced since the last call.
func (b *Backend) takeAnnounced() []aggregator.Kind {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.ann.kinds
	b.ann.kinds = nil
	return k
}

// listed records inv, a listing of the control connection, and returns
// the kinds of announced still to pass on: those no earlier refresh
// covered (see above). A first listing (none before) changes nothing.
func (b *Backend) listed(inv aggregator.Inventory, announced []aggregator.Kind, now time.Time) []aggregator.Kind {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := uncovered(announced, b.ann.at, b.ann.diff)
	if b.ann.last.Backend != "" {
		for _, k := range aggregator.ChangedKinds(b.ann.last, inv) {
			if b.ann.diff == nil {
				b.ann.diff = map[aggregator.Kind]time.Time{}
			}
			b.ann.diff[k] = now
		}
	}
	b.ann.last = inv
	return out
}

// uncovered are the kinds of announced whose announcement (at) came more
// than announceCover after a refresh last found that kind changed (diff).
func uncovered(announced []aggregator.Kind, at, diff map[aggregator.Kind]time.Time) []aggregator.Kind {
	var out []aggregator.Kind
	for _, k := range announced {
		if d, ok := diff[k]; ok && !at[k].Before(d.Add(-announceCover)) && at[k].Sub(d) <= announceCover {
			continue
		}
		out = append(out, k)
	}
	return out
}
