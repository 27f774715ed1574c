#!/usr/bin/env bash
# Moves the packages of pkg/ that are not a library for other modules to
# internal/ (docs/architecture.md, "Library or internal", says which and
# why), and rewrites every reference to them: Go import paths, and paths
# such as internal/remote in Go comments, docs, scripts, the Makefile and CI.
#
# Usage: scripts/internalize.sh [PACKAGE...]
#   PACKAGE is a path below pkg/ (remote, pin/infer); with none, the list
#   below. Run it from anywhere in the repository, on a clean work tree.
#
# It is idempotent: a package already under internal/ is not moved again,
# and a reference already rewritten no longer matches. It ends with gofmt
# (import blocks re-sorted) and go build; run the tests after it.
set -euo pipefail

cd "$(git rev-parse --show-toplevel)"
module=$(go list -m)

# The packages no library's exported API exposes (see docs/architecture.md).
default=(
	images
	layout
	metadata
	operator
	patch
	pin/infer
	yamlbound
)
if [ $# -gt 0 ]; then
	pkgs=("$@")
else
	pkgs=("${default[@]}")
fi

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "internalize: the work tree has uncommitted changes; commit or stash them first" >&2
	exit 1
fi

# Text files that may name a package by path, tracked by git.
text_files() {
	git ls-files -z -- '*.go' '*.md' '*.sh' '*.yaml' '*.yml' '*.json' 'Makefile' '.ci/*' '.github/*' |
		xargs -0 -r grep -lIZ -e "pkg/$1" -- 2>/dev/null || true
}

moved=0
for p in "${pkgs[@]}"; do
	p=${p#pkg/}
	p=${p%/}
	src=pkg/$p
	dst=internal/$p
	if [ -d "$src" ]; then
		if [ -e "$dst" ]; then
			echo "internalize: $dst already exists; not moving $src" >&2
			exit 1
		fi
		mkdir -p "$(dirname "$dst")"
		git mv "$src" "$dst"
		echo "moved $src -> $dst"
		moved=$((moved + 1))
	elif [ -d "$dst" ]; then
		echo "already internal: $dst"
	else
		echo "internalize: no package $src (nor $dst)" >&2
		exit 1
	fi

	# The path, not a longer one (pkg/pin is not internal/pin/infer's prefix to
	# rewrite; internal/remote must not match pkg/remotes): what follows is not a
	# name character. The import path is rewritten wherever it stands; a
	# bare pkg/... path only where a path starts, with or without ./ or
	# ../ (a link in docs), not inside another module's path such as
	# k8s.io/apimachinery/pkg/labels.
	esc=$(printf '%s' "$p" | sed 's/[.[\*^$/]/\\&/g')
	text_files "$p" | xargs -0 -r sed -i -E \
		-e "s#${module//./\\.}/pkg/${esc}([^A-Za-z0-9_-]|\$)#${module}/internal/${p}\\1#g" \
		-e "s#(^|[^A-Za-z0-9_./-])((\\.\\.?/)*)pkg/${esc}([^A-Za-z0-9_-]|\$)#\\1\\2internal/${p}\\4#g"
done

# Import blocks sort by path: internal/ and pkg/ trade places.
git ls-files -z -- '*.go' | xargs -0 gofmt -l -w >/dev/null
go build ./...
echo "internalize: $moved package(s) moved; now run go vet -tags integration ./... and the tests"
