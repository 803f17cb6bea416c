package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proc is a child process.
type proc struct {
	cmd       *exec.Cmd
	pprofAddr string // vmcp only
	stderr    *tail
	config    string // vmcp's configuration file
	head      string // its first lines (listen, path, name), before the body
}

func (p *proc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// clockTick is USER_HZ (getconf CLK_TCK), 100 on Linux.
var clockTick = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || v <= 0 {
		return 100
	}
	return v
}()

// cpu returns the process's user+system CPU time in seconds.
func (p *proc) cpu() float64 {
	if p == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name: state is field 3,
	// utime 14, stime 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clockTick
}

// peakRSS is the process's peak resident set (VmHWM) in MiB.
func (p *proc) peakRSS() float64 { return p.statusKB("VmHWM:") / 1024 }

// statusKB is one kB field of /proc/PID/status (VmRSS:, VmHWM:), 0 if
// unreadable.
func (p *proc) statusKB(field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb
		}
	}
	return 0
}

type memstats struct {
	Mallocs    uint64
	TotalAlloc uint64
	NumGC      uint32
}

// memstats reads vmcp's runtime.MemStats from /debug/vars.
func (p *proc) memstats() memstats {
	var v struct {
		Memstats memstats `json:"memstats"`
	}
	if p == nil || p.pprofAddr == "" {
		return v.Memstats
	}
	resp, err := http.Get("http://" + p.pprofAddr + "/debug/vars")
	if err != nil {
		return v.Memstats
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return v.Memstats
}

// startProfile starts a CPU profile of vmcp covering the next run; the
// returned func waits for it and saves it with an allocation profile.
func (p *proc) startProfile(tag string) func() error {
	return p.startProfileFor(tag, int(2*durN.Seconds()))
}

// startProfileFor is startProfile over the next secs seconds (at least 1).
func (p *proc) startProfileFor(tag string, secs int) func() error {
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	if secs < 1 {
		secs = 1
	}
	go func() {
		b, err := get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.pprofAddr, secs))
		ch <- res{b, err}
	}()
	return func() error {
		r := <-ch
		if r.err != nil {
			return r.err
		}
		if err := os.MkdirAll(*profileDir, 0o755); err != nil {
			return err
		}
		cpuFile := filepath.Join(*profileDir, "vmcp-"+tag+".cpu.pprof")
		if err := os.WriteFile(cpuFile, r.b, 0o644); err != nil {
			return err
		}
		b, err := get("http://" + p.pprofAddr + "/debug/pprof/allocs")
		if err != nil {
			return err
		}
		allocFile := filepath.Join(*profileDir, "vmcp-"+tag+".allocs.pprof")
		fmt.Printf("  profiles: %s %s\n", cpuFile, allocFile)
		return os.WriteFile(allocFile, b, 0o644)
	}
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// startListening starts bin with args and waits for its "listening URL"
// line on stdout.
func startListening(bin string, args, env []string) (*proc, string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	p := &proc{cmd: cmd, stderr: &tail{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				lines <- u
			}
		}
	}()
	select {
	case u := <-lines:
		return p, u, nil
	case <-time.After(10 * time.Second):
		p.stop()
		return nil, "", fmt.Errorf("%s did not start: %s", bin, p.stderr)
	}
}

// startVMCP writes a config fronting backendURL (priority strategy: tool
// names stay bare; extra is appended, top-level YAML) and starts vmcp
// serve with --pprof, waiting for /readyz.
func startVMCP(tmp, backendURL, extra string) (*proc, string, error) {
	return startVMCPConfig(tmp, fmt.Sprintf(`backends:
  - name: echo
    url: %s
aggregation:
  conflict_resolution: priority
  priority: [echo]
pagination:
  page_size: %d
%s`, backendURL, *pageSize, extra))
}

// startVMCPConfig starts vmcp serve with --pprof on a config of body
// (top-level YAML: backends, aggregation, ...) after its listen, path and
// name, waiting for /readyz.
func startVMCPConfig(tmp, body string) (*proc, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	pprofAddr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	cfg := fmt.Sprintf("listen: %s\npath: /mcp\nname: vmcp-bench\n%s", addr, body)
	path := filepath.Join(tmp, "vmcp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36)+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, "", err
	}
	cmd := exec.Command(*vmcpBin, "serve", "--config", path, "--pprof", pprofAddr)
	cmd.Env = os.Environ()
	if *vmcpEnv != "" {
		cmd.Env = append(cmd.Env, strings.Split(*vmcpEnv, ",")...)
	}
	p := &proc{cmd: cmd, pprofAddr: pprofAddr, stderr: &tail{}, config: path, head: cfg[:len(cfg)-len(body)]}
	cmd.Stdout, cmd.Stderr = p.stderr, p.stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, base + "/mcp", nil
			}
		}
	}
	p.stop()
	return nil, "", errors.New("vmcp not ready within 15s: " + p.stderr.String())
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// tail keeps the last 4 KiB written (a child's stderr, for errors).
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
