#!/usr/bin/env bash
# bench-verify.sh — how fast `verifier check` is, side by side in one run with
# what it replaces and with the floor:
#
#   verifier  bin/verifier check --output json TREE
#   shell     the same comparisons per package as a shell pipeline:
#             gzip -dc blob | cmp - yaml, the gzip header bytes (head -c 10 | od),
#             grep of the ConfigMap name, spec.version and the compressed
#             annotation, grep of the Makefile version variable, sha256sum -c of
#             the pinned files against pin.yaml
#   floor     one gzip -dc of every blob plus one sha256sum of every file
#             (xargs hands many files to each gzip/sha256sum: every blob is
#             inflated as its own stream, without one process per blob)
#
# on trees shaped as measured (internal/testkit/gentree, -shape cozystack:
# Cozystack's four capi-providers-* packages at commit 3c780acd repeated, each
# package's bytes its own: YAML of 0.48–1.10 MB shipped beside its blob, the
# core's size one package in four, the bootstrap's talos provider, patches/
# and images/ where the measured ones have them) of BENCH_N_SMALL (100) and
# BENCH_N_LARGE (1000) packages, and on a monorepo (-shape monorepo: Cozystack's
# packages/ at 3c780acd as measured chart by chart: its four provider packages
# among BENCH_OTHERS (160) charts that are not provider packages, each shaped as
# a measured one, so the verifier settles 119 from their templates and renders
# 41, 40 of them in render children, 7 failing or empty with default values),
# generated into a temp directory (not timed). BENCH_SHAPE=synthetic gives the
# old trees (one provider per package, YAML of BENCH_MB each, no raw YAML in the
# release). Prints wall seconds, CPU seconds (user+sys) and peak RSS for each
# (GNU time; installed with apt-get when missing), and the ratios the targets
# are stated in: shell/verifier >= 5 at N_SMALL; verifier/floor <= 0.5 by wall
# time and <= 1 by CPU time at N_SMALL and N_LARGE; t(N_LARGE)/t(N_SMALL) <=
# 11 * N_LARGE/(10 * N_SMALL); peak RSS <= 120 MiB at N_SMALL and < 256 MiB at
# N_LARGE; on the monorepo, verifier/before <= 1 (with BENCH_BEFORE); a warm
# run (the verifier's cache in $XDG_CACHE_HOME filled by a run over the tree,
# then one package changed) <= 0.2 x the floor at N_SMALL. The timed cold runs (the
# BENCH_BEFORE verifier's too) each get an empty XDG_CACHE_HOME of their own. Missing a
# target is reported, never an error: timings depend on the machine (on a busy
# shared machine wall time mostly measures waiting for a core; CPU time is
# printed beside it, and the load average). The run fails only if the
# verifier or the shell pipeline finds an error in the generated tree
# (release-size warnings are expected: they are what real trees show).
# It ends with one table, rows 100 packages, 1,000 packages, warm and monorepo,
# columns pinseal, BENCH_BEFORE and the floor (wall s / CPU s / peak RSS MiB),
# the load average at the start and at the end, and a line per target.
#
# Standalone: scripts/bench-verify.sh   (make bench calls it via scripts/bench.sh)
# Environment: BENCH_N_SMALL, BENCH_N_LARGE (0 skips the large run), BENCH_MB
# (mean YAML size in MiB, may be fractional, e.g. 0.25), BENCH_SHAPE (cozystack;
# real or synthetic for gentree's older shapes),
# BENCH_MONOREPO (1; 0 skips it), BENCH_OTHERS (160), BENCH_REPEAT_SMALL (3),
# BENCH_REPEAT_LARGE (1), BENCH_REPEAT_MONOREPO (5): best wall time of that many
# runs; VERIFIER (bin/verifier, built if missing); BENCH_TMP (parent of the
# temp dir, default $TMPDIR or /tmp); BENCH_KEEP=1 keeps the generated trees;
# BENCH_SHELL_LARGE=0 skips the shell pipeline at N_LARGE (it spawns ~15
# processes per package: minutes); BENCH_BEFORE=<git revision> also times the
# verifier built from that revision (git archive of it, built in the temp
# dir): a before/after row on every tree (e.g. the last revision before a
# change being measured).
set -euo pipefail

# --- the shell pipeline and the floor, run as their own process so they can
# be timed like the verifier.
shell_pipeline() {
	local root=$1 bad=0 d blob yaml hdr cm ver mk
	while IFS= read -r -d '' chart; do
		d=${chart%/Chart.yaml}
		for blob in "$d"/files/components*.gz; do
			# files/components.gz holds files/<type>-components.yaml,
			# files/components-talos.gz files/<type>-components-talos.yaml.
			suffix=${blob##*/components}
			suffix=${suffix%.gz}
			yaml=$(printf '%s\n' "$d"/files/*-components"$suffix".yaml)
			# blob-yaml: the blob inflates to the vendored YAML byte for byte.
			if ! gzip -dc -- "$blob" | cmp -s - "$yaml"; then echo "blob-yaml: $blob"; bad=1; fi
			# blob-header: ID 1f8b, CM 08, FLG 00 (no name/comment/extra), MTIME 0.
			hdr=$(head -c 10 -- "$blob" | od -An -tx1 | tr -d ' \n')
			case $hdr in 1f8b080000000000*) ;; *) echo "blob-header: $blob: $hdr"; bad=1 ;; esac
		done
		# configmap-version: the ConfigMap name is spec.version.
		cm=$(grep -m1 '^  name:' "$d/templates/configmaps.yaml" | awk '{print $2}')
		ver=$(grep -m1 '^  version:' "$d/templates/providers.yaml" | awk '{print $2}')
		if [ -z "$cm" ] || [ "$cm" != "$ver" ]; then echo "configmap-version: $d: $cm != $ver"; bad=1; fi
		# compressed-annotation.
		grep -q 'provider.cluster.x-k8s.io/compressed: "true"' "$d/templates/configmaps.yaml" ||
			{ echo "compressed-annotation: $d"; bad=1; }
		# pin-version: the Makefile version variable is the version part of
		# the release.
		mk=$(grep -m1 -E '^[A-Z0-9_]*VERSION[[:space:]]*[:?]?=' "$d/Makefile" | sed -E 's/^[^=]*=[[:space:]]*//')
		# A version computed from a Dockerfile's ARG VERSION.
		case $mk in '$(shell'*) mk=$(sed -n 's/^ARG VERSION=//p' "$d"/images/*/Dockerfile | head -n1) ;; esac
		case $ver in "$mk"-*) ;; *) echo "pin-version: $d: $mk vs $ver"; bad=1 ;; esac
		# pin-digest: every pinned file has its pinned SHA-256.
		if ! awk '$1 == "-" && $2 == "sha256:" {s = $3} $1 == "sha256:" {s = $2} $1 == "to:" {print s "  " $2}' "$d/pin.yaml" |
			(cd "$d" && sha256sum --quiet -c -); then echo "pin-digest: $d"; bad=1; fi
	done < <(find "$root" -name Chart.yaml -type f -print0 | sort -z)
	return $bad
}

floor() {
	local root=$1
	find "$root" -name '*.gz' -type f -print0 | xargs -0 gzip -dc -- >/dev/null
	find "$root" -type f -print0 | xargs -0 sha256sum -- >/dev/null
}

case ${1:-} in
--shell-pipeline) shell_pipeline "$2"; exit ;;
--floor) floor "$2"; exit ;;
esac

cd "$(dirname "$0")/.."
N_SMALL=${BENCH_N_SMALL:-100}
N_LARGE=${BENCH_N_LARGE:-1000}
MB=${BENCH_MB:-1}
SHAPE=${BENCH_SHAPE:-cozystack}
MONOREPO=${BENCH_MONOREPO:-1}
OTHERS=${BENCH_OTHERS:-160}
REPEAT_MONOREPO=${BENCH_REPEAT_MONOREPO:-5}
REPEAT_SMALL=${BENCH_REPEAT_SMALL:-3}
REPEAT_LARGE=${BENCH_REPEAT_LARGE:-1}
VERIFIER=${VERIFIER:-bin/verifier}
SELF=$(pwd)/scripts/bench-verify.sh

work=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/pinseal-bench-verify.XXXXXX")
if [ "${BENCH_KEEP:-0}" = 1 ]; then
	echo "keeping generated trees in $work"
else
	trap 'rm -rf "$work"' EXIT
fi

if [ ! -x "$VERIFIER" ]; then
	echo "--- building $VERIFIER"
	go build -o "$VERIFIER" ./cmd/verifier
fi
go build -o "$work/gentree" ./internal/testkit/gentree/cmd/gentree
BEFORE=${BENCH_BEFORE:-}
if [ -n "$BEFORE" ]; then
	echo "--- building the verifier of $BEFORE (before)"
	mkdir -p "$work/before"
	git archive "$BEFORE" | tar -x -C "$work/before"
	(cd "$work/before" && go build -o "$work/verifier-before" ./cmd/verifier)
fi

TIME=/usr/bin/time
if ! "$TIME" -f %M true >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "--- installing GNU time (peak RSS)"
		apt-get install -y -qq time >/dev/null 2>&1 || true
	fi
	"$TIME" -f %M true >/dev/null 2>&1 || { echo "note: GNU time missing: peak RSS not measured"; TIME=; }
fi

# measure NAME CMD...: one run; keeps the best wall time (seconds) and CPU
# time (user+sys seconds, GNU time only) and the highest peak RSS (KiB) seen
# for NAME in R_SECS, R_CPU, R_RSS, and the exit status in R_RC.
declare -A R_SECS R_CPU R_RSS R_RC
measure() {
	local name=$1 start end rc=0 secs cpu=n/a rss=0
	shift
	start=$(date +%s%N)
	if [ -n "$TIME" ]; then
		"$TIME" -f '%M %U %S' -o "$work/time" "$@" >/dev/null 2>"$work/$name.err" || rc=$?
	else
		"$@" >/dev/null 2>"$work/$name.err" || rc=$?
	fi
	end=$(date +%s%N)
	secs=$(awk -v n="$((end - start))" 'BEGIN {printf "%.3f", n / 1e9}')
	if [ -n "$TIME" ]; then
		read -r rss cpu < <(tail -n1 "$work/time" | awk '{printf "%d %.2f\n", $1, $2 + $3}')
	fi
	if [ -z "${R_SECS[$name]:-}" ] || awk -v a="$secs" -v b="${R_SECS[$name]}" 'BEGIN {exit !(a < b)}'; then
		R_SECS[$name]=$secs
	fi
	if [ -z "${R_CPU[$name]:-}" ] || [ "$cpu" = n/a ] || awk -v a="$cpu" -v b="${R_CPU[$name]}" 'BEGIN {exit !(a < b)}'; then
		R_CPU[$name]=$cpu
	fi
	if [ "$rss" -gt "${R_RSS[$name]:-0}" ]; then R_RSS[$name]=$rss; else R_RSS[$name]=${R_RSS[$name]:-0}; fi
	R_RC[$name]=$rc
}

# warm_run TREE N REPEAT: the common CI case: the verifier's cache filled by
# a run over the tree, then one package changed (a comment added to its
# providers template); each timed run changes it anew, from the cache the
# run before left.
warm_run() {
	local tree=$1 n=$2 repeat=$3 i tpl
	tpl=$(find "$tree" -path '*/templates/providers.yaml' -type f | sort | head -n1)
	rm -rf "$work/cache-warm" && mkdir "$work/cache-warm"
	XDG_CACHE_HOME="$work/cache-warm" "$VERIFIER" check --output json "$tree" >/dev/null 2>&1 || true
	echo "--- timing a warm run at N=$n (one package changed: $tpl; best of $repeat)"
	for ((i = 0; i < repeat; i++)); do
		printf '# changed %s\n' "$i$RANDOM" >>"$tpl"
		measure "warm-$n" env XDG_CACHE_HOME="$work/cache-warm" "$VERIFIER" check --output json "$tree"
	done
}

failed=0
run_size() { # N REPEAT
	local n=$1 repeat=$2 tree="$work/tree-$1"
	echo "--- generating $n $SHAPE-shaped packages ($MB MiB YAML scale) into $tree (not timed)"
	"$work/gentree" -shape "$SHAPE" -n "$n" -size "${MB}MB" -out "$tree" 2>&1 | sed 's/^/    /'
	# Warm the page cache the same way for everyone.
	find "$tree" -type f -print0 | xargs -0 cat >/dev/null
	echo "--- timing at N=$n (best of $repeat, interleaved)"
	local i
	for ((i = 0; i < repeat; i++)); do
		rm -rf "$work/cache" && mkdir "$work/cache"
		measure "verifier-$n" env XDG_CACHE_HOME="$work/cache" "$VERIFIER" check --output json "$tree"
		if [ -n "$BEFORE" ]; then
			rm -rf "$work/cache" && mkdir "$work/cache"
			measure "before-$n" env XDG_CACHE_HOME="$work/cache" "$work/verifier-before" check --output json "$tree"
		fi
		if [ "$n" = "$N_SMALL" ] || [ "${BENCH_SHELL_LARGE:-1}" = 1 ]; then
			measure "shell-$n" bash "$SELF" --shell-pipeline "$tree"
		else
			R_SECS[shell-$n]=skipped R_CPU[shell-$n]=n/a R_RSS[shell-$n]=0 R_RC[shell-$n]=0
		fi
		measure "floor-$n" bash "$SELF" --floor "$tree"
	done
	if [ "$n" = "$N_SMALL" ]; then warm_run "$tree" "$n" "$repeat"; fi
	if [ "${R_RC[verifier-$n]}" != 0 ]; then
		echo "!!! verifier check exited ${R_RC[verifier-$n]} on the clean generated tree (N=$n):"
		"$VERIFIER" check "$tree" 2>&1 | sed -n 1,40p | sed 's/^/    /'
		failed=1
	fi
	if [ "${R_RC[shell-$n]}" != 0 ]; then
		echo "!!! the shell pipeline found problems in the clean generated tree (N=$n):"
		bash "$SELF" --shell-pipeline "$tree" 2>&1 | sed -n 1,20p | sed 's/^/    /'
		failed=1
	fi
	if [ "${R_RC[floor-$n]}" != 0 ]; then
		echo "!!! the floor failed (N=$n): $(head -c 500 "$work/floor-$n.err")"
		failed=1
	fi
	if [ "${BENCH_KEEP:-0}" != 1 ]; then rm -rf "$tree"; fi
}

# run_monorepo: the verifier (and the one before) at the root of a monorepo,
# where most charts are not provider packages; and the floor.
run_monorepo() {
	local tree="$work/monorepo" i
	echo "--- generating a monorepo: Cozystack's packages/ as measured, 4 provider packages among $OTHERS other charts, into $tree (not timed)"
	"$work/gentree" -shape monorepo -n 4 -others "$OTHERS" -size "${MB}MB" -out "$tree" 2>&1 | sed 's/^/    /'
	find "$tree" -type f -print0 | xargs -0 cat >/dev/null
	echo "--- timing the monorepo (best of $REPEAT_MONOREPO, interleaved)"
	for ((i = 0; i < REPEAT_MONOREPO; i++)); do
		rm -rf "$work/cache" && mkdir "$work/cache"
		measure verifier-mono env XDG_CACHE_HOME="$work/cache" "$VERIFIER" check --output json "$tree"
		if [ -n "$BEFORE" ]; then
			rm -rf "$work/cache" && mkdir "$work/cache"
			measure before-mono env XDG_CACHE_HOME="$work/cache" "$work/verifier-before" check --output json "$tree"
		fi
		measure floor-mono bash "$SELF" --floor "$tree"
	done
	if [ "${R_RC[verifier-mono]}" != 0 ]; then
		echo "!!! verifier check exited ${R_RC[verifier-mono]} on the generated monorepo:"
		"$VERIFIER" check "$tree" 2>&1 | sed -n 1,40p | sed 's/^/    /'
		failed=1
	fi
	if [ "${BENCH_KEEP:-0}" != 1 ]; then rm -rf "$tree"; fi
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)
run_size "$N_SMALL" "$REPEAT_SMALL"
if [ "$N_LARGE" -gt 0 ]; then run_size "$N_LARGE" "$REPEAT_LARGE"; fi
if [ "$MONOREPO" = 1 ]; then run_monorepo; fi

mib() { if [ -n "$TIME" ] && [ "${1:-0}" -gt 0 ]; then awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; else echo n/a; fi; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b; else print "n/a"}'; }
# verdict VALUE OP TARGET: "ok" or "MISSED" (never an error).
verdict() { awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {
	if (v == "n/a") { print "n/a"; exit }
	ok = (op == ">=") ? v >= t : (op == "<=") ? v <= t : v < t
	print ok ? "ok" : "MISSED" }'; }

echo
echo "=== verifier benchmark: $SHAPE-shaped trees, ${MB} MiB YAML scale, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)"
echo "    wall seconds: best of $REPEAT_SMALL (N=$N_SMALL) / $REPEAT_LARGE (N=$N_LARGE); CPU = user+sys seconds; RSS = peak MiB"
printf '%-46s %9s %7s %7s' "" "N=$N_SMALL s" "CPU s" "RSS"
if [ "$N_LARGE" -gt 0 ]; then printf ' %10s %7s %7s' "N=$N_LARGE s" "CPU s" "RSS"; fi
echo
rows=("verifier:verifier check --output json")
if [ -n "$BEFORE" ]; then rows+=("before:verifier check, built from $BEFORE"); fi
for row in "${rows[@]}" "shell:shell pipeline (gzip|cmp, od, grep, sha256sum)" "floor:floor (gzip -dc all; sha256sum all)"; do
	k=${row%%:*}
	printf '%-46s %9s %7s %7s' "${row#*:}" "${R_SECS[$k-$N_SMALL]}" "${R_CPU[$k-$N_SMALL]}" "$(mib "${R_RSS[$k-$N_SMALL]}")"
	if [ "$N_LARGE" -gt 0 ]; then printf ' %10s %7s %7s' "${R_SECS[$k-$N_LARGE]}" "${R_CPU[$k-$N_LARGE]}" "$(mib "${R_RSS[$k-$N_LARGE]}")"; fi
	echo
done
echo
r=$(ratio "${R_SECS[shell-$N_SMALL]}" "${R_SECS[verifier-$N_SMALL]}")
printf '%-44s %10s   target >= 5    %s\n' "shell / verifier at N=$N_SMALL" "$r" "$(verdict "$r" '>=' 5)"
floor_ratios() { # N
	local r
	r=$(ratio "${R_SECS[verifier-$1]}" "${R_SECS[floor-$1]}")
	printf '%-44s %10s   target <= 0.5  %s\n' "verifier / floor at N=$1 (wall)" "$r" "$(verdict "$r" '<=' 0.5)"
	r=$(ratio "${R_CPU[verifier-$1]}" "${R_CPU[floor-$1]}")
	printf '%-44s %10s   target <= 1    %s\n' "verifier CPU / floor CPU at N=$1" "$r" "$(verdict "$r" '<=' 1)"
	if [ -n "$BEFORE" ]; then
		printf '%-44s %10s (wall)  %s (CPU)\n' "before ($BEFORE) / floor at N=$1" "$(ratio "${R_SECS[before-$1]}" "${R_SECS[floor-$1]}")" "$(ratio "${R_CPU[before-$1]}" "${R_CPU[floor-$1]}")"
	fi
}
floor_ratios "$N_SMALL"
if [ "$N_LARGE" -gt 0 ]; then
	printf '%-44s %10s\n' "shell / verifier at N=$N_LARGE" "$(ratio "${R_SECS[shell-$N_LARGE]}" "${R_SECS[verifier-$N_LARGE]}")"
	floor_ratios "$N_LARGE"
	# Linear growth: t(large)/t(small) <= 1.1 * large/small (11 for 1000/100).
	lim=$(awk -v a="$N_LARGE" -v b="$N_SMALL" 'BEGIN {printf "%.4g", 1.1 * a / b}')
	r=$(ratio "${R_SECS[verifier-$N_LARGE]}" "${R_SECS[verifier-$N_SMALL]}")
	printf '%-44s %10s   target <= %-5s %s\n' "t($N_LARGE) / t($N_SMALL), verifier" "$r" "$lim" "$(verdict "$r" '<=' "$lim")"
	m=$(mib "${R_RSS[verifier-$N_LARGE]}")
	printf '%-44s %10s   target < 256   %s\n' "verifier peak RSS MiB at N=$N_LARGE" "$m" "$(verdict "$m" '<' 256)"
fi
m=$(mib "${R_RSS[verifier-$N_SMALL]}")
printf '%-44s %10s   target <= 120  %s\n' "verifier peak RSS MiB at N=$N_SMALL" "$m" "$(verdict "$m" '<=' 120)"
echo
printf '%-44s %9s s %5s s CPU %5s MiB\n' "warm run at N=$N_SMALL (one package changed)" "${R_SECS[warm-$N_SMALL]:-n/a}" "${R_CPU[warm-$N_SMALL]:-n/a}" "$(mib "${R_RSS[warm-$N_SMALL]:-0}")"
r=$(ratio "${R_SECS[warm-$N_SMALL]:-n/a}" "${R_SECS[floor-$N_SMALL]}")
printf '%-44s %10s   target <= 0.2  %s\n' "warm / floor at N=$N_SMALL (wall)" "$r" "$(verdict "$r" '<=' 0.2)"
r=$(ratio "${R_CPU[warm-$N_SMALL]:-n/a}" "${R_CPU[floor-$N_SMALL]}")
printf '%-44s %10s   target <= 0.2  %s\n' "warm CPU / floor CPU at N=$N_SMALL" "$r" "$(verdict "$r" '<=' 0.2)"
if [ "$MONOREPO" = 1 ]; then
	echo
	echo "monorepo (4 provider packages, $OTHERS other charts): wall s, CPU s, RSS MiB"
	printf '  %-42s %9s %7s %7s\n' "verifier check" "${R_SECS[verifier-mono]}" "${R_CPU[verifier-mono]}" "$(mib "${R_RSS[verifier-mono]}")"
	if [ -n "$BEFORE" ]; then
		printf '  %-42s %9s %7s %7s\n' "verifier check, built from $BEFORE" "${R_SECS[before-mono]}" "${R_CPU[before-mono]}" "$(mib "${R_RSS[before-mono]}")"
	fi
	printf '  %-42s %9s %7s %7s\n' "floor" "${R_SECS[floor-mono]}" "${R_CPU[floor-mono]}" "$(mib "${R_RSS[floor-mono]}")"
	if [ -n "$BEFORE" ]; then
		r=$(ratio "${R_SECS[verifier-mono]}" "${R_SECS[before-mono]}")
		printf '%-44s %10s   target <= 1    %s\n' "monorepo: verifier / before ($BEFORE), wall" "$r" "$(verdict "$r" '<=' 1)"
		r=$(ratio "${R_CPU[verifier-mono]}" "${R_CPU[before-mono]}")
		printf '%-44s %10s   target <= 1    %s\n' "monorepo: verifier / before ($BEFORE), CPU" "$r" "$(verdict "$r" '<=' 1)"
	fi
fi
# --- The one table: the issue's rows and columns, each cell wall s / CPU s /
# peak RSS MiB (the floor's RSS is its largest process), then a line per
# target.
cell() { # KEY
	if [ -z "${R_SECS[$1]:-}" ] || [ "${R_SECS[$1]}" = skipped ]; then echo "-"; return; fi
	echo "${R_SECS[$1]} / ${R_CPU[$1]} / $(mib "${R_RSS[$1]}")"
}
fmt_n() { printf "%'d" "$1" 2>/dev/null || echo "$1"; }
echo
echo "=== the targets' table: wall s / CPU s / peak RSS MiB; $(nproc) CPUs; load average $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a) at the end (1, 5, 15 min)"
printf '%-40s | %-24s | %-24s | %-20s\n' "" "pinseal" "before${BEFORE:+ ($BEFORE)}" "floor"
printf '%-40s | %-24s | %-24s | %-20s\n' "$(fmt_n "$N_SMALL") packages" "$(cell "verifier-$N_SMALL")" "$(cell "before-$N_SMALL")" "$(cell "floor-$N_SMALL")"
if [ "$N_LARGE" -gt 0 ]; then
	printf '%-40s | %-24s | %-24s | %-20s\n' "$(fmt_n "$N_LARGE") packages" "$(cell "verifier-$N_LARGE")" "$(cell "before-$N_LARGE")" "$(cell "floor-$N_LARGE")"
fi
printf '%-40s | %-24s | %-24s | %-20s\n' "warm, one package changed ($N_SMALL)" "$(cell "warm-$N_SMALL")" "-" "$(cell "floor-$N_SMALL")"
if [ "$MONOREPO" = 1 ]; then
	printf '%-40s | %-24s | %-24s | %-20s\n' "monorepo (4 providers, $OTHERS charts)" "$(cell verifier-mono)" "$(cell before-mono)" "$(cell floor-mono)"
fi
target() { # LABEL VALUE OP LIMIT
	printf '  %-52s %8s   target %-2s %-5s %s\n' "$1" "$2" "$3" "$4" "$(verdict "$2" "$3" "$4")"
}
for n in "$N_SMALL" "$N_LARGE"; do
	[ "$n" -gt 0 ] || continue
	target "$(fmt_n "$n") packages: pinseal / floor, wall" "$(ratio "${R_SECS[verifier-$n]}" "${R_SECS[floor-$n]}")" '<=' 0.5
	target "$(fmt_n "$n") packages: pinseal / floor, CPU" "$(ratio "${R_CPU[verifier-$n]}" "${R_CPU[floor-$n]}")" '<=' 1
done
target "$(fmt_n "$N_SMALL") packages: pinseal peak RSS MiB" "$(mib "${R_RSS[verifier-$N_SMALL]}")" '<=' 120
target "warm: pinseal / floor at $(fmt_n "$N_SMALL"), wall" "$(ratio "${R_SECS[warm-$N_SMALL]:-n/a}" "${R_SECS[floor-$N_SMALL]}")" '<=' 0.2
target "warm: pinseal / floor at $(fmt_n "$N_SMALL"), CPU" "$(ratio "${R_CPU[warm-$N_SMALL]:-n/a}" "${R_CPU[floor-$N_SMALL]}")" '<=' 0.2
if [ "$MONOREPO" = 1 ]; then
	target "monorepo: pinseal / before, wall" "$(ratio "${R_SECS[verifier-mono]}" "${R_SECS[before-mono]:-n/a}")" '<=' 1
	target "monorepo: pinseal / before, CPU" "$(ratio "${R_CPU[verifier-mono]}" "${R_CPU[before-mono]:-n/a}")" '<=' 1
fi
exit $failed
