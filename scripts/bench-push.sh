#!/usr/bin/env bash
# bench-push.sh — push and sign one provider release: `builder push --key`
# against the upstream CLIs doing the same job, `oras push` of the same three
# files plus `cosign sign` of the pushed digest, in the same run, against one
# docker-registry on 127.0.0.1. builder push --key also attaches a SLSA
# provenance attestation; a second baseline adds `cosign attest` for that.
# Target: builder no slower than oras push + cosign sign (ratio >= 1.00).
#
# Runs standalone or from scripts/bench.sh (make bench). Missing peers
# (docker-registry, oras, cosign) skip the section; a wrong output (the
# signature does not verify, oras pulls other bytes) fails it.
#
# Environment: BENCH_PUSH_ROUNDS (7) rounds, each pushing to fresh
# repositories; BENCH_PUSH_PKG (examples/packages/capi-providers-core) the
# package; BUILDER (build ./cmd/builder) the builder binary; GO (go).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
GO=${GO:-go}
ROUNDS=${BENCH_PUSH_ROUNDS:-7}
PKG=${BENCH_PUSH_PKG:-$ROOT/examples/packages/capi-providers-core}
GOBIN_DIR=$("$GO" env GOPATH 2>/dev/null | cut -d: -f1)/bin
export PATH="$PATH:$GOBIN_DIR"

skip() { echo "$* — section skipped"; exit 0; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

REGISTRY=$(command -v docker-registry || command -v registry || true)
[ -n "$REGISTRY" ] || skip "docker-registry not installed (apt-get install docker-registry)"
command -v oras >/dev/null || skip "oras not installed (go install oras.land/oras/cmd/oras@v1.3.6)"
command -v cosign >/dev/null || skip "cosign not installed (go install github.com/sigstore/cosign/v2/cmd/cosign@v2.6.5)"
[ -f "$PKG/pin.yaml" ] || skip "no package at $PKG"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pinseal-bench-push.XXXXXX")
regpid=
cleanup() {
	[ -z "$regpid" ] || kill "$regpid" 2>/dev/null || true
	[ -z "$regpid" ] || wait "$regpid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

BUILDER=${BUILDER:-}
if [ -z "$BUILDER" ]; then
	"$GO" build -o "$tmp/builder" ./cmd/builder
	BUILDER=$tmp/builder
fi

# A free port on 127.0.0.1: one nothing answers on.
port=
for _ in $(seq 1 50); do
	p=$((20000 + RANDOM % 40000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || { echo "FAIL: no free port"; exit 1; }
HOST=127.0.0.1:$port
cat >"$tmp/registry.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $tmp/storage
  delete:
    enabled: true
http:
  addr: $HOST
  secret: pinseal-bench
EOF
"$REGISTRY" serve "$tmp/registry.yml" >"$tmp/registry.log" 2>&1 &
regpid=$!
for _ in $(seq 1 200); do
	curl -fsS -o /dev/null "http://$HOST/v2/" 2>/dev/null && break
	sleep 0.05
done
curl -fsS -o /dev/null "http://$HOST/v2/" || { echo "FAIL: docker-registry did not start:"; cat "$tmp/registry.log"; exit 1; }

# Both sides sign with the same cosign key; cosign needs no network here
# (--tlog-upload=false; its TUF lookup fails fast offline, as in CI).
export COSIGN_PASSWORD=bench COSIGN_YES=true HOME=$tmp/home TUF_ROOT=$tmp/home/.sigstore
mkdir -p "$HOME"
"$BUILDER" keygen --output-key-prefix "$tmp/cosign" >/dev/null

# The same three files oras pushes, titled as builder push titles them.
release=$(awk '/^ *release:/ {print $2; exit}' "$PKG/pin.yaml")
typ=$(awk '/^- kind:/ {print $3; exit}' "$PKG/pin.yaml")
case $typ in
CoreProvider) t=core ;; BootstrapProvider) t=bootstrap ;; ControlPlaneProvider) t=controlplane ;;
InfrastructureProvider) t=infrastructure ;; IPAMProvider) t=ipam ;; AddonProvider) t=addon ;; *) t=runtimeextension ;;
esac
mkdir -p "$tmp/files"
cp "$PKG/files/components.gz" "$tmp/files/components.gz"
cp "$PKG/files/metadata.yaml" "$tmp/files/metadata.yaml"
cp "$PKG"/files/*-components.yaml "$tmp/files/components.yaml"
cat >"$tmp/predicate.json" <<'EOF'
{"buildDefinition":{"buildType":"https://github.com/pinseal/pinseal/buildtypes/provider-release/v1","externalParameters":{},"resolvedDependencies":[{"uri":"https://example.invalid/components.yaml","digest":{"sha256":"0000000000000000000000000000000000000000000000000000000000000000"}}]},"runDetails":{"builder":{"id":"https://example.invalid/builder"}}}
EOF

echo "one release of $(basename "$PKG") ($release): $(du -cb "$tmp"/files/* | tail -1 | cut -f1) bytes in 3 files; $ROUNDS rounds, fresh repositories each round, docker-registry on $HOST"
echo "  ours:     builder push PKG --to $HOST/oursN --plain-http --key cosign.key --signature-format legacy   (push + sign + SLSA attestation, one process; legacy form, like cosign v2's)"
echo "  upstream: oras push (3 files) + cosign sign --tlog-upload=false              ($(oras version | sed -n 1p | awk '{print $2}'), cosign $(cosign version 2>/dev/null | awk '/GitVersion/ {print $2}'))"
echo "  upstream+attest: the above + cosign attest --type slsaprovenance1"

TIMEFORMAT='%R %U %S'
: >"$tmp/t.ours"
: >"$tmp/t.up"
: >"$tmp/t.att"
for ((r = 0; r < ROUNDS; r++)); do
	{ time "$BUILDER" push "$PKG" --to "$HOST/ours$r" --plain-http --key "$tmp/cosign.key" --signature-format legacy >"$tmp/ours.out"; } 2>>"$tmp/t.ours"
	repo=$HOST/up$r/$t-$(awk '/^ *name:/ {print $2; exit}' "$PKG/pin.yaml")
	{ time {
		d=$(cd "$tmp/files" && oras push --plain-http --artifact-type application/vnd.pinseal.provider.v1+json \
			"$repo:$release" components.gz metadata.yaml components.yaml --format go-template --template '{{.digest}}')
		cosign sign --key "$tmp/cosign.key" --tlog-upload=false --allow-insecure-registry "$repo@$d" >/dev/null 2>&1
	}; } 2>>"$tmp/t.up"
	repo=$HOST/att$r/$t-x
	{ time {
		d=$(cd "$tmp/files" && oras push --plain-http --artifact-type application/vnd.pinseal.provider.v1+json \
			"$repo:$release" components.gz metadata.yaml components.yaml --format go-template --template '{{.digest}}')
		cosign sign --key "$tmp/cosign.key" --tlog-upload=false --allow-insecure-registry "$repo@$d" >/dev/null 2>&1
		cosign attest --key "$tmp/cosign.key" --type slsaprovenance1 --predicate "$tmp/predicate.json" \
			--tlog-upload=false --allow-insecure-registry "$repo@$d" >/dev/null 2>&1
	}; } 2>>"$tmp/t.att"
done

# Correctness: cosign accepts what builder pushed, and oras pulls the files back.
ref=$(awk '/^(pushed|unchanged)/ {print $2; exit}' "$tmp/ours.out")
[ -n "$ref" ] || { echo "FAIL: builder push printed no reference:"; cat "$tmp/ours.out"; exit 1; }
cosign verify --key "$tmp/cosign.pub" --insecure-ignore-tlog --allow-insecure-registry "$ref" >/dev/null 2>&1 ||
	{ echo "FAIL: cosign verify rejects the signature builder push made"; exit 1; }
cosign verify-attestation --type slsaprovenance1 --key "$tmp/cosign.pub" --insecure-ignore-tlog --allow-insecure-registry "$ref" >/dev/null 2>&1 ||
	{ echo "FAIL: cosign verify-attestation rejects the attestation builder push made"; exit 1; }
mkdir -p "$tmp/pulled"
oras pull --plain-http -o "$tmp/pulled" "$ref" >/dev/null
for f in components.gz metadata.yaml components.yaml; do
	cmp -s "$tmp/pulled/$f" "$tmp/files/$f" || { echo "FAIL: oras pulls a $f that differs from the package's"; exit 1; }
done
echo "  checked: cosign verify and verify-attestation accept builder's output; oras pulls the 3 files byte-identical"

ow=$(awk '{print $1}' "$tmp/t.ours" | median); oc=$(awk '{print $2+$3}' "$tmp/t.ours" | median)
uw=$(awk '{print $1}' "$tmp/t.up" | median); uc=$(awk '{print $2+$3}' "$tmp/t.up" | median)
aw=$(awk '{print $1}' "$tmp/t.att" | median); ac=$(awk '{print $2+$3}' "$tmp/t.att" | median)
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
cores=$(nproc 2>/dev/null || echo 1)
echo "  load average $load on $cores cores (medians of $ROUNDS rounds)"
awk -v ow="$ow" -v oc="$oc" -v uw="$uw" -v uc="$uc" -v aw="$aw" -v ac="$ac" 'BEGIN {
	printf "  %-40s wall %6.3f s | cpu %6.3f s\n", "builder push --key (push+sign+attest)", ow, oc
	printf "  %-40s wall %6.3f s | cpu %6.3f s\n", "oras push + cosign sign", uw, uc
	printf "  %-40s wall %6.3f s | cpu %6.3f s\n", "oras push + cosign sign + cosign attest", aw, ac
	printf "  ratio (oras+cosign sign) / builder: %.2fx wall, %.2fx cpu (target >= 1.00: %s)\n", uw/ow, uc/oc, (uw/ow >= 1.0 ? "met" : "MISSED")
	printf "  ratio (oras+cosign sign+attest) / builder: %.2fx wall, %.2fx cpu\n", aw/ow, ac/oc
}'
