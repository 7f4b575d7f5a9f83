#!/usr/bin/env bash
# Runs git-ctx's benchmarks and rewrites docs/PERFORMANCE.md:
#   bench/performance-intro.md (hand-written: targets, method, analysis)
#   + the machine this run measured on
#   + Go benchmarks (go test -bench) and the ctxbench harness tables.
# Usage: make bench            (SIZES=1000,10000 make bench for a quick run)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-1000,10000,100000}
RUNS=${RUNS:-15}
out=docs/PERFORMANCE.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -tags sqlite_fts5 -trimpath -o "$tmp/git-ctx" ./cmd/git-ctx

echo "go test -bench (gitstore) ..." >&2
go test -tags sqlite_fts5 -run '^$' -bench . -benchtime 200x ./gitstore >"$tmp/gobench.txt"
echo "ctxbench sizes=$SIZES runs=$RUNS ..." >&2
go run -tags sqlite_fts5 ./bench/ctxbench -bin "$tmp/git-ctx" -sizes "$SIZES" -runs "$RUNS" >"$tmp/harness.md"

{
  cat bench/performance-intro.md
  echo
  echo "## Measured on"
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| date | $(date -u +%Y-%m-%dT%H:%MZ) |"
  echo "| commit | $(git describe --always --dirty 2>/dev/null || echo unknown) |"
  echo "| CPU | $(nproc) × $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || uname -m) |"
  echo "| memory | $(free -h 2>/dev/null | awk '/^Mem:/{print $2}') |"
  echo "| disk | $(df -T . | awk 'NR==2{print $2}') |"
  echo "| go | $(go version | cut -d' ' -f3-) |"
  echo "| git | $(git --version | cut -d' ' -f3) |"
  echo "| load average at start | $(cut -d' ' -f1-3 /proc/loadavg) |"
  echo
  echo "## Harness (bench/ctxbench): medians"
  echo
  echo "Branches of SIZES checkpoints over 20 devices, packed (\`git repack -ad\`) as after \`git gc\`."
  echo
  cat "$tmp/harness.md"
  echo
  echo "## Go benchmarks (\`go test -bench . ./gitstore\`)"
  echo
  echo "One append (seal, blobs, trees on the changed paths, commit, locked compare-and-swap of the ref)"
  echo "on a branch of 1k or 10k existing checkpoints over 10 devices, objects loose."
  echo
  echo '```'
  grep -E '^(Benchmark|cpu:)' "$tmp/gobench.txt"
  echo '```'
} >"$out"
echo "wrote $out" >&2
