# pinseal — see README.md. Two commands on a fresh machine: `make demo`, `make test`.
GO       ?= go
GOBIN    ?= $(shell $(GO) env GOPATH)/bin
VERSION  ?= v0.1.0-dev
LDFLAGS  := -X github.com/pinseal/pinseal/internal/version.Version=$(VERSION)
# Release builds (the binaries and the image) drop the symbol table, DWARF
# and the build machine's paths: 62 MB instead of 89 MB for the verifier
# (docs/performance.md, "Binary sizes").
RELEASE  := -trimpath -buildvcs=false -ldflags '$(LDFLAGS) -s -w'
BIN      := bin
# Static, pure Go everywhere (the SQLite driver is modernc's): the tests and
# the release builds share their cgo setting; the release flags above take
# one build of their own.
export CGO_ENABLED ?= 0

.PHONY: all build demo test test-load test-unit vet fmt bench fuzz clean

all: build

build:
	$(GO) build $(RELEASE) -o $(BIN)/ ./cmd/...

## demo: build the example provider package from pinned upstream files served on 127.0.0.1, then verify it
demo: build
	./scripts/demo.sh

## test: every test: vet, unit, fuzz seeds, integration against real peers (registry, cosign, oras, chromium)
test: vet
	$(GO) test -tags integration -count=1 -timeout 30m ./...

## test-load: `make test` while stress-ng keeps every core busy (a loaded CI machine); run it before a change that touches timing
LOAD_CPUS ?= 2
test-load:
	@command -v stress-ng >/dev/null || { echo "test-load needs stress-ng: apt-get install stress-ng"; exit 1; }
	@stress-ng --cpu $(LOAD_CPUS) --timeout 45m --quiet & pid=$$!; \
	  trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT INT TERM; \
	  $(MAKE) --no-print-directory test

## test-unit: the fast tests only (no external peers)
test-unit:
	$(GO) test -count=1 ./...

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet -tags integration ./...

## bench: benchmarks with ratios against GNU gzip, a shell pipeline and the upstream CLIs
bench: build
	./scripts/bench.sh

## fuzz: run each fuzz target for FUZZTIME (default 30s)
FUZZTIME ?= 30s
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf $(BIN)

## fixtures: regenerate the shared fixture trees testdata/tree and testdata/tree-dirty (needs GNU gzip)
.PHONY: generate readme
# generate rewrites what is generated from Go code: the lists of checks
# outside Go (docs/verifier.md's table, policies/default.yaml and the
# policy schema, api/report.schema.json) from the catalog (pkg/check);
# TestGenerated fails while one is stale.
generate:
	$(GO) generate ./...
readme: generate

.PHONY: fixtures
fixtures:
	$(GO) run ./internal/testkit/fixture/gen

## image: the verifier's OCI image, built without a Docker daemon (static binary on an empty base); IMAGE=HOST/REPO:TAG pushes it, else bin/verifier-image (OCI layout)
.PHONY: image
IMAGE ?=
image:
	CGO_ENABLED=0 GOOS=linux $(GO) build $(RELEASE) -o $(BIN)/verifier-linux ./cmd/verifier
	$(GO) run ./internal/ociimage/cmd/build-image --binary $(BIN)/verifier-linux --version $(VERSION) \
	  $(if $(IMAGE),--push $(IMAGE),--layout $(BIN)/verifier-image)
