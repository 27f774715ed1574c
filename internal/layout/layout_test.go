package layout_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

func loadPkg(t *testing.T, dir string) *model.Package {
	t.Helper()
	p, err := load.Package(context.Background(), dir, load.Options{})
	if err != nil || p == nil {
		t.Fatalf("load %s: %v (package %v)", dir, err, p)
	}
	return p
}

// TestOfFixture derives every release's files of the clean fixture from
// the rendered ConfigMaps: the pinned packages by pin, the unpinned ones by
// bytes and content.
func TestOfFixture(t *testing.T) {
	root := fixture.Root()
	want := map[string]map[string]model.ReleaseFiles{
		"packages/system/capi-providers-core": {"v1.10.1-core": {
			Components: "files/core-components.yaml", ComponentsBy: model.MatchedByPin,
			Metadata: "files/metadata.yaml", MetadataBy: model.MatchedByBytes,
			Blob: "files/components.gz", BlobBy: model.MatchedByBytes}},
		"packages/system/capi-providers-bootstrap": {
			"v1.10.1-bootstrap": {Components: "files/bootstrap-components.yaml", ComponentsBy: model.MatchedByContent,
				Metadata: "files/metadata.yaml", MetadataBy: model.MatchedByBytes, Blob: "files/components.gz", BlobBy: model.MatchedByBytes},
			"v0.6.12-bootstrap-talos": {Components: "files/talos-bootstrap-components.yaml", ComponentsBy: model.MatchedByContent,
				Metadata: "files/metadata-talos.yaml", MetadataBy: model.MatchedByBytes, Blob: "files/components-talos.gz", BlobBy: model.MatchedByBytes}},
		"packages/system/capi-providers-infraprovider": {
			"v0.7.7-infraprovider-proxmox": {Components: "files/proxmox-infrastructure-components.yaml", ComponentsBy: model.MatchedByPin,
				Metadata: "files/metadata-proxmox.yaml", MetadataBy: model.MatchedByBytes, Blob: "files/components-proxmox.gz", BlobBy: model.MatchedByBytes}},
	}
	for dir, rels := range want {
		p := loadPkg(t, filepath.Join(root, dir))
		l := layout.Of(p)
		if !reflect.DeepEqual(p.Layout, l) {
			t.Errorf("%s: the loader stored layout %+v, Of gives %+v", dir, p.Layout, l)
		}
		for name, w := range rels {
			var got *model.LayoutRelease
			for _, r := range l.Releases {
				if r.Name == name {
					got = r
				}
			}
			if got == nil {
				t.Errorf("%s: no release %s", dir, name)
				continue
			}
			if got.ReleaseFiles != w {
				t.Errorf("%s %s: files = %+v, want %+v", dir, name, got.ReleaseFiles, w)
			}
			if len(got.Providers) != 1 || got.Providers[0].Version != name {
				t.Errorf("%s %s: providers = %v", dir, name, got.Providers)
			}
			if l.Provider(got.Providers[0]) != got {
				t.Errorf("%s %s: Provider() does not find the release", dir, name)
			}
		}
	}
}

// TestOfTalosNames: the real tree's names (files/bootstrap-components-talos.yaml,
// files/metadata-talos.yaml, files/components-talos.gz) follow no
// convention; no pin. The YAML is edited after the blob was built, so
// content does not match, and only the blob's name points to the YAML.
func TestOfTalosNames(t *testing.T) {
	dir := filepath.Join(fixture.CleanCopy(t), "packages/system/capi-providers-bootstrap")
	mv := func(from, to string) {
		if err := os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	mv("files/talos-bootstrap-components.yaml", "files/bootstrap-components-talos.yaml")
	p := loadPkg(t, dir)
	r := findRelease(t, layout.Of(p), "v0.6.12-bootstrap-talos")
	if r.Components != "files/bootstrap-components-talos.yaml" || r.ComponentsBy != model.MatchedByContent || r.Metadata != "files/metadata-talos.yaml" {
		t.Errorf("by content: %+v", r.ReleaseFiles)
	}
	f := filepath.Join(dir, "files/bootstrap-components-talos.yaml")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, append(data, "# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	p = loadPkg(t, dir)
	r = findRelease(t, layout.Of(p), "v0.6.12-bootstrap-talos")
	if r.Components != "files/bootstrap-components-talos.yaml" || r.ComponentsBy != model.MatchedByName {
		t.Errorf("by name: %+v", r.ReleaseFiles)
	}
	if got, _ := p.Layout.ComponentsYAML(r.ConfigMap); got != r.Components || r.ConfigMap.Components.Diff == nil {
		t.Errorf("the loader did not use the layout: YAML %q, components %+v", got, r.ConfigMap.Components)
	}
}

func findRelease(t *testing.T, l *model.Layout, name string) *model.LayoutRelease {
	t.Helper()
	for _, r := range l.Releases {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no release %s in %+v", name, l.Releases)
	return nil
}

func TestPinComponentsAndMetadata(t *testing.T) {
	src := func(to ...string) []pin.Source {
		var out []pin.Source
		for _, x := range to {
			out = append(out, pin.Source{URL: "https://example.com/" + x, To: x})
		}
		return out
	}
	tests := []struct {
		name        string
		pp          pin.Provider
		comp, meta  string
		errContains string
	}{
		{"named", pin.Provider{Sources: src("files/core-components.yaml", "files/metadata.yaml")}, "files/core-components.yaml", "files/metadata.yaml", ""},
		{"talos names", pin.Provider{Sources: src("files/bootstrap-components-talos.yaml", "files/metadata-talos.yaml")}, "files/bootstrap-components-talos.yaml", "files/metadata-talos.yaml", ""},
		{"explicit", pin.Provider{Sources: src("files/a.yaml", "files/b.yaml"), Components: "files/b.yaml", Metadata: "files/a.yaml"}, "files/b.yaml", "files/a.yaml", ""},
		{"two components names", pin.Provider{Kind: "CoreProvider", Name: "x", Sources: src("files/a-components.yaml", "files/b-components.yaml")}, "", "", "say which is the components file"},
		{"ambiguous with a blob", pin.Provider{Kind: "CoreProvider", Name: "x", Blob: "files/c.gz", Sources: src("files/a.yaml", "files/b.yaml")}, "", "", "`components: <to>`"},
		{"metadata only", pin.Provider{Sources: src("files/metadata.yaml")}, "", "files/metadata.yaml", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := layout.PinComponents(tc.pp)
			if tc.errContains != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errContains) {
					t.Fatalf("err = %v, want %q", err, tc.errContains)
				}
				return
			}
			if err != nil || c != tc.comp {
				t.Errorf("components = %q, %v; want %q", c, err, tc.comp)
			}
			if m := layout.PinMetadata(tc.pp); m != tc.meta {
				t.Errorf("metadata = %q, want %q", m, tc.meta)
			}
		})
	}
}

// TestFromPins gives the pins' files when the chart cannot render yet.
func TestFromPins(t *testing.T) {
	f := &pin.File{Providers: []pin.Provider{{Kind: "BootstrapProvider", Name: "talos", Release: "v0.6.12-bootstrap-talos",
		Sources: []pin.Source{{To: "files/bootstrap-components-talos.yaml"}, {To: "files/metadata-talos.yaml"}}, Blob: "files/components-talos.gz"}}}
	l, err := layout.FromPins(f)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Pin("BootstrapProvider", "talos")
	want := model.ReleaseFiles{Components: "files/bootstrap-components-talos.yaml", ComponentsBy: model.MatchedByPin,
		Metadata: "files/metadata-talos.yaml", MetadataBy: model.MatchedByPin, Blob: "files/components-talos.gz", BlobBy: model.MatchedByPin}
	if r == nil || r.ReleaseFiles != want {
		t.Fatalf("release = %+v", r)
	}
}
