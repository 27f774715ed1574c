#!/usr/bin/env bash
# fuzz.sh [FUZZTIME] — run every `func FuzzXxx` in the module for FUZZTIME
# (default 30s) each. New interesting inputs land in the Go fuzz cache; a
# crasher is written to the package's testdata/fuzz/FuzzXxx/ and kept there
# as a regression seed (plain `go test` runs every seed).
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${1:-30s}
status=0
while IFS= read -r file; do
	pkg=./$(dirname "$file")
	for fn in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
		echo "--- $pkg $fn ($FUZZTIME)"
		if ! go test -tags integration -run '^$' -fuzz "^${fn}\$" -fuzztime "$FUZZTIME" "$pkg"; then
			echo "FAIL: $pkg $fn — the crasher is in $pkg/testdata/fuzz/$fn/" >&2
			status=1
		fi
	done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | sed 's|^\./||' | sort)
exit $status
