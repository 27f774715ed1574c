#!/usr/bin/env bash
# demo.sh — what `make demo` runs: the main job of pinseal on the embedded
# example, with nothing but this repository and 127.0.0.1.
#
#   1. serve examples/upstream (the "upstream release servers") on
#      127.0.0.1:8089, the address examples/packages/*/pin.yaml pin
#   2. `builder build` the example packages in a temporary copy (the repo
#      stays clean), downloading over HTTP into an empty cache
#   3. show what was built: sizes, SHA-256, gzip -t, blob == YAML, and that
#      the rebuilt files are byte-identical to the committed ones
#   4. build again: a no-op, every file unchanged
#   5. a build that fails (a wrong pin) changes nothing
#   6. `verifier check` on the built tree, once that command exists
#   7+ later steps (push, verify) — appended below by their owners
#
# Variables for later steps: DEMO_TMP (temp dir, removed on exit), DEMO_TREE
# (the built copy of examples/packages), BUILDER, VERIFIER, UPSTREAM (the
# base URL of the local upstream server), DEMO_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BUILDER=${BUILDER:-$ROOT/bin/builder}
VERIFIER=${VERIFIER:-$ROOT/bin/verifier}
GO=${GO:-go}
PORT=${DEMO_PORT:-8089} # the port the example pins name

if [ -t 1 ]; then B=$'\033[1m' N=$'\033[0m'; else B= N=; fi
step() { printf '\n%s==> %s%s\n' "$B" "$*" "$N"; }
note() { printf '    %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

[ -x "$BUILDER" ] || die "$BUILDER is missing: run 'make build' (make demo does)"

DEMO_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pinseal-demo.XXXXXX")
SERVER_PID=
cleanup() {
	if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
	rm -rf "$DEMO_TMP"
}
trap cleanup EXIT
DEMO_TREE=$DEMO_TMP/tree/packages
DEMO_CACHE=$DEMO_TMP/cache
export DEMO_TMP DEMO_TREE DEMO_CACHE BUILDER VERIFIER

# ---------------------------------------------------------------------------
step "1. Serve the pinned upstream files (examples/upstream) on 127.0.0.1:$PORT"
"$GO" build -o "$DEMO_TMP/bin/devserve" ./internal/testkit/devserve
start_server() {
	rm -f "$DEMO_TMP/server.addr"
	"$DEMO_TMP/bin/devserve" -dir examples/upstream -addr "$1" -ready "$DEMO_TMP/server.addr" \
		2>"$DEMO_TMP/server.log" &
	SERVER_PID=$!
	for _ in $(seq 100); do
		[ -s "$DEMO_TMP/server.addr" ] && return 0
		kill -0 "$SERVER_PID" 2>/dev/null || { SERVER_PID=; return 1; }
		sleep 0.1
	done
	return 1
}
mkdir -p "$DEMO_TMP/tree"
cp -R examples/packages "$DEMO_TMP/tree/"
if ! start_server "127.0.0.1:$PORT"; then
	# Port taken (another demo?): serve on a free port and point the temp
	# copy's pins at it. The digests are unchanged, so the pins still hold
	# the build to exactly the same bytes.
	note "127.0.0.1:$PORT is busy: $(tail -1 "$DEMO_TMP/server.log")"
	start_server "127.0.0.1:0" || die "cannot start the local upstream server: $(cat "$DEMO_TMP/server.log")"
	NEWPORT=$(sed 's/.*://' "$DEMO_TMP/server.addr")
	note "serving on 127.0.0.1:$NEWPORT instead; rewriting the URLs of the temp copy's pin.yaml files"
	sed -i "s|http://127.0.0.1:$PORT/|http://127.0.0.1:$NEWPORT/|" "$DEMO_TREE"/*/pin.yaml
	PORT=$NEWPORT
fi
UPSTREAM=http://127.0.0.1:$PORT
export UPSTREAM
note "upstream server: $UPSTREAM (pid $SERVER_PID)"
grep -h 'url:' "$DEMO_TREE"/*/pin.yaml | sed 's/^ *- url: /    pinned: /'

# ---------------------------------------------------------------------------
step "2. Build the example packages from their pins (fresh copy, empty cache)"
# Start from a checkout without vendored outputs, as a new package would.
for p in "$DEMO_TREE"/*/; do rm -f "$p"files/*; done
PACKAGES=()
for p in "$DEMO_TREE"/*/; do p=${p%/}; PACKAGES+=("${p##*/}"); done
note "\$ builder build --cache \$DEMO_TMP/cache ${PACKAGES[*]}"
(cd "$DEMO_TREE" && "$BUILDER" build --cache "$DEMO_CACHE" "${PACKAGES[@]}")
note "downloads the server saw:"
grep -o 'path=[^ ]* status=[0-9]* bytes=[0-9]*' "$DEMO_TMP/server.log" | sed 's/^/      /'

# ---------------------------------------------------------------------------
step "3. What was built"
for p in "$DEMO_TREE"/*/; do
	name=$(basename "$p")
	echo "    $name/files:"
	(cd "$p/files" && for f in *; do
		printf '      %-36s %8d bytes  sha256:%s\n' "$f" "$(wc -c <"$f")" "$(sha256sum "$f" | cut -d' ' -f1)"
	done)
	blob=$p/files/components.gz
	yaml=$(ls "$p"/files/*components.yaml)
	if command -v gzip >/dev/null; then
		gzip -t "$blob" && note "gzip -t $name/files/components.gz: ok"
		gzip -dc "$blob" | cmp -s - "$yaml" && note "gunzip(components.gz) == $(basename "$yaml"): byte for byte"
	else
		note "(GNU gzip not installed: skipping gzip -t)"
	fi
	hdr=$(head -c 10 "$blob" | od -An -tx1 | tr -d ' \n')
	note "gzip header: $hdr  (flags 00: no name/comment/extra; MTIME 00000000)"
done
for p in "$DEMO_TREE"/*/; do
	name=$(basename "$p")
	if ! diff -r "examples/packages/$name/files" "$p/files" >/dev/null; then
		diff -r "examples/packages/$name/files" "$p/files" | sed -n 1,20p
		die "the rebuilt files of $name differ from the committed ones"
	fi
done
note "rebuilt files are byte-identical to the committed examples/packages/*/files: the build is reproducible"
if grep -q startupProbe "$DEMO_TREE"/capi-providers-infraprovider/files/infrastructure-components.yaml; then
	note "patches/0001-capmox-startup-probe.diff was applied (startupProbe present in YAML and blob)"
fi

# ---------------------------------------------------------------------------
step "4. Build again: nothing to do"
mtimes() { find "$DEMO_TREE" -path '*/files/*' -type f -printf '%p %T@\n' | sort; }
before=$(mtimes)
out=$(cd "$DEMO_TREE" && "$BUILDER" build --cache "$DEMO_CACHE" "${PACKAGES[@]}")
echo "$out" | sed 's/^/    /'
if echo "$out" | grep -qE '^ +written'; then die "second build rewrote files"; fi
[ "$before" = "$(mtimes)" ] || die "second build touched files: their mtimes changed"
note "every file unchanged; mtimes untouched (checked)"

# ---------------------------------------------------------------------------
step "5. A build with a wrong pin fails and changes nothing"
bad=$DEMO_TMP/bad/capi-providers-core
mkdir -p "$(dirname "$bad")"
cp -R "$DEMO_TREE/capi-providers-core" "$bad"
# Pin different bytes than upstream serves (as if upstream re-tagged a release).
sed -i '0,/sha256: /s/sha256: [0-9a-f]\{4\}/sha256: 0000/' "$bad/pin.yaml"
before=$(cd "$bad" && find . -type f -exec sha256sum {} + | sort)
if "$BUILDER" build --cache "$DEMO_TMP/cache-bad" "$bad" 2>"$DEMO_TMP/bad.err"; then
	die "a build with a wrong pin succeeded"
fi
sed "s|$DEMO_TMP|\$DEMO_TMP|g; s/^/    /" "$DEMO_TMP/bad.err"
after=$(cd "$bad" && find . -type f -exec sha256sum {} + | sort)
[ "$before" = "$after" ] || die "the failed build changed files"
note "exit status 1; every file of the package is as it was"

# ---------------------------------------------------------------------------
step "6. Verify the built tree"
note "\$ verifier check \$DEMO_TMP/tree"
"$VERIFIER" check "$DEMO_TMP/tree"

# ---------------------------------------------------------------------------
step "7. Push signed artifacts into an OCI image layout (the embedded default: no registry)"
export COSIGN_PASSWORD=${COSIGN_PASSWORD:-demo-password}
( cd "$DEMO_TMP" && "$BUILDER" keygen --output-key-prefix demo >/dev/null )
note "key pair: \$DEMO_TMP/demo.key (encrypted with \$COSIGN_PASSWORD), \$DEMO_TMP/demo.pub"
LAYOUT=oci-layout:$DEMO_TMP/oci
"$BUILDER" push --to "$LAYOUT" --key "$DEMO_TMP/demo.key" "${PACKAGES[@]/#/$DEMO_TREE/}" | sed "s|$DEMO_TMP|\$DEMO_TMP|g; s/^/    /"
note "push again: the same digests, no new signatures"
"$BUILDER" push --to "$LAYOUT" --key "$DEMO_TMP/demo.key" "${PACKAGES[@]/#/$DEMO_TREE/}" | sed "s|$DEMO_TMP|\$DEMO_TMP|g; s/^/    /"

# ---------------------------------------------------------------------------
step "8. Check the tree against its registry copy: blob, metadata, signature, provenance"
"$VERIFIER" check "$DEMO_TMP/tree" --registry "$LAYOUT" --key "$DEMO_TMP/demo.pub" | sed "s|$DEMO_TMP|\$DEMO_TMP|g"

# ---------------------------------------------------------------------------
step "9. The deploy gate for one artifact: verifier verify REF"
REF="$LAYOUT/infrastructure-proxmox:v0.7.7-infraprovider-proxmox"
note "\$ verifier verify $REF --key demo.pub" | sed "s|$DEMO_TMP|\$DEMO_TMP|g"
"$VERIFIER" verify "$REF" --key "$DEMO_TMP/demo.pub" | sed "s|$DEMO_TMP|\$DEMO_TMP|g"

# ---------------------------------------------------------------------------
step "10. Drift: edit the YAML without rebuilding the blob — the gate goes red"
sed -i '0,/replicas: 1/s//replicas: 2/' "$DEMO_TREE/capi-providers-infraprovider/files/infrastructure-components.yaml"
if "$VERIFIER" check "$DEMO_TMP/tree" --registry "$LAYOUT" --key "$DEMO_TMP/demo.pub" >"$DEMO_TMP/drift.out" 2>&1; then
	die "verifier check passed a drifted tree"
fi
sed "s|$DEMO_TMP|\$DEMO_TMP|g; s/^/    /" "$DEMO_TMP/drift.out" | grep -E 'error|FAIL|FAILED' | sed -n 1,8p
note "exit status 1: blob-yaml, pin-digest and version-reused say what drifted and how to fix it"

step "Done. To install the packages on a cluster:"
note "1. cert-manager and the cluster-api-operator (v0.28.0), each from its own release:"
note "   the providers' webhooks take their certificates from cert-manager's Issuer and Certificate"
note "2. the charts, as Helm installs them (namespace, components ConfigMaps, provider objects):"
note "   helm install capi-providers-core examples/packages/capi-providers-core -n cozy-cluster-api --create-namespace"
note "   helm install capi-providers-infraprovider examples/packages/capi-providers-infraprovider -n cozy-cluster-api"
note "   (or push with \`builder push --to HOST/PATH --key KEY\` and point spec.fetchConfig.oci at the tag)"
note "3. once the operator reports ProviderInstalled=True, compare what the cluster runs with this tree:"
note "   verifier cluster --tree examples/packages  (docs/cluster.md)"
note "verifier check ran components-apply above: the API server accepts every CRD and kind these releases apply"
