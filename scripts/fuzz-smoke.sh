#!/usr/bin/env bash
# Short run of every Go fuzz target in the module (part of `make test`).
#
# Each target runs for a fixed number of executions, not for a duration:
# with `-fuzztime <duration>`, Go's fuzz coordinator can report a spurious
# "context deadline exceeded" failure when the deadline races an in-flight
# worker on a busy machine (golang/go#75804, seen here on go1.26). A count
# has no deadline, so a failure is always a real finding.
#
# The budget is FUZZ_EXECS executions per target (default 20000, about two
# seconds at ten thousand executions a second). A target whose inputs are
# expensive names its own budget in a comment on the line directly above
# its declaration:
#
#	// fuzz-smoke: 300x
#	func FuzzReadTAR(f *testing.F) {
#
# A failing run prints the fuzzer's whole output, including the path of the
# failing input it saved under the package's testdata/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
TAGS=${TAGS:-sqlite_fts5}
FUZZ_EXECS=${FUZZ_EXECS:-20000}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

targets=0
for pkg in $("$GO" list -tags "$TAGS" ./...); do
	dir=$("$GO" list -tags "$TAGS" -f '{{.Dir}}' "$pkg")
	for file in "$dir"/*_test.go; do
		[ -e "$file" ] || continue
		# Print "name budget" for each `func FuzzX(` line, budget from the
		# comment directly above it (empty when there is none).
		awk '
			/^func Fuzz[A-Za-z0-9_]*\(/ {
				name = $2; sub(/\(.*/, "", name)
				print name, budget
			}
			{ budget = "" }
			/^\/\/ fuzz-smoke: [0-9]+x$/ { budget = $3 }
		' "$file" | while read -r name budget; do
			budget=${budget:-${FUZZ_EXECS}x}
			echo "fuzz $pkg $name ($budget)"
			if ! "$GO" test -tags "$TAGS" -run '^$' -fuzz "^${name}\$" -fuzztime "$budget" "$pkg" >"$log" 2>&1; then
				cat "$log"
				exit 1
			fi
		done
		targets=$((targets + $(grep -c '^func Fuzz' "$file" || true)))
	done
done
echo "fuzz-smoke: $targets targets passed"
