# quorumlock: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
# Debian packages the tests use: real redis-server processes, a private
# PostgreSQL server, and spin for the Promela model (gcc compiles its verifier).
DEBS := redis-server postgresql spin gcc

.PHONY: all demo test deps vet fmt-check bench bench-peers fuzz image compose-up compose-down

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

## fuzz: run each fuzz target for FUZZTIME (default 5s); inputs that fail are
## written under the package's testdata/fuzz and replayed by `make test`
FUZZTIME ?= 5s
FUZZ_TARGETS := ./cluster:FuzzDialURL ./cluster:FuzzMastersList ./redlock:FuzzKey \
	./fencing:FuzzParseToken ./fencing/fencinghttp:FuzzMiddleware \
	./cmd/redlockctl/internal/cli:FuzzParseHandle ./cmd/redlockctl/internal/cli:FuzzFlags \
	./jepsen-like/history:FuzzDecode
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

## image: the local Redis image (FROM scratch, Debian's redis-server) for docker-compose
image: deps
	.ci/redis-image/build.sh

compose-up: image
	docker-compose -f docker-compose.5masters.yml up -d

compose-down:
	docker-compose -f docker-compose.5masters.yml down
