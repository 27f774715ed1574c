#!/usr/bin/env bash
# build-kube.sh [CACHE_DIR] — builds the kube-apiserver and etcd the cluster
# integration tests run against, from the module in
# internal/testkit/kubeapiserver (its own go.mod, so pinseal's go.mod never
# depends on k8s.io/kubernetes), into CACHE_DIR (default
# ${PINSEAL_KUBE_CACHE:-$HOME/.cache/pinseal/kube}). Outside the repository,
# because a cold build takes minutes and gigabytes of Go build cache: built
# once per machine, skipped when CACHE_DIR already holds both binaries of the
# pinned versions (its VERSIONS file).
#
# Environment: GO (go); BUILD_KUBE_P (go build -p, default Go's own).
set -euo pipefail
cd "$(dirname "$0")/.."
MOD=$PWD/internal/testkit/kubeapiserver
GO=${GO:-go}
CACHE=${1:-${PINSEAL_KUBE_CACHE:-$HOME/.cache/pinseal/kube}}

modversion() { awk -v m="$1" '$1 == m && $2 ~ /^v/ {print $2; exit}' "$MOD/go.mod"; }
KUBE=$(modversion k8s.io/kubernetes)
ETCD=$(modversion go.etcd.io/etcd/server/v3)
[ -n "$KUBE" ] && [ -n "$ETCD" ] || { echo "build-kube: no k8s.io/kubernetes or etcd version in $MOD/go.mod" >&2; exit 1; }
STAMP="kube-apiserver $KUBE etcd $ETCD"

if [ -x "$CACHE/kube-apiserver" ] && [ -x "$CACHE/etcd" ] && [ "$(cat "$CACHE/VERSIONS" 2>/dev/null)" = "$STAMP" ]; then
  echo "build-kube: $CACHE has $STAMP"
  exit 0
fi
mkdir -p "$CACHE"

# Clients reject a server that reports the default "v0.0.0-master", so the
# release version is linked into both packages that report it.
IFS=. read -r MAJOR MINOR _ <<<"${KUBE#v}"
LD="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LD="$LD -X $pkg.gitVersion=$KUBE -X $pkg.gitMajor=$MAJOR -X $pkg.gitMinor=$MINOR -X $pkg.gitTreeState=clean"
done
P=()
[ -z "${BUILD_KUBE_P:-}" ] || P=(-p "$BUILD_KUBE_P")

build() { # build NAME PACKAGE [LDFLAGS]: into a temporary name, then renamed, so a killed build leaves no half binary
  local t0=$SECONDS
  (cd "$MOD" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false "$GO" build "${P[@]}" -trimpath -ldflags "$3" -o "$CACHE/.$1.tmp" "$2")
  mv -f "$CACHE/.$1.tmp" "$CACHE/$1"
  echo "build-kube: $1 built in $((SECONDS - t0)) s"
}
build etcd go.etcd.io/etcd/server/v3 "-s -w"
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$LD"
printf '%s\n' "$STAMP" >"$CACHE/.VERSIONS.tmp" && mv -f "$CACHE/.VERSIONS.tmp" "$CACHE/VERSIONS"
echo "build-kube: $CACHE has $STAMP ($(du -sh "$CACHE" | cut -f1))"
