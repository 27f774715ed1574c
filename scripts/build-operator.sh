#!/usr/bin/env bash
# build-operator.sh [CACHE_DIR] — builds the cluster-api-operator the
# operator integration tests run, from the module in
# internal/testkit/capioperator (its own go.mod: its Kubernetes
# dependencies are neither pinseal's nor the API server's), into CACHE_DIR
# (default ${PINSEAL_KUBE_CACHE:-$HOME/.cache/pinseal/kube}, beside
# kube-apiserver and etcd). Built once per machine, skipped when CACHE_DIR
# already holds the pinned version (its OPERATOR file).
#
# Environment: GO (go); BUILD_KUBE_P (go build -p, default Go's own).
set -euo pipefail
cd "$(dirname "$0")/.."
MOD=$PWD/internal/testkit/capioperator
GO=${GO:-go}
CACHE=${1:-${PINSEAL_KUBE_CACHE:-$HOME/.cache/pinseal/kube}}

OP=$(awk '$1 == "require" && $2 == "sigs.k8s.io/cluster-api-operator" {print $3; exit}' "$MOD/go.mod")
[ -n "$OP" ] || { echo "build-operator: no sigs.k8s.io/cluster-api-operator version in $MOD/go.mod" >&2; exit 1; }
STAMP="cluster-api-operator $OP"

if [ -x "$CACHE/cluster-api-operator" ] && [ "$(cat "$CACHE/OPERATOR" 2>/dev/null)" = "$STAMP" ]; then
  echo "build-operator: $CACHE has $STAMP"
  exit 0
fi
mkdir -p "$CACHE"
P=()
[ -z "${BUILD_KUBE_P:-}" ] || P=(-p "$BUILD_KUBE_P")

# Into a temporary name, then renamed, so a killed build leaves no half
# binary and no stamp.
t0=$SECONDS
(cd "$MOD" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false "$GO" build "${P[@]}" -trimpath -ldflags "-s -w" \
  -o "$CACHE/.cluster-api-operator.tmp" sigs.k8s.io/cluster-api-operator/cmd)
mv -f "$CACHE/.cluster-api-operator.tmp" "$CACHE/cluster-api-operator"
printf '%s\n' "$STAMP" >"$CACHE/.OPERATOR.tmp" && mv -f "$CACHE/.OPERATOR.tmp" "$CACHE/OPERATOR"
echo "build-operator: cluster-api-operator $OP built in $((SECONDS - t0)) s into $CACHE"
