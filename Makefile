# git-ctx build, test and benchmark entry points.
GO      ?= go
TAGS    := sqlite_fts5
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# Seconds each fuzz target runs in `make test` (a smoke run; see docs/SECURITY.md for long runs).
FUZZTIME ?= 3s

.PHONY: all build install test check unit fuzz-smoke bench clean

all: build

build:
	$(GO) build -tags $(TAGS) -trimpath -ldflags "$(LDFLAGS)" -o bin/git-ctx ./cmd/git-ctx

install:
	./install.sh

# The whole test suite: formatting, vet, every test with the race detector,
# and a short run of every fuzz target. CI runs exactly this.
test: check unit fuzz-smoke

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet -tags $(TAGS) ./...

unit:
	$(GO) test -tags $(TAGS) -race -count=1 -timeout 30m ./...

# Every Fuzz* function in the tree, FUZZTIME each.
fuzz-smoke:
	@set -e; for pkg in $$($(GO) list -tags $(TAGS) ./...); do \
	  dir=$$($(GO) list -tags $(TAGS) -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test -tags $(TAGS) -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg >/dev/null || \
	      { $(GO) test -tags $(TAGS) -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; exit 1; }; \
	  done; \
	done

# Benchmarks: writes docs/PERFORMANCE.md's measured tables (see that file).
bench:
	./scripts/bench.sh

clean:
	rm -rf bin
