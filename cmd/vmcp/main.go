// Command vmcp is the virtual MCP server: one Streamable HTTP endpoint in
// front of many MCP servers.
//
//	vmcp serve --config FILE [--listen HOST:PORT] [--pprof HOST:PORT]
//	vmcp validate --config FILE
//	vmcp version
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

	"github.com/go-logr/logr"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  vmcp serve --config FILE [--listen HOST:PORT] [--pprof HOST:PORT]
  vmcp validate --config FILE
  vmcp version
`

// run executes one subcommand and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "version":
		fmt.Fprintln(stdout, "vmcp", vmcp.Version)
		return 0
	case "validate":
		cfg, code := load(args[1:], stderr, nil)
		if cfg != nil {
			fmt.Fprintf(stdout, "config OK: %d backends\n", len(cfg.Backends))
		}
		return code
	case "serve":
		var listen, pprofAddr string
		cfg, code := load(args[1:], stderr, func(fs *flag.FlagSet) {
			fs.StringVar(&listen, "listen", "", "HOST:PORT to listen on (overrides config)")
			fs.StringVar(&pprofAddr, "pprof", "", "opt-in HOST:PORT serving /debug/pprof and /debug/vars (profiling; keep it on loopback)")
		})
		if cfg == nil {
			return code
		}
		if listen != "" {
			cfg.Listen = listen
		}
		if pprofAddr != "" {
			// net/http/pprof and expvar register on http.DefaultServeMux,
			// which only this listener serves (vmcp's endpoint has its own mux).
			go func() {
				if err := http.ListenAndServe(pprofAddr, nil); err != nil {
					fmt.Fprintln(stderr, "vmcp: pprof listener:", err)
				}
			}()
		}
		return serve(cfg, stderr)
	}
	fmt.Fprint(stderr, usage)
	return 2
}

// load parses the subcommand flags and the config; it prints every problem.
func load(args []string, stderr io.Writer, extra func(*flag.FlagSet)) (*config.Config, int) {
	fs := flag.NewFlagSet("vmcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "configuration file (YAML)")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, 2
	}
	if *path == "" {
		fmt.Fprintln(stderr, "vmcp: --config is required")
		return nil, 2
	}
	cfg, err := config.Load(*path)
	if err != nil {
		var ve *config.ValidationError
		if errors.As(err, &ve) {
			for _, p := range ve.Problems {
				fmt.Fprintln(stderr, p.String())
			}
		} else {
			fmt.Fprintln(stderr, "vmcp:", err)
		}
		return nil, 1
	}
	return cfg, 0
}

func serve(cfg *config.Config, stderr io.Writer) int {
	log := logr.FromSlogHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go tuneGC(ctx)
	lis, err := net.Listen("tcp", cfg.Listen) // before New: a busy port fails before backends start
	if err != nil {
		fmt.Fprintln(stderr, "vmcp:", err)
		return 1
	}
	var metrics net.Listener
	if cfg.HTTP.MetricsListen != "" {
		if metrics, err = net.Listen("tcp", cfg.HTTP.MetricsListen); err != nil {
			lis.Close()
			fmt.Fprintln(stderr, "vmcp: http.metrics_listen:", err)
			return 1
		}
	}
	srv, err := vmcp.New(cfg, vmcp.Options{Logger: log, MetricsListener: metrics})
	if err != nil {
		lis.Close()
		if metrics != nil {
			metrics.Close()
		}
		fmt.Fprintln(stderr, "vmcp:", err)
		return 1
	}
	if err := srv.Serve(ctx, lis, cfg.HTTP.ShutdownTimeout.D()); err != nil {
		fmt.Fprintln(stderr, "vmcp:", err)
		return 1
	}
	return 0
}
