package backends

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/vmcp/vmcp/pkg/aggregator"
)

// TestAnnouncementCoveredByARefreshWasForcedAgain: an announcement that
// arrived while (or just after) a refresh found its kind changed is
// covered and not forced; one long after such a refresh, or of a kind no
// refresh found changed (a tool registered again unchanged), still is.
func TestAnnouncementCoveredByARefreshWasForcedAgain(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	tools, prompts := aggregator.KindTools, aggregator.KindPrompts
	diff := map[aggregator.Kind]time.Time{tools: t0}
	for _, c := range []struct {
		name string
		at   time.Time
		want []aggregator.Kind
	}{
		{"during the refresh", t0.Add(-time.Millisecond), nil},
		{"just after it", t0.Add(50 * time.Millisecond), nil},
		{"long after it", t0.Add(time.Minute), []aggregator.Kind{tools}},
		{"long before it", t0.Add(-time.Minute), []aggregator.Kind{tools}},
	} {
		at := map[aggregator.Kind]time.Time{tools: c.at, prompts: c.at}
		assert.Equal(t, c.want, uncovered([]aggregator.Kind{tools}, at, diff), c.name)
		assert.Equal(t, []aggregator.Kind{prompts}, uncovered([]aggregator.Kind{prompts}, at, diff), "%s: a kind no refresh found changed", c.name)
	}
}
