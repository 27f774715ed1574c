#!/usr/bin/env bash
# bench-serve.sh — the verifier service under load, on 127.0.0.1 (a section
# of `make bench`; runs standalone too). It builds internal/testkit/loadtest,
# which starts the server in a child process and measures:
#   - cached POST /v1/verify {"ref"} latency at a fixed rate (target p99 <= 5 ms);
#   - the server's RSS while many .tar.gz uploads of a synthetic tree arrive
#     at once, verified by the real engine.
# Environment: BENCH_SERVE_RATE (200 req/s), BENCH_SERVE_DURATION (10s),
# BENCH_SERVE_UPLOADS (100), BENCH_SERVE_PACKAGES (4), BENCH_SERVE_SIZE (1MiB); GO (go).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pinseal-bench-serve.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$GO" build -o "$tmp/loadtest" ./internal/testkit/loadtest
"$tmp/loadtest" \
	-rate "${BENCH_SERVE_RATE:-200}" \
	-duration "${BENCH_SERVE_DURATION:-10s}" \
	-uploads "${BENCH_SERVE_UPLOADS:-100}" \
	-packages "${BENCH_SERVE_PACKAGES:-4}" \
	-size "${BENCH_SERVE_SIZE:-1MiB}"
