#!/usr/bin/env bash
# bench-render.sh — what bounding Helm rendering costs per chart: each
# example chart rendered in process (Helm's engine, no bound) vs in a render
# child with the time, memory and output bounds (pkg/load
# BenchmarkRenderChart): "bounded" reuses the idle child as a tree load
# does, "bounded-cold" starts a child for the chart (the first chart of a
# load, or the one after a chart that passed a bound).
#
# Standalone: scripts/bench-render.sh   (make bench calls it via scripts/bench.sh)
# Environment: BENCH_RENDER_N (30) renders per figure; GO (go).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
N=${BENCH_RENDER_N:-30}
"$GO" test -run '^$' -bench '^BenchmarkRenderChart$' -benchtime "${N}x" ./pkg/load |
	awk '/^BenchmarkRenderChart\// {
		split($1, p, "/"); sub(/-[0-9]+$/, "", p[3]); ms = $3 / 1e6
		t[p[2], p[3]] = ms; charts[p[2]] = 1
		printf "  %-30s %-13s %8.2f ms/chart\n", p[2], p[3], ms
	}
	END {
		for (c in charts) if (t[c, "in-process"] > 0)
			printf "  %-30s bound costs %+.2f ms/chart warm (%.2fx), %+.2f ms cold\n", c,
				t[c, "bounded"] - t[c, "in-process"], t[c, "bounded"] / t[c, "in-process"],
				t[c, "bounded-cold"] - t[c, "in-process"]
	}'
