package build

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/fixture"
	"github.com/pinseal/pinseal/pkg/blob"
)

// TestBuildFromVendored: a package that pins no download (the fixture's
// bootstrap: two providers, Makefile version only; cpprovider: nothing)
// gets each blob rebuilt from its vendored YAML: a YAML edited after its
// blob was made is compressed again, the YAML is untouched, a blob that
// already holds the YAML with a clean header is kept, nothing is fetched
// (the fetcher is nil-safe: none is configured to reach anything), and a
// second build changes nothing.
func TestBuildFromVendored(t *testing.T) {
	root := fixture.Tree(t)
	cp := filepath.Join(root, "packages/system/capi-providers-cpprovider")
	yamlPath := filepath.Join(cp, "files/control-plane-components.yaml")
	edited := append(readFile(t, yamlPath), "# edited after the blob was made\n"...)
	if err := os.WriteFile(yamlPath, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	boot := filepath.Join(root, "packages/system/capi-providers-bootstrap")
	bootBefore := snapshot(t, boot)

	for _, dir := range []string{cp, boot} {
		res, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
		if err != nil {
			t.Fatalf("build %s: %v", dir, err)
		}
		if !res.FromVendored || res.Pins != PinsNone {
			t.Fatalf("%s: result %+v, want rebuilt from vendored YAML", dir, res)
		}
	}
	if got := readFile(t, yamlPath); !bytes.Equal(got, edited) {
		t.Fatal("the vendored YAML was changed")
	}
	info := blob.Inspect(bytes.NewReader(readFile(t, filepath.Join(cp, "files/components.gz"))), 1<<20)
	if info.Err != nil || !info.Header.Reproducible() || info.RawSize != int64(len(edited)) {
		t.Fatalf("rebuilt blob: %+v", info)
	}
	// Bootstrap's blobs already hold their YAML: nothing written.
	sameSnapshot(t, bootBefore, snapshot(t, boot))

	// Again: nothing changes.
	before := snapshot(t, cp)
	res, err := Build(context.Background(), cp, Options{Fetcher: fetcher(t)})
	if err != nil || res.Changed() {
		t.Fatalf("second build: %+v, %v", res, err)
	}
	sameSnapshot(t, before, snapshot(t, cp))
}

// TestBuildFromVendoredFailureChangesNothing: a blob with no vendored YAML
// to rebuild it from, or a package that does not render, is an error that
// says so, and no file changes.
func TestBuildFromVendoredFailureChangesNothing(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		want   string
	}{
		{"no YAML for the blob", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "files/control-plane-components.yaml"))
			// Make the blob differ from anything vendored.
			gz, _ := blob.CompressBytes([]byte("kind: Other\n"))
			os.WriteFile(filepath.Join(dir, "files/components.gz"), gz, 0o644)
		}, "no vendored YAML is the source of files/components.gz"},
		{"chart does not render", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "templates/broken.yaml"), []byte("{{ .Values.missing.key }}\n"), 0o644)
		}, "cannot be read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(fixture.Tree(t), "packages/system/capi-providers-cpprovider")
			tc.mutate(t, dir)
			before := snapshot(t, dir)
			_, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
