package verify

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
)

// turtlesTree writes the Rancher Turtles charts and a plain-manifest
// folder whose ConfigMap holds plainBytes of data.
func turtlesTree(t *testing.T, plainBytes int) string {
	t.Helper()
	root := t.TempDir()
	if err := fixture.WriteTurtles(root); err != nil {
		t.Fatal(err)
	}
	if err := fixture.WritePlain(root, plainBytes); err != nil {
		t.Fatal(err)
	}
	return root
}

// editFile replaces old by new in root/name, failing when old is absent.
func editFile(t *testing.T, root, name, old, new string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s holds no %q", name, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func errorChecks(r *report.Report) []string {
	var ids []string
	for _, f := range r.Findings {
		if f.Severity == report.Error && f.Waiver == nil && !slices.Contains(ids, f.Check) {
			ids = append(ids, f.Check)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestTurtlesClean: the Turtles charts as they are load as provider
// packages: every enabled CAPIProvider a provider of the kind its
// spec.type names, with its namespace and file, and no error.
func TestTurtlesClean(t *testing.T) {
	r := verifyTree(t, turtlesTree(t, 100<<10))
	for _, f := range r.Findings {
		t.Logf("%s %s %s: %s", f.Severity, f.Check, f.Package, f.Message)
	}
	if got := errorChecks(r); len(got) > 0 {
		t.Errorf("the clean Turtles tree has errors %v", got)
	}
	type prov struct{ pkg, object, id, ns, file string }
	var got []prov
	for _, p := range r.Packages {
		for _, pr := range p.Providers {
			got = append(got, prov{p.Path, pr.Object, pr.Kind + "/" + pr.Name, pr.Namespace, pr.File})
		}
	}
	want := []prov{
		{fixture.TurtlesChart, "CAPIProvider/cluster-api", "CoreProvider/cluster-api", fixture.TurtlesCoreNamespace, fixture.TurtlesChart + "/templates/core-provider.yaml"},
	}
	for _, p := range fixture.TurtlesProviders {
		if !p.Enabled {
			continue
		}
		kind := map[string]string{"bootstrap": "BootstrapProvider", "controlPlane": "ControlPlaneProvider"}[p.Type]
		want = append(want, prov{fixture.TurtlesProvidersChart, "CAPIProvider/" + p.Object, kind + "/" + p.Name, p.Namespace,
			fixture.TurtlesProvidersChart + "/" + fixture.TurtlesProviderFile(p)})
	}
	want = append(want, prov{fixture.PlainDir, "", "CoreProvider/cluster-api", "capi-system", fixture.PlainDir + "/core.yaml"})
	if !slices.Equal(got, want) {
		t.Errorf("providers:\n  %v\nwant\n  %v", got, want)
	}
	// The core has no spec.version: a warning naming the ConfigMap's
	// version to write down, not an error saying "whatever is latest".
	var seen bool
	for _, f := range r.Findings {
		if f.Check == "configmap-version" && f.Package == fixture.TurtlesChart {
			seen = true
			if f.Severity != report.Warning || !strings.Contains(f.Hint, fixture.TurtlesCoreVersion) {
				t.Errorf("configmap-version on the core CAPIProvider: %s %s (hint %s)", f.Severity, f.Message, f.Hint)
			}
		}
	}
	if !seen {
		t.Error("no configmap-version warning for the core CAPIProvider with no spec.version")
	}
	// The inline blob is named at its own line, not the ConfigMap's.
	blob := fixture.TurtlesChart + "/" + fixture.TurtlesCoreTemplate
	var blobSeen bool
	for _, f := range r.Findings {
		if f.Check == "blob-yaml" && f.File == blob {
			blobSeen = true
			if f.Line != fixture.TurtlesBlobLine {
				t.Errorf("blob-yaml at %s:%d, want the blob's line %d", f.File, f.Line, fixture.TurtlesBlobLine)
			}
		}
	}
	if !blobSeen {
		t.Errorf("no blob-yaml warning in %s", blob)
	}
}

// TestTurtlesMutations: each mutation of the clean Turtles tree turns
// exactly its check red.
func TestTurtlesMutations(t *testing.T) {
	core := fixture.TurtlesChart + "/templates/core-provider.yaml"
	for _, tc := range []struct {
		name   string
		plain  int
		mutate func(t *testing.T, root string)
		want   string
	}{
		{"spec.type unknown", 100 << 10, func(t *testing.T, root string) {
			editFile(t, root, core, "  type: core", "  type: cores")
		}, "package-load"},
		{"spec.version not the ConfigMap's", 100 << 10, func(t *testing.T, root string) {
			editFile(t, root, fixture.TurtlesChart+"/values.yaml", `version: ""`, `version: "v1.14.0"`)
		}, "configmap-version"},
		{"selector matches nothing", 100 << 10, func(t *testing.T, root string) {
			editFile(t, root, fixture.TurtlesChart+"/values.yaml", "provider.cluster.x-k8s.io/type: core", "provider.cluster.x-k8s.io/type: kore")
		}, "selector-unique"},
		{"plain ConfigMap over 1 MiB", 1400 << 10, nil, "release-size"},
		{"one provider object at two versions", 100 << 10, func(t *testing.T, root string) {
			writeGolden(t, root)
		}, "provider-duplicate"},
		{"two CAPIProviders of one provider at two versions", 100 << 10, func(t *testing.T, root string) {
			writeRKE2Copy(t, root, "e2e/a", "v0.25.0")
			writeRKE2Copy(t, root, "e2e/b", "v0.26.0")
		}, "provider-duplicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := turtlesTree(t, tc.plain)
			if tc.mutate != nil {
				tc.mutate(t, root)
			}
			r := verifyTree(t, root)
			if got := errorChecks(r); !slices.Equal(got, []string{tc.want}) {
				for _, f := range r.Findings {
					t.Logf("%s %s %s: %s", f.Severity, f.Check, f.Package, f.Message)
				}
				t.Errorf("errors %v, want exactly [%s]", got, tc.want)
			}
			if tc.want == "release-size" {
				for _, f := range r.Findings {
					if f.Check == "release-size" && !(strings.Contains(f.Message, "bytes") && strings.Contains(f.Message, "1048576")) {
						t.Errorf("release-size names no bytes and limit: %s", f.Message)
					}
				}
			}
		})
	}
}

// TestPinMissingHintNoVersion: for a provider with no spec.version the
// pin-missing hint names the release the installer picks and asks for
// spec.version, in words that read (no "release the release").
func TestPinMissingHintNoVersion(t *testing.T) {
	root := turtlesTree(t, 10<<10)
	editFile(t, root, fixture.PlainDir+"/core.yaml", "spec:\n  version: v1.13.3\n  fetchConfig:\n    selector:\n      matchLabels:\n        provider-components: core\n", "spec: {}\n")
	r := verifyTree(t, root)
	pkgs := map[string]bool{}
	for _, f := range r.Findings {
		if f.Check != "pin-missing" || f.File == fixture.TurtlesFetchScript {
			continue // the script's download is no provider's source (TestTurtlesFetch)
		}
		pkgs[f.Package] = true
		if strings.Contains(f.Hint, "release the release") || !strings.Contains(f.Hint, "spec.version") {
			t.Errorf("%s %s: hint %q", f.Package, f.Provider, f.Hint)
		}
	}
	if !pkgs[fixture.PlainDir] || !pkgs[fixture.TurtlesProvidersChart] {
		t.Errorf("pin-missing in %v, want the plain folder and the Turtles providers chart", pkgs)
	}
}

// goldenCopy is a golden render of the plain folder's core provider at
// another version, in the same namespace.
const goldenCopy = "apiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: CoreProvider\nmetadata:\n  name: cluster-api\n  namespace: capi-system\nspec:\n  version: v1.12.0\n"

func writeGolden(t *testing.T, root string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "tests", "golden"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "tests", "golden", "core.yaml"), []byte(goldenCopy), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFixturesPolicy: the policy's fixtures: keeps golden renders out of
// the duplicate comparison, and only out of that.
func TestFixturesPolicy(t *testing.T) {
	root := turtlesTree(t, 100<<10)
	writeGolden(t, root)
	pol, err := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nfixtures: [tests/*]\n"), filepath.Join(root, "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, r, err := Run(context.Background(), root, Options{Options: load.Options{Workers: 2}, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	if got := errorChecks(r); len(got) > 0 {
		t.Errorf("errors %v with the golden folder marked as fixtures", got)
	}
	if !slices.ContainsFunc(r.Packages, func(p report.PackageSummary) bool { return p.Path == "tests/golden" }) {
		t.Error("the fixtures folder was not checked")
	}
}

// findingKeys are a report's findings as comparable strings.
func findingKeys(r *report.Report) map[string]report.Finding {
	out := map[string]report.Finding{}
	for _, f := range r.Findings {
		out[strings.Join([]string{string(f.Severity), f.Check, f.Package, f.Provider, f.File, strconv.Itoa(f.Line), f.Message}, "|")] = f
	}
	return out
}

// TestTurtlesFetch: the script that writes the core's inline blob is
// pin-missing, at its download's line and under the chart whose template
// it writes (a chart with no vendored file and no Makefile of its own),
// whether it is the real script (kubectl operator preload -u, no digest)
// or the pinned form with its checksum removed; the pinned form is green,
// and each mutation adds exactly that one finding.
func TestTurtlesFetch(t *testing.T) {
	pinnedRoot := turtlesTree(t, 10<<10)
	if err := fixture.TurtlesFetchPinned(pinnedRoot); err != nil {
		t.Fatal(err)
	}
	pinned := findingKeys(verifyTree(t, pinnedRoot))
	for _, f := range pinned {
		if f.File == fixture.TurtlesFetchScript {
			t.Errorf("the pinned script is reported: %s %s", f.Check, f.Message)
		}
	}
	check := "echo \"" + fixture.TurtlesFetchDigest + "  ${DL}\" | sha256sum -c -\n"
	for _, tc := range []struct {
		name, cmd string
		mutate    func(t *testing.T, root string)
	}{
		{"the real script", "kubectl operator preload", func(t *testing.T, root string) {}},
		{"the pinned form without its checksum", "curl", func(t *testing.T, root string) {
			if err := fixture.TurtlesFetchPinned(root); err != nil {
				t.Fatal(err)
			}
			editFile(t, root, fixture.TurtlesFetchScript, check, "")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := turtlesTree(t, 10<<10)
			tc.mutate(t, root)
			got := findingKeys(verifyTree(t, root))
			var added []report.Finding
			for k, f := range got {
				if _, ok := pinned[k]; !ok {
					added = append(added, f)
				}
			}
			for k, f := range pinned {
				if _, ok := got[k]; !ok {
					t.Errorf("finding gone: %s %s", f.Check, f.Message)
				}
			}
			if len(added) != 1 {
				t.Fatalf("added findings %+v, want exactly one pin-missing", added)
			}
			f := added[0]
			if f.Check != "pin-missing" || f.File != fixture.TurtlesFetchScript || f.Line != fixture.TurtlesFetchLine || f.Package != fixture.TurtlesChart {
				t.Errorf("got %s at %s:%d in %s, want pin-missing at %s:%d in %s", f.Check, f.File, f.Line, f.Package, fixture.TurtlesFetchScript, fixture.TurtlesFetchLine, fixture.TurtlesChart)
			}
			for _, w := range []string{tc.cmd, "https://github.com/rancher/cluster-api/releases/latest/core-components.yaml", fixture.TurtlesChart + "/" + fixture.TurtlesCoreTemplate} {
				if !strings.Contains(f.Message, w) {
					t.Errorf("message does not name %q: %s", w, f.Message)
				}
			}
		})
	}
}

// sourceOf is the report's source of provider id in package pkg.
func sourceOf(t *testing.T, r *report.Report, pkg, id string) report.Source {
	t.Helper()
	for _, p := range r.Packages {
		for _, pr := range p.Providers {
			if p.Path == pkg && pr.Kind+"/"+pr.Name == id && pr.Source != nil {
				return *pr.Source
			}
		}
	}
	t.Fatalf("no source of %s in %s", id, pkg)
	return report.Source{}
}

// TestTurtlesClusterctlOverride: a CAPIProvider with no spec.fetchConfig
// downloads from the URL Turtles' clusterctl-config ConfigMap gives it
// (its clusterctl.yaml providers entry), which the report's source and
// pin-missing name; a ClusterctlConfig entry of the same name and type wins
// over the ConfigMap's; without an entry, clusterctl's built-in list
// applies. Each mutation changes exactly the source of the provider the
// entry names.
func TestTurtlesClusterctlOverride(t *testing.T) {
	const (
		boot  = "BootstrapProvider/rke2"
		cp    = "ControlPlaneProvider/rke2"
		cmURL = "https://github.com/rancher/cluster-api-provider-rke2/releases/v0.25.0/bootstrap-components.yaml"
	)
	chart := fixture.TurtlesProvidersChart
	builtinCP := func(t *testing.T, r *report.Report) {
		t.Helper()
		if s := sourceOf(t, r, chart, cp); s.Kind != report.SourceDefault || !strings.Contains(s.Ref, "/releases/latest/control-plane-components.yaml") {
			t.Errorf("%s, which no entry names: %+v", cp, s)
		}
	}

	root := turtlesTree(t, 10<<10)
	r := verifyTree(t, root)
	s := sourceOf(t, r, chart, boot)
	if s.Kind != report.SourceDefault || s.Ref != cmURL || s.Release != "v0.25.0" ||
		!slices.Equal(s.URLs, []string{"https://github.com/rancher/cluster-api-provider-rke2/releases/download/v0.25.0/bootstrap-components.yaml", "https://github.com/rancher/cluster-api-provider-rke2/releases/download/v0.25.0/metadata.yaml"}) {
		t.Errorf("%s with the ConfigMap's entry: %+v", boot, s)
	}
	builtinCP(t, r)
	var named bool
	for _, f := range r.Findings {
		if f.Check == "pin-missing" && f.Provider == boot {
			named = strings.Contains(f.Message, "ConfigMap clusterctl-config ("+fixture.TurtlesChart+"/templates/clusterctl-config.yaml:9)") && strings.Contains(f.Message, cmURL)
		}
	}
	if !named {
		t.Errorf("pin-missing of %s does not name the clusterctl-config entry and its URL", boot)
	}

	// A ClusterctlConfig entry wins over the ConfigMap's.
	root = turtlesTree(t, 10<<10)
	if err := os.WriteFile(filepath.Join(root, fixture.TurtlesChart, "templates", "clusterctlconfig.yaml"), []byte(`apiVersion: turtles-capi.cattle.io/v1alpha1
kind: ClusterctlConfig
metadata:
  name: clusterctl-config
  namespace: '{{ .Values.namespace }}'
spec:
  providers:
  - name: rke2
    url: https://github.com/rancher/cluster-api-provider-rke2/releases/v0.26.0/bootstrap-components.yaml
    type: BootstrapProvider
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = verifyTree(t, root)
	if s := sourceOf(t, r, chart, boot); s.Release != "v0.26.0" || !strings.Contains(s.Ref, "/v0.26.0/") {
		t.Errorf("%s with a ClusterctlConfig entry: %+v", boot, s)
	}
	builtinCP(t, r)

	// No entry: clusterctl's built-in list.
	root = turtlesTree(t, 10<<10)
	editFile(t, root, fixture.TurtlesChart+"/templates/clusterctl-config.yaml", `- name: "rke2"`, `- name: "rke2-other"`)
	r = verifyTree(t, root)
	if s := sourceOf(t, r, chart, boot); s.Ref == cmURL || s.Release != "" || !strings.Contains(s.Ref, "/releases/latest/bootstrap-components.yaml") {
		t.Errorf("%s with no entry: %+v", boot, s)
	}
	builtinCP(t, r)
}

// writeRKE2Copy writes, in folder dir, the rke2 bootstrap CAPIProvider of
// the providers chart at version (as Turtles' e2e data does).
func writeRKE2Copy(t *testing.T, root, dir, version string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "apiVersion: turtles-capi.cattle.io/v1alpha1\nkind: CAPIProvider\nmetadata:\n  name: rke2-bootstrap\n  namespace: rke2-bootstrap-system\nspec:\n  name: rke2\n  type: bootstrap\n  version: " + version + "\n"
	if err := os.WriteFile(filepath.Join(root, dir, "providers.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTurtlesUnversionedNotDuplicate: a CAPIProvider with no spec.version
// (the chart's rke2, whose version Turtles' clusterctl config decides)
// and a copy of it at a version (Turtles' e2e data) are no conflict the
// tree can show; no error.
func TestTurtlesUnversionedNotDuplicate(t *testing.T) {
	root := turtlesTree(t, 10<<10)
	writeRKE2Copy(t, root, "e2e/a", "v0.25.0")
	if got := errorChecks(verifyTree(t, root)); len(got) > 0 {
		t.Errorf("errors %v for an unversioned CAPIProvider and a versioned copy", got)
	}
}
