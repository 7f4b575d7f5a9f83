#!/usr/bin/env bash
# Runs git-ctx's benchmarks and rewrites docs/PERFORMANCE.md:
#   bench/performance-intro.md (hand-written: method, analysis, the notes on
#     what dominates each missed target), whose `<!-- targets table -->` line
#     is replaced by the summary table of issue 18's targets, computed from
#     this run (each figure against a floor measured in the same run)
#   + the machine this run measured on
#   + every mode's tables (ctxbench) and the Go benchmarks.
# Usage:
#   make bench                        full run (1k, 10k, 100k; 1,000 hooked commits at 100k)
#   BENCH_SCALE=small make bench      quick run (1k and 10k, fewer runs)
#   SIZES=… RUNS=… override the main harness's sizes and repetitions.
#   BENCH_KEEP=DIR keeps the run's raw outputs (each mode's tables, the
#     targets' JSON lines, the binaries) in DIR instead of removing them.
# How long each takes is in bench/performance-intro.md ("How to reproduce").
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${BENCH_SCALE:-full}
case "$SCALE" in
full)
  SIZES=${SIZES:-1000,10000,100000}
  RUNS=${RUNS:-15}
  main_args=(-hookspool 1000,100000 -stalls 1000 -stallsize 100000 -pull 10000 -junk 200000 -rot 10000)
  start_args=(-start 100000 -runs 21)
  verify_args=(-verify 100000)
  session_args=(-sessions -session-sizes 1024,67108864)
  fanout_args=(-fanout 1000000 -fanout-trees)
  expect=()
  ;;
small)
  SIZES=${SIZES:-1000,10000}
  RUNS=${RUNS:-5}
  main_args=(-hookspool 1000 -stalls 100 -stallsize 10000 -pull 2000 -junk 20000 -rot 1000 -layouts ctx-v1)
  start_args=(-start 10000 -runs 7)
  verify_args=(-verify 10000)
  session_args=(-sessions -session-sizes 1024 -session-wf 15)
  fanout_args=(-fanout 100000 -fanout-trees)
  expect=(-expect measured)
  ;;
*) echo "bench.sh: BENCH_SCALE is full or small, not $SCALE" >&2; exit 2 ;;
esac
out=docs/PERFORMANCE.md
if [ -n "${BENCH_KEEP:-}" ]; then
  mkdir -p "$BENCH_KEEP"
  tmp=$(cd "$BENCH_KEEP" && pwd)
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
fi
work="$tmp/work"
mkdir -p "$work"
targets="$tmp/targets.jsonl"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)

# The shipped pair (Makefile's LEANTAGS and BUILDTAGS): git-ctx is
# measured; git-ctx-full sits beside it (for mcp and s3:// session stores)
# and its `version` is measured beside the lean one's (-startfull).
go build -tags sqlite_fts5,urfave_cli_no_docs,ctx_lean -trimpath -o "$tmp/git-ctx" ./cmd/git-ctx
go build -tags sqlite_fts5,urfave_cli_no_docs -trimpath -o "$tmp/git-ctx-full" ./cmd/git-ctx
# The start-up benchmark's dependency floor (bench/startfloor).
go build -tags sqlite_fts5,urfave_cli_no_docs -trimpath -o "$tmp/startfloor" ./bench/startfloor
go build -tags sqlite_fts5 -o "$tmp/ctxbench" ./bench/ctxbench
bench() { "$tmp/ctxbench" -bin "$tmp/git-ctx" -work "$work" -targets "$targets" "$@"; }
# settle waits (at most 3 minutes) for the load the previous phase left
# (the stall series loads both cores on purpose) to decay below one
# runnable process per two cores, so that it does not fall on the next
# phase's floors and figures alike; each row still records the load it
# ran at.
settle() {
  local i=0
  while [ $i -lt 36 ] && awk -v n="$(nproc)" '{ exit !($1 >= n / 2) }' /proc/loadavg; do
    sleep 5
    i=$((i + 1))
  done
}
phase() { settle; echo "bench.sh [$SCALE]: $1 ($(($(date +%s) - t0)) s so far, load $(cut -d' ' -f1 /proc/loadavg)) ..." >&2; }

phase "go test -bench (gitstore)"
# The appends are milliseconds each; one whole-branch verify is seconds,
# so it gets fewer iterations (200 of them took 12 minutes).
go test -tags sqlite_fts5 -run '^$' -bench Append -benchtime 200x ./gitstore >"$tmp/gobench.txt"
# The whole-branch verify and a first pull's merge tree share one packed
# branch of 10k checkpoints (built once, kept in the work directory).
GITSTORE_VERIFY_BRANCH="$work/gitstore-branch" go test -tags sqlite_fts5 -run '^$' -bench 'VerifyBranch|MergeTreeOfPackedBranch' -benchtime 5x ./gitstore | grep '^Benchmark' >>"$tmp/gobench.txt"
phase "ctxbench sizes=$SIZES runs=$RUNS ${main_args[*]}"
bench -sizes "$SIZES" -runs "$RUNS" "${main_args[@]}" >"$tmp/harness.md"
phase "ctxbench ${start_args[*]}"
bench "${start_args[@]}" -startfull "$tmp/git-ctx-full" -startfloor "$tmp/startfloor" >"$tmp/start.md"
phase "ctxbench ${verify_args[*]}"
bench -runs "$RUNS" "${verify_args[@]}" >"$tmp/verify.md"
phase "ctxbench ${session_args[*]}"
bench -runs "$RUNS" "${session_args[@]}" >"$tmp/sessions.md"
phase "ctxbench ${fanout_args[*]}"
bench "${fanout_args[@]}" >"$tmp/fanout.md"
# A new mode registers its targets the same way (brRecord): add its
# `bench …` line here, for both scales.
elapsed=$(($(date +%s) - t0))
phase "summary"
"$tmp/ctxbench" -summary "$targets" -notes bench/performance-intro.md "${expect[@]}" >"$tmp/summary.md"

{
  awk -v table="$tmp/summary.md" '
    /<!-- targets table -->/ { while ((getline l < table) > 0) print l; next }
    { print }' bench/performance-intro.md
  echo
  echo "## Measured on"
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| date | $(date -u +%Y-%m-%dT%H:%MZ) |"
  echo "| commit | $(git describe --always --dirty 2>/dev/null || echo unknown) |"
  echo "| scale | $SCALE (sizes $SIZES, $RUNS runs; ${main_args[*]}; ${start_args[*]}; ${verify_args[*]}; ${session_args[*]}) |"
  echo "| duration of the run | $((elapsed / 60)) min $((elapsed % 60)) s |"
  echo "| CPU | $(nproc) × $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || uname -m) |"
  echo "| memory | $(free -h 2>/dev/null | awk '/^Mem:/{print $2}') |"
  echo "| disk | $(df -T . | awk 'NR==2{print $2}') |"
  echo "| go | $(go version | cut -d' ' -f3-) |"
  echo "| git | $(git --version | cut -d' ' -f3) |"
  echo "| load average at start / end | $load_start / $(cut -d' ' -f1-3 /proc/loadavg) |"
  echo
  echo "## Harness (bench/ctxbench): medians"
  echo
  echo "Branches of SIZES checkpoints over 20 devices, packed (\`git repack -ad\`) as after \`git gc\`."
  echo
  cat "$tmp/harness.md"
  echo
  echo "## Start-up (\`ctxbench ${start_args[*]}\`)"
  echo
  cat "$tmp/start.md"
  echo
  echo "## Verify, reindex, first cache build (\`ctxbench ${verify_args[*]}\`)"
  echo
  cat "$tmp/verify.md"
  echo
  echo "## Sessions (\`ctxbench ${session_args[*]}\`)"
  cat "$tmp/sessions.md"
  echo
  echo "## Bytes per append by fan-out depth (\`ctxbench ${fanout_args[*]}\`)"
  echo
  cat "$tmp/fanout.md"
  echo
  echo "## Go benchmarks (\`go test -bench . ./gitstore\`)"
  echo
  echo "One append (seal, blobs, trees on the changed paths, commit, locked compare-and-swap of the ref)"
  echo "on a branch of 1k or 10k existing checkpoints over 10 devices, objects loose; a whole-branch"
  echo "verify of a packed branch of 10k (VerifyBranch), and the tree a first pull's merge commit"
  echo "computes from every file of that branch, all of whose trees the pack holds (MergeTreeOfPackedBranch)."
  echo
  echo '```'
  grep -E '^(Benchmark|cpu:)' "$tmp/gobench.txt"
  echo '```'
} >"$out"
echo "wrote $out ($SCALE run: $((elapsed / 60)) min $((elapsed % 60)) s)" >&2
