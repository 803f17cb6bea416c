#!/usr/bin/env bash
# make bench: vmcp's performance against the backend it fronts.
#
#  1. test/bench: an echo backend (test/bench/echoserver), vmcp (bin/vmcp),
#     a plain reverse proxy (test/bench/plainproxy, the floor of any proxy)
#     and go-sdk clients, each its own process. For a Legacy client on a
#     stateful backend and a Modern client on a stateless one, directly,
#     through vmcp and through the plain proxy (interleaved, medians of 3
#     rounds): c=1 p50 latency and
#     req/s, c=32 req/s, a full tools/list walk, and vmcp's CPU time and
#     allocations per proxied call, with ratios vmcp/direct and PASS/MISS
#     against the targets, and vmcp against the plain proxy (throughput ≥,
#     p50 ≤ 1.05×, and on the Modern row CPU per call ≤ the proxy's) and,
#     on the Legacy row, vmcp's peak RSS (≤ 40 MB); on the same three rows
#     a second vmcp with the audit log on, its throughput, latency and CPU
#     per call as ratios to the one without (-audit=false skips it); then
#     the walk row (full tools/list walks of 2 backends × 5,000 tools on
#     both revisions: vmcp CPU µs per tool listed, walk time per tool, vmcp
#     peak RSS); then the idle row (RSS, goroutines, fds per idle Legacy
#     session at 200/2,000/10,000; RSS after they close), the age row
#     (four long-lived Legacy sessions calling a stdio backend: vmcp's heap
#     after a forced GC at 1k, 10k and 50k calls) and the fan-out
#     row (one backend tools/list_changed to 1,000 Legacy GET and 1,000
#     Modern listen streams, p50/p99/last, direct vs via vmcp); then the
#     cluster rows, each on its own private redis-server: the redis row
#     (one node, 1,000 Legacy sessions with GET streams open: Redis
#     commands per session start, per idle session-minute, per tools/call
#     and per DELETE, executed (INFO commandstats deltas less the node's
#     own) and requested (counted by a proxy in front of Redis); keys and
#     bytes per session; then the same on a private Redis Cluster of three
#     primaries, INFO summed over them, requests not counted;
#     -redis-topology redis or cluster runs one) and the forward row (sessions created on node A,
#     called on A, on node B, which forwards to A, and through the plain
#     proxy to A, the floor of any extra hop: c=1 p50 and what forwarding
#     adds, target ≤ 0.3 ms; c=32 throughput); then the ratelimit row
#     (Legacy and Modern calls through vmcp with a rate-limit rule every
#     call matches, in memory and on a private redis-server, as ratios to
#     the same vmcp without it: c=32 throughput, vmcp CPU per call, Redis
#     script runs per check; about 1 min); then the search row
#     (tool search, issue 31: LiveMCPBench's 70 servers and 527 tools served
#     by one echoserver -catalogue process behind vmcp with tool_search on;
#     its 95 questions through search_tools on a Legacy and a Modern client:
#     Recall@5, Recall@10, hit@3, search p50/p99 in vmcp (from its
#     vmcp_tool_search_seconds histogram) and as a round trip, the index
#     builds while listing, and the definitions' size, then the same
#     timings again with filler servers up to 10,000 tools; needs
#     ../shared/data/livemcpbench, or -livemcpbench DIR); then the progress
#     row (issue 28: one call whose backend tool sends 100,000
#     notifications/progress for its progressToken, on a Legacy client of a
#     stateful backend and a Modern client of a stateless one, directly and
#     through vmcp, and a Modern client through vmcp to a Legacy-only
#     backend (a keyed session): time to the last notification and result,
#     ratio to direct; vmcp's RSS before and peak, ratio); then the tuning
#     row (issue 28: each piece of tuning machinery switched off in one
#     vmcp, VMCP_TUNING_OFF=gctuner|gogc|bulkgc or a binary built with the tag
#     vmcp_noscan|vmcp_noshrink, against vmcp with all on, in
#     alternating rounds on the rows the piece targets: call rows, idle
#     sessions, long-lived sessions, a large catalogue's start, progress;
#     medians of each round's off ÷ on, and ratios to direct and the plain
#     proxy; -tuning-parts picks some; about 15 min).
#     About 32 min. Extra arguments go to it (e.g. -rounds 5, -rows
#     modern, -rows redis,forward, -redis-idle 2m, -profile DIR for vmcp
#     pprof profiles).
#  2. go test benchmarks, in process, with allocations per call; the
#     ViaVMCP ones report vmcp's own share as vmcp-allocs/op and vmcp-B/op.
#     BENCHTIME (default 1000x) sets -benchtime; BENCH_GO=0 skips them.
#
# Needs bin/vmcp (make build) and redis-server on PATH for the cluster rows
# (make redis installs it). The machine should be otherwise idle: the
# client, vmcp and the backend share its CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
out=.cache/bench
mkdir -p "$out"
[ -x bin/vmcp ] || $GO build -o bin/vmcp ./cmd/vmcp
$GO build -o "$out/bench" ./test/bench
$GO build -o "$out/echoserver" ./test/bench/echoserver
$GO build -o "$out/plainproxy" ./test/bench/plainproxy

echo "== vmcp vs direct, separate processes (test/bench)"
"$out/bench" -vmcp bin/vmcp -echoserver "$out/echoserver" -plainproxy "$out/plainproxy" "$@"

if [ "${BENCH_GO:-1}" != "0" ]; then
  benchtime=${BENCHTIME:-1000x}
  echo
  echo "== go test benchmarks (in process; allocs/op count client, vmcp and backend together)"
  $GO test -run '^$' -bench 'Benchmark(Legacy|Modern)Call(Direct|ViaVMCP)$' -benchtime "$benchtime" ./test/integration/
  $GO test -run '^$' -bench 'BenchmarkToolsListWalk' -benchtime 100x ./test/integration/
  $GO test -run '^$' -bench 'BenchmarkModernCall$' -benchtime "$benchtime" ./pkg/dispatch/modern/
  echo "-- the same without the hand-written JSON scanner (encoding/json; the tuning row's vmcp_noscan)"
  $GO test -tags vmcp_noscan -run '^$' -bench 'BenchmarkModernCall$' -benchtime "$benchtime" ./pkg/dispatch/modern/
  $GO test -run '^$' -bench 'BenchmarkDecode$' ./pkg/wire/
  $GO test -run '^$' -bench 'Benchmark(Build10kDistinct|Rebuild10k|Search10k)$' -benchtime 20x ./pkg/toolsearch/
  $GO test -run '^$' -bench 'Benchmark(SearchToolsCall10k|Rebuild10k)$' -benchtime 20x ./pkg/metatools/
fi
