# git-ctx build, test and benchmark entry points.
GO      ?= go
TAGS    := sqlite_fts5
# The shipped binary also leaves out urfave/cli's man-page renderer (and the
# markdown libraries it initialises at every start); the tests build without
# it, so that TestManPageUpToDate can regenerate docs/git-ctx.1.
BUILDTAGS := $(TAGS),urfave_cli_no_docs
# The shipped pair (docs/ARCHITECTURE.md, "Two executables"): git-ctx is
# built with ctx_lean and links neither the MCP SDK nor the AWS SDK (their
# init would run at every start); git-ctx-full, the same main package
# without it, has both, and git-ctx hands `mcp` and s3:// session commands
# to it.
LEANTAGS  := $(BUILDTAGS),ctx_lean
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build install test s3-server check lint unit fuzz-smoke bench clean

all: build

build:
	$(GO) build -tags $(LEANTAGS) -trimpath -ldflags "$(LDFLAGS)" -o bin/git-ctx ./cmd/git-ctx
	$(GO) build -tags $(BUILDTAGS) -trimpath -ldflags "$(LDFLAGS)" -o bin/git-ctx-full ./cmd/git-ctx

install:
	./install.sh

# The whole test suite: formatting, vet, staticcheck and the complexity
# limit, every test with the race detector, and a short run of every fuzz
# target. CI runs exactly this.
test: s3-server check lint unit fuzz-smoke

# The S3-compatible server the S3 store's tests start (SeaweedFS, built once
# into ~/.cache/git-ctx/s3-server). Where it cannot be installed those tests
# skip with a message, except under CI=true, where they fail.
s3-server:
	@./scripts/s3-server.sh || { [ -z "$$CI" ] && echo "s3-server: not installed; the S3 store's tests will skip" >&2; }

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet -tags $(TAGS) ./...
	$(GO) vet -tags $(BUILDTAGS) ./cmd/git-ctx
	$(GO) vet -tags $(LEANTAGS) ./cmd/git-ctx ./internal/recall ./sessions/store

# staticcheck clean, and no function above cyclomatic complexity 25
# (docs/ARCHITECTURE.md). Pinned versions, fetched by the go command.
lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags $(TAGS) ./...
	$(GO) run github.com/fzipp/gocyclo/cmd/gocyclo@v0.6.0 -over 25 .

unit:
	$(GO) test -tags $(TAGS) -race -count=1 -timeout 60m ./...

# Every Fuzz* function in the tree, for a fixed number of executions each
# (FUZZ_EXECS, or the budget a target names; see the script).
fuzz-smoke:
	./scripts/fuzz-smoke.sh

# Benchmarks: writes docs/PERFORMANCE.md's measured tables (see that file).
bench:
	./scripts/bench.sh

clean:
	rm -rf bin
