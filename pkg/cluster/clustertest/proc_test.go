package clustertest

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A redis-server whose port another process took between its pick and the
// bind exits at once; the start waited for PING on that port, so it
// either took the other process for the new one or waited a minute (a
// cluster node that "did not answer" in 1 of 11 runs). Now it reports the
// port taken as soon as the process exits, and launch picks another.
func TestServerOnATakenPortPassedForTheProcessThere(t *testing.T) {
	t.Parallel()
	other := startProc(t)
	_, err := spawn(exec.Command("redis-server", "--port", other.Addr[len("127.0.0.1:"):], "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir()), redis.Options{Addr: other.Addr})
	if !errors.Is(err, errPortTaken) {
		t.Fatalf("spawn on a taken port: %v, want errPortTaken", err)
	}
}
