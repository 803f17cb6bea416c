package integration

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
)

// everythingServer builds the go-sdk conformance everything-server and runs
// it in stateless mode on a free loopback port.
func everythingServer(t *testing.T) config.Backend {
	t.Helper()
	return everythingServerOn(t, freeLoopbackAddr)
}

// freeLoopbackAddr is a loopback address whose port the kernel just gave
// out and took back; another process may take it before it is bound.
func freeLoopbackAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// everythingServerOn is everythingServer with the address picker given: a
// port taken by another process before the server binds it is picked
// again (up to 5 times), and the server counts as up only once that very
// process listens on its port.
func everythingServerOn(t *testing.T, pick func(*testing.T) string) config.Backend {
	t.Helper()
	bin := buildEverythingServer(t)
	for range 5 {
		addr := pick(t)
		err := startEverythingServer(t, bin, addr)
		if err == nil {
			return config.Backend{Name: "everything", URL: "http://" + addr + "/mcp", Transport: config.TransportStreamableHTTP}
		}
		require.ErrorIs(t, err, errAddrTaken)
	}
	t.Fatal("the everything-server found its port taken 5 times")
	return config.Backend{}
}

func buildEverythingServer(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	bin := filepath.Join(t.TempDir(), "everything-server")
	goCmd, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		goCmd = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	build := exec.Command(goCmd, "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building the everything-server: %s", out)
	return bin
}

// errAddrTaken: the everything-server could not listen on its address.
var errAddrTaken = errors.New("address taken")

// startEverythingServer runs bin on addr until the test ends and waits
// until it listens there; errAddrTaken if it exits for want of the port.
func startEverythingServer(t *testing.T, bin, addr string) error {
	var out logBuffer
	srv := exec.Command(bin, "-http", addr, "-stateless=true")
	srv.Stdout, srv.Stderr = &out, &out
	require.NoError(t, srv.Start())
	exited := make(chan struct{})
	go func() { _ = srv.Wait(); close(exited) }()
	t.Cleanup(func() { _ = srv.Process.Kill(); <-exited })
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	deadline := time.Now().Add(stateWait)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			if strings.Contains(out.String(), "address already in use") {
				return fmt.Errorf("everything-server on %s: %w", addr, errAddrTaken)
			}
			return fmt.Errorf("everything-server on %s exited: %s", addr, out.String())
		default:
		}
		if listensOn(srv.Process.Pid, port) {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // between polls of a real condition
	}
	return fmt.Errorf("everything-server on %s did not listen within %s: %s", addr, stateWait, out.String())
}

// listensOn reports whether process pid holds a socket listening on TCP
// port (Linux: /proc/net/tcp's listening inodes against the process's
// descriptors).
func listensOn(pid, port int) bool {
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false
	}
	want := fmt.Sprintf(":%04X", port)
	inodes := map[string]bool{}
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && strings.HasSuffix(f[1], want) && f[3] == "0A" { // 0A: LISTEN
			inodes["socket:["+f[9]+"]"] = true
		}
	}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && inodes[link] {
			return true
		}
	}
	return false
}

// TestEverythingServerPortTakenBeforeItsBindFailedTheTest: the port picked
// for the everything-server was free when picked, but another process
// listened there before the server bound it; the server exited and the
// test took the other process for it. It now picks again.
func TestEverythingServerPortTakenBeforeItsBindFailedTheTest(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	go func() { // accepts and holds, as a stranger's server would
		for {
			c, err := taken.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	first := true
	pick := func(t *testing.T) string {
		if first {
			first = false
			return taken.Addr().String()
		}
		return freeLoopbackAddr(t)
	}
	be := everythingServerOn(t, pick)
	require.NotContains(t, be.URL, taken.Addr().String())
}
