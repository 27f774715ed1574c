package verify

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/api/apitest"
	"github.com/pinseal/pinseal/internal/testkit/netwatch"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/report"
)

// fetchedProvider is a provider of a tree whose charts hold no ConfigMap:
// the chart installs it with no spec.fetchConfig, or, with the registry
// value set, from the mirror's <type>-<name>-components artifact.
type fetchedProvider struct {
	chart, kind, name, typ, version string
	url                             string // spec.fetchConfig.url instead (no registry switch)
	components                      string // the components URL the operator downloads
}

// fetchedProviders model a tree shaped like a platform's that installs
// providers through the cluster-api-operator and its defaults.
var fetchedProviders = []fetchedProvider{
	{chart: "capi-providers-core", kind: "CoreProvider", name: "cluster-api", typ: "core", version: "v1.10.1",
		components: "https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/core-components.yaml"},
	{chart: "capi-providers-bootstrap", kind: "BootstrapProvider", name: "kubeadm", typ: "bootstrap", version: "v1.10.1",
		components: "https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/bootstrap-components.yaml"},
	{chart: "capi-providers-bootstrap", kind: "BootstrapProvider", name: "talos", typ: "bootstrap", version: "v0.6.12",
		components: "https://github.com/siderolabs/cluster-api-bootstrap-provider-talos/releases/download/v0.6.12/bootstrap-components.yaml"},
	{chart: "capi-providers-cpprovider", kind: "ControlPlaneProvider", name: "kamaji", typ: "control-plane", version: "v0.15.2",
		components: "https://github.com/clastix/cluster-api-control-plane-provider-kamaji/releases/download/v0.15.2/control-plane-components.yaml"},
	{chart: "capi-providers-infraprovider", kind: "InfrastructureProvider", name: "kubevirt", typ: "infrastructure", version: "v0.1.9",
		components: "https://github.com/kubernetes-sigs/cluster-api-provider-kubevirt/releases/download/v0.1.9/infrastructure-components.yaml"},
	{chart: "capi-providers-proxmox", kind: "InfrastructureProvider", name: "proxmox", typ: "infrastructure", version: "v0.7.7",
		url:        "https://github.com/ionos-cloud/cluster-api-provider-proxmox/releases/latest/infrastructure-components.yaml",
		components: "https://github.com/ionos-cloud/cluster-api-provider-proxmox/releases/download/v0.7.7/infrastructure-components.yaml"},
}

// fetchedTree writes the charts of fetchedProviders under root.
func fetchedTree(t *testing.T, root string) {
	t.Helper()
	templates := map[string]*bytes.Buffer{}
	for _, p := range fetchedProviders {
		b := templates[p.chart]
		if b == nil {
			b = &bytes.Buffer{}
			templates[p.chart] = b
		}
		fmt.Fprintf(b, "---\napiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: %s\nmetadata:\n  name: %s\n  namespace: {{ .Release.Namespace }}\nspec:\n  version: %s\n", p.kind, p.name, p.version)
		if p.url != "" {
			fmt.Fprintf(b, "  fetchConfig:\n    url: %s\n", p.url)
			continue
		}
		fmt.Fprintf(b, "{{- if .Values.registry }}\n  fetchConfig:\n    oci: {{ .Values.registry }}/capi/%s-%s-components:%s\n{{- end }}\n", p.typ, p.name, p.version)
	}
	for chart, tmpl := range templates {
		dir := filepath.Join(root, "packages/system", chart)
		if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: "+chart+"\nversion: 0.1.0\n"))
		write(t, filepath.Join(dir, "values.yaml"), []byte("registry: \"\"\n"))
		write(t, filepath.Join(dir, "Makefile"), []byte("NAME="+chart+"\nNAMESPACE=cozy-cluster-api\n"))
		write(t, filepath.Join(dir, "templates/providers.yaml"), tmpl.Bytes())
	}
}

// TestFetchedProviders: in a tree whose providers install from upstream
// releases (no fetchConfig, or fetchConfig.url), or, with the registry
// value set, from a mirror (fetchConfig.oci), every provider gets its
// source in the report and a pin-missing warning naming what nothing
// holds: the release URLs the operator downloads, or the mirror. The run
// is offline: a listener standing in for the mirror, and for any proxy
// the process would send GitHub requests through, is never contacted.
func TestFetchedProviders(t *testing.T) {
	watch := netwatch.Listen(t)
	mirror := watch.Addr()
	t.Setenv("HTTPS_PROXY", "http://"+mirror)
	t.Setenv("HTTP_PROXY", "http://"+mirror)
	t.Setenv("NO_PROXY", "")

	root := t.TempDir()
	fetchedTree(t, root)
	r := verifyTree(t, root)
	checkFetched(t, r, "")

	for _, chart := range []string{"capi-providers-core", "capi-providers-bootstrap", "capi-providers-cpprovider", "capi-providers-infraprovider"} {
		write(t, filepath.Join(root, "packages/system", chart, "values.yaml"), []byte("registry: "+mirror+"\n"))
	}
	r = verifyTree(t, root)
	checkFetched(t, r, mirror)

	if n := watch.Count(); n != 0 {
		t.Fatalf("an offline check contacted the listener %d times", n)
	}
}

// checkFetched checks the report of the fetched tree; mirror is the
// registry value, "" when unset.
func checkFetched(t *testing.T, r *report.Report, mirror string) {
	t.Helper()
	if !r.Summary.Passed || r.Summary.Providers != len(fetchedProviders) {
		t.Fatalf("summary %+v, findings:\n%s", r.Summary, findings(r))
	}
	byProvider := map[string]report.Finding{}
	for _, f := range r.Findings {
		switch {
		case f.Check == check.PinMissing && f.Severity == report.Warning:
			if _, twice := byProvider[f.Provider]; twice {
				t.Errorf("two pin-missing findings for %s", f.Provider)
			}
			byProvider[f.Provider] = f
		case f.Check == check.Contract && f.Severity == report.Warning && strings.Contains(f.Message, "could not be checked"):
		default:
			t.Errorf("unexpected finding %s %s: %s", f.Check, f.Provider, f.Message)
		}
	}
	want := report.SourceCounts{Fetched: len(fetchedProviders)}
	for _, p := range fetchedProviders {
		id := p.kind + "/" + p.name
		src := providerSource(r, id)
		f, ok := byProvider[id]
		if src == nil || !ok || src.Pinned {
			t.Errorf("%s: source %+v, pin-missing %v", id, src, ok)
			continue
		}
		switch {
		case p.url != "":
			want.URL++
			if src.Kind != report.SourceURL || src.Ref != p.url || !slices.Contains(src.URLs, p.components) || !strings.Contains(f.Message, p.components) {
				t.Errorf("%s: source %+v, finding %s; want url %s", id, src, f.Message, p.components)
			}
		case mirror != "":
			want.OCI++
			ref := fmt.Sprintf("%s/capi/%s-%s-components:%s", mirror, p.typ, p.name, p.version)
			if src.Kind != report.SourceOCI || src.Registry != mirror || src.Ref != ref || !strings.Contains(f.Message, "registry "+mirror) || !strings.Contains(f.Message, ref) {
				t.Errorf("%s: source %+v, finding %s; want oci %s", id, src, f.Message, ref)
			}
		default:
			want.Default++
			if src.Kind != report.SourceDefault || src.Release != p.version || !slices.Contains(src.URLs, p.components) ||
				!strings.Contains(f.Message, p.components) || !strings.Contains(f.Message, "built-in provider list") {
				t.Errorf("%s: source %+v, finding %s; want default %s", id, src, f.Message, p.components)
			}
		}
	}
	if got := r.Summary.Sources; got == nil || *got != want {
		t.Errorf("summary sources %+v, want %+v", got, want)
	}
	var js bytes.Buffer
	if err := report.WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if err := apitest.Validate(apitest.ReportSchema(t), js.Bytes()); err != nil {
		t.Errorf("report does not match api/report.schema.json: %v", err)
	}
	var human bytes.Buffer
	if err := report.WriteHuman(&human, r, report.HumanOptions{}); err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("%d providers: 0 pinned, %d fetched at install time (", len(fetchedProviders), len(fetchedProviders))
	if !strings.Contains(human.String(), line) {
		t.Errorf("human report lacks %q:\n%s", line, human.String())
	}
}

func providerSource(r *report.Report, id string) *report.Source {
	for _, pkg := range r.Packages {
		for _, p := range pkg.Providers {
			if p.Kind+"/"+p.Name == id {
				return p.Source
			}
		}
	}
	return nil
}
