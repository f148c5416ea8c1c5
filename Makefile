# quorumlock: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
# Debian packages the tests use: real redis-server processes, a private
# PostgreSQL server, spin for the Promela model (gcc compiles its verifier),
# and chromium, the headless browser the jepsen-like report is checked in.
DEBS := redis-server postgresql spin gcc chromium

.PHONY: all demo test deps vet fmt-check bench bench-peers fuzz mutants image compose-up compose-down

all: test

## demo: the quorum lock on five embedded masters; needs nothing installed
demo:
	$(GO) run ./cmd/redlockctl demo

## test: install what the tests need, then vet, format check, and every test with -race
## (the root module, then the bench/ module beside redsync and redislock)
test: deps vet fmt-check
	$(GO) test -race -p 1 -count=1 -timeout 30m ./...
	cd bench && $(GO) vet ./... && $(GO) test -race -p 1 -count=1 -timeout 10m ./...

## deps: install the Debian packages the tests need (as root, when missing)
deps:
	@missing=""; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing="$$missing postgresql"; \
	command -v spin >/dev/null || missing="$$missing spin"; \
	command -v gcc >/dev/null || missing="$$missing gcc"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "run as root, or: sudo apt-get install -y $(DEBS)"; exit 1; fi; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(DEBS); \
	fi

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## bench: lock+unlock and hot-key benchmarks on five real redis-server masters
bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 3s ./redlock/

## bench-peers: quorumlock beside redsync, redislock and a raw SET NX floor (bench/, its own module)
bench-peers: deps
	cd bench && $(GO) run ./cmd/lockbench $(BENCH_FLAGS)

## fuzz: run each fuzz target for a fixed number of inputs (about five seconds
## each on 2 cores; FUZZTIME=30s or FUZZTIME=100000x overrides every budget);
## inputs that fail are written under the package's testdata/fuzz and replayed
## by `make test`. Budgets are counts, not durations: with a duration, Go 1.26's
## fuzz coordinator can report "context deadline exceeded" as a failure when
## the time runs out mid-input (golang/go#75804, fixed in Go 1.27).
FUZZTIME ?=
FUZZ_TARGETS := ./cluster:FuzzDialURL:40000x ./cluster:FuzzMastersList:60000x ./redlock:FuzzKey:2000x \
	./fencing:FuzzParseToken:200000x ./fencing/fencinghttp:FuzzMiddleware:100000x \
	./cmd/redlockctl/internal/cli:FuzzParseHandle:100000x ./cmd/redlockctl/internal/cli:FuzzFlags:20000x \
	./jepsen-like/history:FuzzDecode:200000x
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$${rest#*:}; \
	  if [ "$$budget" = "$$rest" ]; then echo "FUZZ_TARGETS: $$t has no budget (want pkg:Target:Nx)"; exit 2; fi; \
	  budget=$${FUZZTIME:-$$budget}; echo "fuzz $$name ($$pkg, $$budget)"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$budget $$pkg; \
	done

## mutants: the fault suite's mutation score: the library built with each deliberate bug
## (jepsen-like/mutants), the default fault mix run against each (seed 1, at most 240 s each;
## about 25 minutes on 2 cores); the table goes into docs/jepsen-like.md
MUTANTS_FLAGS ?=
mutants: deps
	$(GO) run ./jepsen-like/cmd/jepsen-like mutants --out docs/jepsen-like.md $(MUTANTS_FLAGS)

## image: the local Redis image (FROM scratch, Debian's redis-server) for docker-compose
image: deps
	.ci/redis-image/build.sh

compose-up: image
	docker-compose -f docker-compose.5masters.yml up -d

compose-down:
	docker-compose -f docker-compose.5masters.yml down
