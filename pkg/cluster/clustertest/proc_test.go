package clustertest

import (
	"errors"
	"net"
	"os/exec"
	"testing"
	"time"

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

// takenThenFree returns a picker whose first address is one a listener of
// the test holds, then free ones: a port another process took between its
// pick and redis-server's bind.
func takenThenFree(t *testing.T) (pick func() (string, error), taken string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	first := true
	return func() (string, error) {
		if first {
			first = false
			return l.Addr().String(), nil
		}
		return pickAddr()
	}, l.Addr().String()
}

// CI failed once with "sentinel: redis-server on 127.0.0.1:24736: port
// taken": the three sentinels' ports are picked before any starts, and one
// was taken in between. Now the three are picked again.
func TestSentinelPortTakenBeforeItsBindFailedTheSet(t *testing.T) {
	t.Parallel()
	s := &Sentinels{t: t, Primary: startProc(t), Replica: startProc(t)}
	pick, taken := takenThenFree(t)
	s.startSentinels(pick)
	if len(s.sentinels) != 3 {
		t.Fatalf("%d sentinels started, want 3", len(s.sentinels))
	}
	for _, p := range s.sentinels {
		if p.Addr == taken {
			t.Fatalf("a sentinel counted as started on the taken port %s", taken)
		}
	}
}

// A private server whose port was taken before its bind pinged whatever
// listened there (another test's Redis passed for its own) or gave up
// after 50 tries; now it picks another port.
func TestPrivateServerPortTakenBeforeItsBindFailedTheTest(t *testing.T) {
	t.Parallel()
	pick, taken := takenThenFree(t)
	s := startServer(t, pick)
	if s.Addr == taken {
		t.Fatalf("the server counted as started on the taken port %s", taken)
	}
	if err := ping(s.Addr, 5*time.Second); err != nil {
		t.Fatalf("the server does not answer: %v", err)
	}
}
