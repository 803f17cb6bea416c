# vmcp — the two commands a new user needs are `make run` and `make test`;
# both install what they need on a fresh machine.
GO        ?= go
BIN       := bin
RACE      ?= -race

.PHONY: build run run-auth test lint lint-fresh unit conformance bench redis chromium server-everything fuzz clean

build: ## vmcp and the demo backend (the go-sdk conformance everything-server)
	$(GO) build -o $(BIN)/vmcp ./cmd/vmcp
	$(GO) build -o $(BIN)/everything-server github.com/modelcontextprotocol/go-sdk/conformance/everything-server

run: build ## vmcp on 127.0.0.1:8080/mcp over two real MCP servers (examples/demo.yaml; VMCP_LISTEN, DEMO_BACKEND_PORT)
	VMCP_LISTEN=$(VMCP_LISTEN) DEMO_BACKEND_PORT=$(DEMO_BACKEND_PORT) ./scripts/run-demo.sh

run-auth: build ## make run with an auth block, in front of a local OpenID Provider on 127.0.0.1:9400 (DEVIDP_LISTEN); prints commands to get a token and call vmcp
	$(GO) build -o $(BIN)/vmcp-devidp ./cmd/vmcp-devidp
	VMCP_LISTEN=$(VMCP_LISTEN) DEMO_BACKEND_PORT=$(DEMO_BACKEND_PORT) DEVIDP_LISTEN=$(DEVIDP_LISTEN) ./scripts/run-auth.sh

test: lint unit conformance fuzz ## everything CI runs

lint: ## gofmt, go vet, staticcheck, vmcplint (size, doc and wire rules; scripts/lint-baseline.txt), go mod tidy -diff
	./scripts/lint.sh

lint-fresh: ## make lint on empty Go module and build caches, as on a fresh machine (minutes; not part of make test)
	./scripts/lint-fresh-check.sh

# The two longest-running test packages are named first: go test builds
# and starts packages in command-line order, so their runs overlap the
# other packages' builds instead of running alone at the end.
unit: redis chromium server-everything ## every Go test with the race detector (test/browser drives headless Chromium)
	$(GO) test $(RACE) -count=1 -timeout 20m ./test/integration/ ./test/scale/ ./...

conformance: build ## the official MCP conformance suite through vmcp (Node 22 from npm)
	./scripts/conformance.sh

bench: build redis ## call, list-walk, idle, fan-out, Redis and forwarding rows, direct vs through vmcp vs a plain proxy, with ratios
	./scripts/bench.sh

redis: ## make sure a Redis server listens (install and start it if needed)
	./scripts/ensure-redis.sh

server-everything: ## npm @modelcontextprotocol/server-everything on Node 22 under .cache, run over stdio by test/integration
	./scripts/ensure-server-everything.sh >/dev/null

chromium: ## make sure headless Chromium is installed (Debian's chromium), for test/browser
	./scripts/ensure-chromium.sh >/dev/null

# Each target runs for an execution count, about 20 s each on 2 idle cores
# (FUZZTIME=30s or 1000x overrides all five): a -fuzztime duration races
# Go 1.26's fuzz coordinator at its deadline and, on a loaded machine,
# fails with "context deadline exceeded" and no failing input
# (go.dev/issue/75804, fixed in Go 1.27).
fuzz: ## the HTTP edge's, the endpoint's, the message decoder's and the Modern tools/call params decoder's fuzz targets (go test runs their seeds always)
	$(GO) test -run '^$$' -fuzz FuzzEdgeDecoding -fuzztime $(or $(FUZZTIME),30000x) ./pkg/edge
	$(GO) test -run '^$$' -fuzz FuzzEndpointDecoding -fuzztime $(or $(FUZZTIME),60000x) ./pkg/vmcp
	$(GO) test -run '^$$' -fuzz FuzzDecodeMatchesUnmarshal -fuzztime $(or $(FUZZTIME),120000x) ./pkg/wire
	$(GO) test -run '^$$' -fuzz FuzzDecodeCallToolMatchesUnmarshal -fuzztime $(or $(FUZZTIME),60000x) ./pkg/dispatch/modern
	$(GO) test -run '^$$' -fuzz FuzzDecodeObjectMatchesUnmarshal -fuzztime $(or $(FUZZTIME),120000x) ./pkg/wire

clean:
	rm -rf $(BIN) .cache
