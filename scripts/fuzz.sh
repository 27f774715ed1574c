#!/usr/bin/env bash
# fuzz.sh [FUZZTIME] — run every `func FuzzXxx` in the module for FUZZTIME
# (default 30s) each. New interesting inputs land in the Go fuzz cache; a
# crasher is written to the package's testdata/fuzz/FuzzXxx/ and kept there
# as a regression seed (plain `go test` runs every seed).
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${1:-30s}
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set -o pipefail
# seeds DIR: how many corpus files DIR holds (0 when it does not exist).
seeds() { if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi; }
while IFS= read -r file; do
	pkg=./$(dirname "$file")
	for fn in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
		echo "--- $pkg $fn ($FUZZTIME)"
		before=$(seeds "$pkg/testdata/fuzz/$fn")
		if ! go test -tags integration -run '^$' -fuzz "^${fn}\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$log"; then
			after=$(seeds "$pkg/testdata/fuzz/$fn")
			if [ "$after" = "$before" ] && grep -q 'context deadline exceeded' "$log"; then
				# The go fuzzer's own deadline hit a slow input mid-run;
				# nothing was found. Give slow targets a longer FUZZTIME.
				echo "note: $pkg $fn: fuzz time ran out mid-input (no crasher); use a longer FUZZTIME" >&2
				continue
			fi
			echo "FAIL: $pkg $fn — the crasher is in $pkg/testdata/fuzz/$fn/" >&2
			status=1
		fi
	done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | sed 's|^\./||' | sort)
exit $status
