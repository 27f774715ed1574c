package verify

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/report"
)

// ociPkg is a chart whose provider installs from an OCI artifact, written
// as charts template it: the registry from values, the tag the release.
const ociPkg = "packages/system/capi-providers-kamaji"

// ociTemplate is its templates/providers.yaml; spec.fetchConfig.oci is on
// line ociLine.
const (
	ociTemplate = `apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: ControlPlaneProvider
metadata:
  name: kamaji
  namespace: {{ .Release.Namespace }}
spec:
  version: {{ .Values.release }}
  fetchConfig:
    oci: {{ .Values.registry }}/capi/control-plane-kamaji-components:{{ .Values.release }}
`
	ociLine = 9
)

// ociChart writes ociPkg under root: a clean provider of release
// v0.19.0-cozystack.0 from registry.example.com.
func ociChart(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(root, ociPkg)
	for name, data := range map[string]string{
		"Chart.yaml":               "apiVersion: v2\nname: capi-providers-kamaji\nversion: 0.1.0\n",
		"values.yaml":              "registry: registry.example.com\nrelease: v0.19.0-cozystack.0\n",
		"Makefile":                 "NAME=capi-providers-kamaji\nNAMESPACE=cozy-cluster-api\n",
		"templates/providers.yaml": ociTemplate,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name), []byte(data))
	}
	return dir
}

// TestOCISourceMutations: a chart whose provider installs from
// spec.fetchConfig.oci passes offline, with only the warning that nothing
// verified its artifact; each mutation of the value, of
// spec.version or of fetchConfig, made where a chart author makes it,
// turns exactly one oci-source finding red, located at the template line
// of spec.fetchConfig.oci and naming the operator rule.
func TestOCISourceMutations(t *testing.T) {
	root := t.TempDir()
	ociChart(t, root)
	// Offline, nothing verifies the artifact: the one finding is the
	// pin-missing warning naming its registry (sources_test.go).
	if r := verifyTree(t, root); len(r.Packages) != 1 || len(r.Findings) != 1 || r.Findings[0].Check != check.PinMissing ||
		!strings.Contains(r.Findings[0].Message, "registry registry.example.com") || !r.Summary.Passed {
		t.Fatalf("clean OCI chart: %d packages, findings:\n%s", len(r.Packages), findings(r))
	}
	const tag = ":{{ .Values.release }}"
	tests := []struct {
		rule           string
		file, old, new string
		warning        bool
		want           string
	}{
		{"fetch-exclusive", "templates/providers.yaml", "  fetchConfig:\n", "  fetchConfig:\n    url: https://github.com/clastix/cluster-api-control-plane-provider-kamaji/releases\n", false, "oci and url"},
		{"scheme", "values.yaml", "registry: ", "registry: https://", false, "no scheme but http://"},
		{"unreadable", "values.yaml", "registry: registry.example.com", "registry: registry.example.com/Cozystack", false, "lowercase"},
		{"unreadable", "values.yaml", "registry: registry.example.com", `registry: ""`, false, "cannot parse"},
		{"digest", "templates/providers.yaml", tag, "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", false, "splits the value"},
		{"misread", "templates/providers.yaml", tag, ":v0.19.0" + tag, false, `drops "v0.19.0"`},
		{"tag", "templates/providers.yaml", "oci: {{ .Values.registry }}/capi/control-plane-kamaji-components" + tag, `oci: "{{ .Values.registry }}/capi/control-plane-kamaji-components:"`, false, "ends in ':'"},
		{"tag-version", "templates/providers.yaml", tag, ":v0.19.0-cozystack.0", false, `installs it as release "v0.19.0-cozystack.1"`},
		{"version", "values.yaml", "release: v0.19.0-cozystack.0", "release: latest", false, "not a semantic version"},
		{"release-name", "values.yaml", "release: v0.19.0-cozystack.0", "release: v0.19.0-RC.1", false, `"control-plane-kamaji-v0.19.0-RC.1"`},
		{"port-no-tag", "templates/providers.yaml", tag, "", true, "operators v0.16.0 to v0.19.0"},
	}
	for _, tc := range tests {
		t.Run(tc.rule+"/"+tc.new, func(t *testing.T) {
			root := t.TempDir()
			dir := ociChart(t, root)
			edit(t, filepath.Join(dir, tc.file), tc.old, tc.new)
			switch tc.rule {
			case "tag-version":
				edit(t, filepath.Join(dir, "values.yaml"), "release: v0.19.0-cozystack.0", "release: v0.19.0-cozystack.1")
			case "port-no-tag":
				edit(t, filepath.Join(dir, "values.yaml"), "registry: registry.example.com", "registry: registry.example.com:5000")
			}
			r := verifyTree(t, root)
			r.Findings = slices.DeleteFunc(r.Findings, func(f report.Finding) bool { return f.Check == check.PinMissing })
			if len(r.Findings) != 1 || r.Findings[0].Check != check.OCISource {
				t.Fatalf("want one oci-source finding, got:\n%s", findings(r))
			}
			f := r.Findings[0]
			wantSev := report.Error
			if tc.warning {
				wantSev = report.Warning
			}
			line := ociLine
			if tc.rule == "fetch-exclusive" {
				line++ // below the url line the mutation adds
			}
			if f.Severity != wantSev || f.Package != ociPkg || f.Provider != "ControlPlaneProvider/kamaji" ||
				f.File != ociPkg+"/templates/providers.yaml" || f.Line != line ||
				!strings.Contains(f.Message, tc.want) || !strings.Contains(f.Detail, "operator rule "+tc.rule+",") ||
				!strings.Contains(f.Detail, "cluster-api-operator v0.") || f.Hint == "" {
				t.Fatalf("finding %+v; want %s rule %s at %s:%d with %q", f, wantSev, tc.rule, ociPkg+"/templates/providers.yaml", line, tc.want)
			}
			if _, err := os.Stat(filepath.Join(root, f.File)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
