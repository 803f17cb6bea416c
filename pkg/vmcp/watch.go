package vmcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchDebounce is how long Watch waits after the last change of the
// config file before reloading it (an editor's save is several events).
const watchDebounce = 200 * time.Millisecond

// Watch reloads the config file at path (ReloadPath) when it changes and on
// every signal received from signals (nil: none; vmcp serve passes
// SIGHUP), until ctx ends or the server closes. It watches path's
// directory, so an editor's write to a temporary file renamed over path is
// seen (and a Kubernetes ConfigMap's ..data swap); changes are debounced.
// It returns once the watch is set up.
func (s *Server) Watch(ctx context.Context, path string, signals <-chan os.Signal) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching the config file: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		s.op.config.Store(&abs)
		err = w.Add(filepath.Dir(abs))
	}
	if err != nil {
		_ = w.Close()
		return fmt.Errorf("watching the config file %s: %w", path, err)
	}
	s.watchers.Add(1)
	go func() { // ends with ctx or Close
		defer s.watchers.Done()
		defer w.Close()
		s.watch(ctx, w, path, abs, signals)
	}()
	return nil
}

// watch is Watch's loop: abs is path made absolute (fsnotify's names).
func (s *Server) watch(ctx context.Context, w *fsnotify.Watcher, path, abs string, signals <-chan os.Signal) {
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		case <-signals:
			if err := s.ReopenAudit(); err != nil { // log rotation
				s.log.Warn("audit log: reopening on SIGHUP", "error", err)
			}
			s.ReloadPath(path, ReloadSIGHUP)
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if concerns(ev, abs) {
				debounce.Reset(watchDebounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.log.Warn("watching the config file", "file", path, "error", err)
		case <-debounce.C:
			s.ReloadPath(path, ReloadFile)
		}
	}
}

// concerns reports whether ev may have changed the file at abs: any event
// but a permission change on it, or on a ConfigMap's ..data link.
func concerns(ev fsnotify.Event, abs string) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	return filepath.Clean(ev.Name) == abs || filepath.Base(ev.Name) == "..data"
}
