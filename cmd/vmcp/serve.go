package main

import (
	"context"
	"errors"
	_ "expvar" // /debug/vars (memstats) on the --pprof listener
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // /debug/pprof on the --pprof listener
	"os"
	"os/signal"
	"syscall"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/edge"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

func serveCommand() *command {
	var path, listen, pprofAddr string
	return &command{
		name:    "serve",
		summary: "serve the MCP endpoint in front of the configured backends",
		usage:   "serve --config FILE [--listen HOST:PORT] [--pprof HOST:PORT]",
		details: `
Reads FILE (vmcp's YAML, or a Claude Desktop / Cursor / VS Code MCP server
list, recognised by content), connects the backends, and serves one MCP
Streamable HTTP endpoint (both protocol revisions) plus /healthz, /readyz,
/status and /metrics (or /metrics on http.metrics_listen) until SIGINT or SIGTERM, then shuts down gracefully.
On SIGHUP, and when FILE changes, it reloads FILE without dropping sessions:
backends added, removed (drained) or replaced and the aggregation applied; an
invalid FILE is rejected (file:line logged) and the running config kept; other
changed keys (listen, cluster, auth, ...) are logged and left as they were
(README, "Live reload"). Servers renamed
to valid backend names, ${VAR}s not set in the environment (they expand to
"") and stdio commands not found are logged as warnings at start, and each
launcher backend (npx, uvx, docker run, ...) with the default isolation
once, at info; any other problem in FILE is printed with file:line, with
every warning found in the same pass, and vmcp exits 1. Traces go over
OTLP when telemetry.tracing.enabled is true or OTEL_TRACES_EXPORTER=otlp
(the standard OTEL_EXPORTER_OTLP_* variables apply; README, "Telemetry").`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&path, "config", "", "configuration `FILE` (required)")
			fs.StringVar(&listen, "listen", "", "`HOST:PORT` to listen on (overrides the config's listen)")
			fs.StringVar(&pprofAddr, "pprof", "", "opt-in `HOST:PORT` serving /debug/pprof and /debug/vars (profiling; keep it on loopback)")
		},
		run: func(fs *flag.FlagSet, stdout, stderr io.Writer) int {
			f, code := load("serve", fs, path, stderr)
			if f == nil {
				return code
			}
			cfg := f.Config
			if listen != "" {
				cfg.Listen = listen
			}
			if pprofAddr != "" {
				// net/http/pprof and expvar register on http.DefaultServeMux,
				// which only this listener serves (vmcp's endpoint has its own mux).
				dbg := edge.NewServer(http.DefaultServeMux, edge.Timeouts{ReadHeader: cfg.HTTP.ReadHeaderTimeout.D(), Idle: cfg.HTTP.IdleTimeout.D()}, nil)
				dbg.Addr = pprofAddr
				go func() {
					if err := dbg.ListenAndServe(); err != nil {
						fmt.Fprintln(stderr, "vmcp: pprof listener:", err)
					}
				}()
			}
			return serve(f, listen, stderr)
		},
	}
}

// load reads the config named by --config (or the one argument); it prints
// every problem with file:line and returns the exit code when it fails.
func load(name string, fs *flag.FlagSet, path string, stderr io.Writer) (*config.File, int) {
	if path == "" && fs.NArg() == 1 {
		path = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "vmcp %s: unexpected argument %q\n", name, fs.Arg(0))
		return nil, 2
	}
	if path == "" {
		fmt.Fprintf(stderr, "vmcp %s: --config is required\nRun 'vmcp help %s' for more.\n", name, name)
		return nil, 2
	}
	f, err := config.Read(path)
	if err != nil {
		printError(stderr, err)
		return nil, 1
	}
	return f, 0
}

// printError prints a config error: each problem found in the pass
// (errors, then labelled warnings and notes, by line) on its own line.
func printError(w io.Writer, err error) {
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.All() {
			fmt.Fprintln(w, p.Labelled())
		}
		return
	}
	fmt.Fprintln(w, "vmcp:", err)
}

// logFile logs how f was read: its format, each renamed or skipped server,
// each warning, and each note (once per launcher backend, at info).
func logFile(log *slog.Logger, f *config.File) {
	if f.Format != config.FormatVMCP {
		log.Info("config read as "+f.Format.String(), "file", f.Name, "backends", len(f.Config.Backends))
	}
	for _, r := range f.Renames {
		log.Info("server renamed to a valid backend name", "server", r.From, "backend", r.To, "file", f.Name, "line", r.Line)
	}
	for _, s := range f.Skipped {
		log.Info("disabled server left out", "server", s, "file", f.Name)
	}
	for _, w := range f.Warnings {
		log.Warn(w.String())
	}
	for _, n := range f.Notes {
		log.Info(n.String())
	}
}

func serve(f *config.File, listen string, stderr io.Writer) int {
	cfg := f.Config
	h := slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})
	logFile(slog.New(h), f)
	log := logr.FromSlogHandler(h)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	setMemoryLimit(slog.New(h), memlimit.FromCgroup)
	bulk := startGCTuner(ctx, slog.New(h))
	lis, err := net.Listen("tcp", cfg.Listen) // before New: a busy port fails before backends start
	if err != nil {
		fmt.Fprintln(stderr, "vmcp:", err)
		return 1
	}
	var metrics net.Listener // http.metrics_listen, bound before New too
	if cfg.HTTP.MetricsListen != "" {
		if metrics, err = net.Listen("tcp", cfg.HTTP.MetricsListen); err != nil {
			lis.Close()
			fmt.Fprintln(stderr, "vmcp: http.metrics_listen:", err)
			return 1
		}
	}
	overrides := func(c *config.Config) { // --listen holds for reloads too
		if listen != "" {
			c.Listen = listen
		}
	}
	srv, err := vmcp.New(cfg, vmcp.Options{Logger: log, MetricsListener: metrics, Overrides: overrides, BulkGC: bulk})
	if err != nil {
		lis.Close()
		if metrics != nil {
			metrics.Close()
		}
		fmt.Fprintln(stderr, "vmcp:", err)
		return 1
	}
	hup := make(chan os.Signal, 1) // SIGHUP reloads the config
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if err := srv.Watch(ctx, f.Name, hup); err != nil {
		fmt.Fprintln(stderr, "vmcp: live reload off:", err)
	}
	if err := srv.Serve(ctx, lis, cfg.HTTP.ShutdownTimeout.D()); err != nil {
		fmt.Fprintln(stderr, "vmcp:", err)
		return 1
	}
	return 0
}
