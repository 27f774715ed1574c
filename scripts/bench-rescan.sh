#!/usr/bin/env bash
# bench-rescan.sh — what a scheduled re-scan of an unchanged git source costs
# against a full scan of it and against the floor of bench-verify.sh (one
# gzip -dc of every blob plus one sha256sum of every file):
#
#   full       first scan of a commit: shallow clone (go-git, file:// URL),
#              load, every offline check (BenchmarkRescan/full)
#   unchanged  re-scan, same commit and policy: ls-remote, the recorded
#              offline results kept (BenchmarkRescan/unchanged); a source
#              with registry checks also re-runs those (not measured here:
#              they cost what the registry answers cost)
#   floor      bench-verify.sh --floor on the same tree
#
# on a gentree tree of BENCH_RESCAN_N (100) packages of BENCH_MB (1) MiB
# manifests. Figures are reported, never judged as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
N=${BENCH_RESCAN_N:-100}
MB=${BENCH_MB:-1}
work=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/pinseal-bench-rescan.XXXXXX")
trap 'rm -rf "$work"' EXIT
command -v git >/dev/null || { echo "git CLI not installed: section skipped"; exit 0; }

"$GO" build -o "$work/gentree" ./internal/testkit/gentree/cmd/gentree
echo "--- generating $N packages x $MB MiB (not timed)"
"$work/gentree" -n "$N" -size "${MB}MB" -out "$work/tree" 2>&1 | sed 's/^/    /'

floor_best=
for i in 1 2 3; do
	s=$(date +%s%N)
	bash scripts/bench-verify.sh --floor "$work/tree"
	e=$(date +%s%N)
	t=$(( (e - s) / 1000000 ))
	if [ -z "$floor_best" ] || [ "$t" -lt "$floor_best" ]; then floor_best=$t; fi
done

echo "--- go test -bench BenchmarkRescan (full: 3 scans, unchanged: 20)"
BENCH_RESCAN_TREE="$work/tree" "$GO" test -run '^$' -bench 'BenchmarkRescan/full' -benchtime 3x ./internal/app/service/server >"$work/full.txt"
BENCH_RESCAN_TREE="$work/tree" "$GO" test -run '^$' -bench 'BenchmarkRescan/unchanged' -benchtime 20x ./internal/app/service/server >"$work/unchanged.txt"
full=$(awk '/^BenchmarkRescan\/full/ {print $3}' "$work/full.txt")
unch=$(awk '/^BenchmarkRescan\/unchanged/ {print $3}' "$work/unchanged.txt")
[ -n "$full" ] && [ -n "$unch" ] || { echo "FAIL: benchmark output:"; cat "$work/full.txt" "$work/unchanged.txt"; exit 1; }
awk -v f="$full" -v u="$unch" -v fl="$floor_best" -v n="$N" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
	printf "  N=%d packages, load average %s\n", n, load
	printf "  full scan          %10.1f ms\n", f / 1e6
	printf "  unchanged re-scan  %10.1f ms   (%.3f%% of a full scan, %.0fx cheaper)\n", u / 1e6, 100 * u / f, f / u
	printf "  floor              %10.1f ms   (gzip -dc all + sha256sum all, best of 3)\n", fl
	printf "  unchanged / floor  %10.3f      full / floor %.2f\n", (u / 1e6) / fl, (f / 1e6) / fl
}'
