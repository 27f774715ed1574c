package gentree

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Shape is what the generated packages look like.
type Shape string

const (
	// Synthetic packages hold one provider each: Chart.yaml, a Makefile,
	// pin.yaml, the components YAML and its blob, metadata and two
	// templates, and a .helmignore-less chart of nothing else. Every
	// package's YAML is Options.Size.
	Synthetic Shape = "synthetic"
	// Real packages are shaped as Cozystack's CAPI provider packages
	// (DESIGN.md, "Real shapes"): the raw YAML ships in the chart beside
	// its blob (no .helmignore, or one whose line files/.*-components.yaml
	// is a glob that matches nothing; one package in eight lists the YAML
	// properly), so their Helm release comes to 30–62 % of a Secret's
	// 1 MiB, where a loose estimate of its size reaches the release-size
	// warning line; YAML sizes spread over 0.46–0.98 × Options.Size (so
	// that releases span what the real four's span), and one package in fifty is larger (up to
	// 1.38 ×: releases of 70–90 %, at the warning line); metadata of
	// 0.3–1.2 KB; a fifth of the
	// packages carry a second provider (25 KB YAML, 4 KB blob, names of
	// their own: files/<type>-components-talos.yaml,
	// files/components-talos.gz) in a third template; a third carry
	// patches/ (a 1.4 KB diff) and images/ (a Dockerfile whose ARG
	// VERSION the Makefile reads, and an 18 KB patch); Makefiles of
	// 0.5–2 KB that include a file outside the package.
	Real Shape = "real"
	// Monorepo is Cozystack's packages/ as measured chart by chart: a
	// handful (Options.Packages) of Cozystack-shaped provider packages
	// among Options.Others charts that are not provider packages, each
	// shaped as one of the 160 measured at MeasuredMonorepo (files,
	// bytes, templates and the constructs they use, subcharts, values
	// and schemas), so the verifier settles, renders (in process or in a
	// render child) or fails to render each as it did the measured one.
	Monorepo Shape = "monorepo"
)

// DefaultOthers is the number of charts that are not provider packages in
// the Monorepo shape: Cozystack's packages/ holds 160 beside its four
// provider packages (measuredOthers).
const DefaultOthers = 160

// realSpec is what the Real shape adds to a package.
type realSpec struct {
	on         bool
	second     bool   // a second provider (talos-style names)
	images     bool   // patches/ and images/ with the version in a Dockerfile
	helmignore string // "" for none
	indent     bool   // data.metadata by `indent 4` rather than `nindent 4`
	licensed   bool   // metadata.yaml carries a license header
}

func newRealSpec(s *spec, opts Options) realSpec {
	if opts.Shape == Cozystack || opts.Shape == Monorepo {
		return cozystackSpec(s, opts)
	}
	if opts.Shape != Real && opts.Shape != Monorepo {
		return realSpec{}
	}
	i := s.index
	r := realSpec{on: true, second: i%5 == 2, images: i%3 == 1, indent: i%2 == 1, licensed: i%2 == 0}
	switch i % 8 {
	case 1, 5:
		r.helmignore = "files/.*-components.yaml\n" // 25 bytes, matches nothing
	case 2, 6:
		r.helmignore = "images\nMakefile\nfiles/.*-components.yaml\n"
	case 3:
		r.helmignore = "images\npatches\nMakefile\nfiles/*-components.yaml\n" // the YAML stays out
	}
	// The golden ratio spreads the sizes evenly over 0.46–0.98 (0.48–1.03
	// MB at the default Size) whatever the number of packages: releases
	// of 30–62 % of the limit, the range of Cozystack's four (whose YAML
	// of up to 1.10 MB compresses a little better in base64 than
	// manifestgen's); one package in fifty is larger (1.15–1.38: up to
	// 1.45 MB, releases of 70–90 %), at the warning line.
	u := math.Mod(float64(i)*0.6180339887498949+0.3, 1)
	f := 0.46 + 0.52*u
	if i%50 == 49 {
		f = 1.15 + 0.23*u
	}
	s.size = int64(f * float64(s.size))
	return r
}

// The second provider of a package: a talos-style provider with names of
// its own.
const (
	secondYAMLSize = 25 << 10
	secondBlob     = "files/components-talos.gz"
	secondMetadata = "files/metadata-talos.yaml"
)

func (s spec) second() spec {
	t := s
	t.name = s.name + "-talos"
	t.minor, t.patch = 6, 12
	t.version = fmt.Sprintf("v%d.%d.%d", 0, t.minor, t.patch)
	short := kindShort[s.kind]
	t.release = t.version + "-" + short + "-" + t.name
	t.label = short + "-" + t.name + "-components"
	t.size = secondYAMLSize
	t.seed = s.seed + 7919
	t.real = realSpec{}
	return t
}

func (s spec) secondYAML() string { return "files/" + s.typ + "-components-talos.yaml" }

// imageDir is the images/ folder of a package with one.
func (s spec) imageDir() string { return "images/cluster-api-" + s.typ + "-provider-" + s.name }

// realFiles adds to files what a real package holds, and returns the pins
// of any second provider.
func (s spec) realFiles(p *Package, files []file) ([]file, []pin.Provider, error) {
	r := rand.New(rand.NewPCG(s.seed, uint64(s.index)+1))
	var pinned []pin.Provider
	for i := range files {
		if files[i].name == "Makefile" {
			files[i].data = s.realMakefile()
		}
	}
	if s.real.second {
		t := s.second()
		yml := t.components()
		gz, err := blob.CompressBytes(yml)
		if err != nil {
			return nil, nil, fmt.Errorf("compress %s: %w", s.secondYAML(), err)
		}
		meta := t.realMetadata(t.minor)
		files = append(files,
			file{s.secondYAML(), yml},
			file{secondBlob, gz},
			file{secondMetadata, meta},
			file{"templates/configmaps-talos.yaml", s.configMapTemplate(t.release, t.label, secondBlob, secondMetadata)},
		)
		for i := range files {
			if files[i].name == "templates/providers.yaml" {
				files[i].data = append(append(files[i].data, "---\n"...), t.providerTemplate()...)
			}
		}
		pp := t.pinProvider(yml, meta)
		pp.Sources[0].To, pp.Sources[0].URL = s.secondYAML(), t.upstreamURL(s.secondYAML())
		pp.Sources[1].To = secondMetadata
		pp.Blob = secondBlob
		pinned = append(pinned, pp)
		p.Second = t.release
		p.YAMLSize += int64(len(yml))
		p.BlobSize += int64(len(gz))
	}
	if s.real.images {
		files = append(files,
			file{"patches/0001-" + s.name + "-startup-probe.diff", startupProbePatch(s)},
			file{s.imageDir() + "/Dockerfile", s.dockerfile()},
			file{s.imageDir() + "/" + s.name + "-fix.patch", goPatch(r, s.name, 18<<10)},
		)
	}
	if s.real.helmignore != "" {
		files = append(files, file{".helmignore", []byte(s.real.helmignore)})
	}
	return files, pinned, nil
}

// realMakefile is a Cozystack-style Makefile: exported NAME and
// NAMESPACE, the version (read from the Dockerfile's ARG VERSION when the
// package builds an image), an include of a file outside the package, and
// the recipes that download and compress the upstream files.
func (s spec) realMakefile() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "export NAME=%s\nexport NAMESPACE=%s\n\n", s.pkgName, s.namespace)
	if s.real.images {
		fmt.Fprintf(&b, "%s = $(shell awk -F= '/^ARG VERSION=/{print $$2}' %s/Dockerfile)\n", s.varName, s.imageDir())
	} else {
		fmt.Fprintf(&b, "%s = %s\n", s.varName, s.version)
	}
	if s.real.second {
		t := s.second()
		fmt.Fprintf(&b, "%s_TALOS_VERSION = %s\n", strings.TrimSuffix(s.varName, "_UPSTREAM_VERSION"), t.version)
	}
	b.WriteString("\ninclude ../../../scripts/package.mk\n\nupdate:\n\trm -rf files\n\tmkdir -p files\n")
	fmt.Fprintf(&b, "\tcurl -sSL -o %s %s\n", s.yamlFile(), strings.ReplaceAll(s.upstreamURL(s.yamlFile()), s.version, "$("+s.varName+")"))
	fmt.Fprintf(&b, "\tcurl -sSL -o %s %s\n", metadataFile, strings.ReplaceAll(s.upstreamURL(metadataFile), s.version, "$("+s.varName+")"))
	fmt.Fprintf(&b, "\tgzip -9 -n -c %s > %s\n", s.yamlFile(), blobFile)
	if s.real.second {
		fmt.Fprintf(&b, "\tcurl -sSL -o %s %s\n\tgzip -nc %s > %s\n", s.secondYAML(), s.second().upstreamURL(s.secondYAML()), s.secondYAML(), secondBlob)
	}
	if s.real.images {
		fmt.Fprintf(&b, "\nimage:\n\tdocker buildx build %[1]s \\\n\t\t--build-arg VERSION=$(%[2]s) \\\n\t\t--tag $(REGISTRY)/cluster-api-%[3]s-provider-%[4]s:$(%[2]s) \\\n\t\t--cache-from type=registry,ref=$(REGISTRY)/cluster-api-%[3]s-provider-%[4]s:latest \\\n\t\t--cache-to type=inline \\\n\t\t--metadata-file %[1]s.json \\\n\t\t--push=$(PUSH) \\\n\t\t--load=$(LOAD)\n\tIMAGE=\"$(REGISTRY)/cluster-api-%[3]s-provider-%[4]s:$(%[2]s)@$$(yq e '.\"containerimage.digest\"' %[1]s.json -o json -r)\" \\\n\t\tyq -i '.image = strenv(IMAGE)' values.yaml\n\trm -f %[1]s.json\n",
			s.imageDir(), s.varName, s.typ, s.name)
	}
	return []byte(b.String())
}

// realMetadata is clusterctl's metadata.yaml as upstream ships it: a
// license header on some, and up to eight release series.
func (s spec) realMetadata(minor int) []byte {
	var b strings.Builder
	if s.real.licensed {
		b.WriteString(licenseHeader)
	}
	fmt.Fprintf(&b, "# maintainers of %s: update this when releasing a new minor version\n", s.name)
	b.WriteString("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n")
	for m := minor; m >= 0 && m > minor-8; m-- {
		contract := "v1beta1"
		if s.major == 0 && m < 2 && m != minor {
			contract = "v1alpha4"
		}
		fmt.Fprintf(&b, "  - major: %d\n    minor: %d\n    contract: %s\n", s.major, m, contract)
	}
	return []byte(b.String())
}

const licenseHeader = `# Copyright 2024 The Kubernetes Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
`

// configMapTemplate writes the ConfigMap as Cozystack's charts do: the
// blob through b64enc, the metadata through nindent (or, in a Real
// package that says so, indent).
func (s spec) configMapTemplate(release, label, blobName, metaName string) []byte {
	meta := fmt.Sprintf("  metadata: |\n    {{- .Files.Get %q | nindent 4 }}\n", metaName)
	if s.real.indent {
		meta = fmt.Sprintf("  metadata: |\n{{ .Files.Get %q | indent 4 }}\n", metaName)
	}
	return fmt.Appendf(nil, `apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  labels:
    %s: cozy
  annotations:
    %s: "true"
binaryData:
  components: {{ .Files.Get %q | b64enc }}
data:
%s`, release, label, model.CompressedAnnotation, blobName, meta)
}

func (s spec) dockerfile() []byte {
	return fmt.Appendf(nil, `# syntax=docker/dockerfile:1.7
FROM golang:1.24-alpine AS builder
ARG VERSION=%[1]s
RUN apk add --no-cache git make
WORKDIR /src
RUN git clone --depth 1 --branch ${VERSION} https://github.com/pinseal-synthetic/cluster-api-provider-%[2]s.git .
COPY %[2]s-fix.patch /patches/
RUN git apply /patches/*.patch
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /manager .

FROM gcr.io/distroless/static:nonroot
COPY --from=builder /manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
`, s.version, s.name)
}

// startupProbePatch is a 1.4 KB diff of the kind a package keeps in
// patches/ (here not applied by a pin: it documents a local change).
func startupProbePatch(s spec) []byte {
	return fmt.Appendf(nil, `From 3f1c2a9b8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b Mon Sep 17 00:00:00 2001
From: Cozystack maintainers <maintainers@cozystack.io>
Subject: [PATCH] %[1]s: add a startupProbe to the manager

The manager takes longer than the liveness probe allows to sync its caches
on large management clusters, and is restarted in a loop. A startupProbe
gives it five minutes before the liveness probe starts counting.
---
 config/manager/manager.yaml | 14 ++++++++++++++
 1 file changed, 14 insertions(+)

diff --git a/config/manager/manager.yaml b/config/manager/manager.yaml
index 4c6a1d2..9b8e7f3 100644
--- a/config/manager/manager.yaml
+++ b/config/manager/manager.yaml
@@ -41,6 +41,20 @@ spec:
           initialDelaySeconds: 15
           periodSeconds: 20
         name: manager
+        startupProbe:
+          httpGet:
+            path: /healthz
+            port: healthz
+          failureThreshold: 30
+          periodSeconds: 10
+        # The provider %[1]s reconciles every %[2]s object on start;
+        # with thousands of machines this takes minutes, during which
+        # /healthz answers but /readyz does not.
+        env:
+        - name: GOMEMLIMIT
+          valueFrom:
+            resourceFieldRef:
+              resource: limits.memory
         ports:
         - containerPort: 9443
           name: webhook-server
--
2.45.2
`, s.name, s.kindPrefix()+"Machine")
}

var goWords = strings.Fields(`ctx err req obj cluster machine log client scope patch helper conditions
status spec ready result reconcile owner infra bootstrap ref key name namespace list item vm node
host template secret data config opts timeout retry event record update create delete get`)

// goPatch is a unified diff of Go source of about size bytes, as an
// images/ folder carries to fix the upstream controller before building it.
func goPatch(r *rand.Rand, name string, size int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/internal/controller/%[1]s_controller.go b/internal/controller/%[1]s_controller.go\n--- a/internal/controller/%[1]s_controller.go\n+++ b/internal/controller/%[1]s_controller.go\n", name)
	w := func() string { return goWords[r.IntN(len(goWords))] }
	line := 120
	for b.Len() < size {
		fmt.Fprintf(&b, "@@ -%d,9 +%d,14 @@ func (r *%sReconciler) reconcile%s(ctx context.Context, %s *%s) (ctrl.Result, error) {\n", line, line, strings.ToUpper(name[:1])+name[1:], strings.ToUpper(w()[:1])+w(), w(), w())
		fmt.Fprintf(&b, " \tif %s == nil {\n \t\treturn ctrl.Result{}, nil\n \t}\n", w())
		for range 3 + r.IntN(4) {
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&b, "-\t%s, err := r.%s.Get%s(ctx, %s.%s)\n", w(), w(), strings.ToUpper(w()[:1])+w(), w(), strings.ToUpper(w()[:1])+w())
			case 1:
				fmt.Fprintf(&b, "+\t// %s %s the %s before the %s is %s, or the %s %s.\n", strings.ToUpper(w()[:1])+w(), w(), w(), w(), w(), w(), w())
			case 2:
				fmt.Fprintf(&b, "+\tif err := r.%s(ctx, %s, %s); err != nil {\n+\t\treturn ctrl.Result{}, fmt.Errorf(\"%s %s: %%w\", err)\n+\t}\n", w(), w(), w(), w(), w())
			default:
				fmt.Fprintf(&b, "+\tlog.V(%d).Info(\"%s %s\", \"%s\", %s.%s)\n", r.IntN(5), w(), w(), w(), w(), strings.ToUpper(w()[:1])+w())
			}
		}
		fmt.Fprintf(&b, " \tconditions.MarkTrue(%s, %sCondition)\n \treturn ctrl.Result{}, nil\n", w(), strings.ToUpper(w()[:1])+w())
		line += 40 + r.IntN(120)
	}
	return []byte(b.String())
}

// packageMk is the file outside the packages that their Makefiles include.
const packageMk = `# Included by every package's Makefile.
REGISTRY ?= ghcr.io/cozystack/cozystack
PUSH ?= 1
LOAD ?= 0

show:
	helm template -n $(NAMESPACE) $(NAME) .

apply:
	helm template -n $(NAMESPACE) $(NAME) . | kubectl apply -f -

diff:
	helm template -n $(NAMESPACE) $(NAME) . | kubectl diff -f -
`

// generatedManifest is a small manifest for charts that are not provider
// packages (dashboards, CRDs of an upstream chart).
func generatedManifest(seed int64, size int) []byte {
	return manifestgen.Generate(manifestgen.Spec{
		Provider: "app", Prefix: "app", Group: "apps.example.io", Kinds: []string{"AppCluster"},
		Image: "example.com/app:v1", Size: size, Seed: seed,
	})
}
