package verify

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/api/apitest"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/netwatch"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/report"
)

// The fetched tree (internal/testkit/fixture.WriteFetched) models a
// platform's tree that installs providers through the cluster-api-operator
// and its defaults: no fetchConfig, fetchConfig.url, and a registry value
// that switches charts to a mirror's fetchConfig.oci.
var fetchedProviders = fixture.FetchedProviders

// fetchedTree writes the fetched tree under root.
func fetchedTree(t *testing.T, root string) {
	t.Helper()
	if err := fixture.WriteFetched(root); err != nil {
		t.Fatal(err)
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
		write(t, filepath.Join(fixture.FetchedChartDir(root, chart), "values.yaml"), []byte("registry: "+mirror+"\n"))
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
		id := p.ID()
		src := providerSource(r, id)
		f, ok := byProvider[id]
		if src == nil || !ok || src.Pinned {
			t.Errorf("%s: source %+v, pin-missing %v", id, src, ok)
			continue
		}
		switch {
		case p.URL != "":
			want.URL++
			if src.Kind != report.SourceURL || src.Ref != p.URL || !slices.Contains(src.URLs, p.Components()) || !strings.Contains(f.Message, p.Components()) {
				t.Errorf("%s: source %+v, finding %s; want url %s", id, src, f.Message, p.Components())
			}
		case mirror != "":
			want.OCI++
			ref := fmt.Sprintf("%s/capi/%s-%s-components:%s", mirror, p.Type, p.Name, p.Version)
			if src.Kind != report.SourceOCI || src.Registry != mirror || src.Ref != ref || !strings.Contains(f.Message, "registry "+mirror) || !strings.Contains(f.Message, ref) {
				t.Errorf("%s: source %+v, finding %s; want oci %s", id, src, f.Message, ref)
			}
		default:
			want.Default++
			if src.Kind != report.SourceDefault || src.Release != p.Version || !slices.Contains(src.URLs, p.Components()) ||
				!strings.Contains(f.Message, p.Components()) || !strings.Contains(f.Message, "built-in provider list") {
				t.Errorf("%s: source %+v, finding %s; want default %s", id, src, f.Message, p.Components())
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
