package vmcp

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/status"
)

// Reload sources (status.Reload.Source).
const (
	ReloadSIGHUP = "SIGHUP"
	ReloadFile   = "file" // the config file changed (Watch)
	ReloadAPI    = "api"  // Server.Reload called directly
)

// Reload outcomes (status.Reload.Outcome and vmcp_config_reloads_total).
const (
	ReloadOK      = "ok"
	ReloadInvalid = "invalid" // rejected; the running config is kept
	ReloadPartial = "partial" // applied, but keys that cannot change live were left as they were
)

// recentReloads is how many reloads /status shows.
const recentReloads = 10

// defaultReloadWait bounds how long a reload waits for added backends'
// first connection attempts before swapping them in.
const defaultReloadWait = 10 * time.Second

// ReloadPath reads the config file at path (as vmcp serve does) and
// applies it with Reload; source labels it (ReloadSIGHUP, ReloadFile). A
// file that cannot be read or is invalid is rejected, its problems logged
// with file:line, and the running config kept (outcome invalid).
func (s *Server) ReloadPath(path, source string) status.Reload {
	f, err := config.Read(path)
	if err != nil {
		rec := status.Reload{Source: source, Outcome: ReloadInvalid, Errors: problems(err)}
		for _, p := range rec.Errors {
			s.log.Error("config reload rejected; the running config is kept", "problem", p)
		}
		return s.record(rec)
	}
	for _, w := range f.Warnings {
		s.log.Warn("config reload: " + w.String())
	}
	return s.Reload(f.Config, source)
}

// problems lists a config error's problems, one file:line each.
func problems(err error) []string {
	var ve *config.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	out := make([]string, 0, len(ve.Problems))
	for _, p := range ve.Problems {
		out = append(out, p.String())
	}
	return out
}

// Reload applies cfg (valid: as config.Parse returns it) without dropping
// client sessions: added backends connect, removed ones drain (calls in
// flight finish or reach the backend's timeout, then their backend
// sessions close), changed ones are replaced, and the catalogue is rebuilt
// once, so clients get one list_changed per kind that changed (both
// revisions). Backends, aggregation, security and rate_limits (new rules
// count from the next request, unchanged ones keep their budgets; listed
// in Applied when changed) change live; every other key that
// differs from the running config is logged and left as it was (outcome
// partial). Defaults and Options.Overrides are applied to a copy of cfg
// first.
func (s *Server) Reload(cfg *config.Config, source string) status.Reload {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	rec := status.Reload{Source: source, Outcome: ReloadOK}
	if s.closed {
		rec.Outcome, rec.Errors = ReloadInvalid, []string{"the server is closed"}
		return s.record(rec)
	}
	next := *cfg // defaults applied (idempotent), so unchanged backends compare equal
	next.Backends = slices.Clone(cfg.Backends)
	next.ApplyDefaults()
	cfg = &next
	if s.overrides != nil {
		s.overrides(cfg)
	}
	for _, key := range fixedKeys(s.cfg, cfg) {
		s.log.Warn("config reload: key cannot change while vmcp runs; left as it was (restart to apply)", "key", key)
		rec.Ignored = append(rec.Ignored, key+": cannot change while vmcp runs")
		rec.Outcome = ReloadPartial
	}
	cfg.ToolSearch, cfg.Authorization = s.cfg.ToolSearch, s.cfg.Authorization // fixed keys: the running tool search stays as it is
	// security before the backends: an added backend's tools meet the new mode
	s.applySecurity(cfg.Security)
	if s.applyRateLimits(cfg.RateLimits) {
		rec.Applied = append(rec.Applied, "rate_limits")
	}
	applied := s.mgr.Apply(cfg.Backends, policy(cfg), s.reloadWait)
	rec.Added, rec.Removed, rec.Changed = applied.Added, applied.Removed, applied.Changed
	s.pins.Forget(applied.Removed)
	s.log.Info("config reloaded", "source", source, "outcome", rec.Outcome,
		"added", applied.Added, "removed", applied.Removed, "changed", applied.Changed, "not_connected_yet", applied.Down)
	return s.record(rec)
}

// record counts rec, stamps it and keeps it among the recent reloads.
func (s *Server) record(rec status.Reload) status.Reload {
	rec.Time = time.Now().UTC()
	s.metrics.ConfigReloads.WithLabelValues(rec.Outcome).Inc()
	s.reloadsMu.Lock()
	s.reloads = append([]status.Reload{rec}, s.reloads...)
	if len(s.reloads) > recentReloads {
		s.reloads = s.reloads[:recentReloads]
	}
	s.reloadsMu.Unlock()
	return rec
}

// Reloads are the recent reloads, newest first.
func (s *Server) Reloads() []status.Reload {
	s.reloadsMu.Lock()
	defer s.reloadsMu.Unlock()
	return append([]status.Reload(nil), s.reloads...)
}

// liveKeys are the top-level config keys a reload applies.
var liveKeys = map[string]bool{"backends": true, "aggregation": true, "security": true, "rate_limits": true}

// fixedKeys names the top-level keys (other than liveKeys) whose values
// differ between the running config and next.
func fixedKeys(running, next *config.Config) []string {
	rv, nv := reflect.ValueOf(*running), reflect.ValueOf(*next)
	var out []string
	for i := range rv.NumField() {
		key, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("yaml"), ",")
		if key == "" || liveKeys[key] {
			continue
		}
		if !reflect.DeepEqual(rv.Field(i).Interface(), nv.Field(i).Interface()) {
			out = append(out, key)
		}
	}
	return out
}
