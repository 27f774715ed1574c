package build

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
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
	root := fixture.CleanCopy(t)
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
			dir := filepath.Join(fixture.CleanCopy(t), "packages/system/capi-providers-cpprovider")
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

// TestBuildMakefilePinsBlobFromLayout: a Makefile that pins talos's
// upstream YAML (URL + SHA-256) names no blob; the package layout says the
// chart ships that YAML's blob as files/components-talos.gz, so that is
// the blob rebuilt from it — not files/components.gz, kubeadm's blob,
// which the old name-based rule would have overwritten with it (no pin
// builds kubeadm's blob, so it is rebuilt from kubeadm's own vendored YAML).
func TestBuildMakefilePinsBlobFromLayout(t *testing.T) {
	up := newUpstream(t)
	root := t.TempDir()
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, fixture.AsItStandsBootstrap)
	mk := "export NAME=capi-providers-bootstrap\nexport NAMESPACE=cozy-cluster-api\n\n" +
		"CABPT_VERSION = v0.7.7\nCABPT_URL = " + up.URL + "/capmox/v0.7.7/infrastructure-components.yaml\n" +
		"CABPT_SHA256 = " + shaHex([]byte(components)) + "\n\nupdate:\n\tcurl -fsSL $(CABPT_URL) -o files/bootstrap-components-talos.yaml\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	kubeadmBlob := readFile(t, filepath.Join(dir, "files/components.gz"))

	res, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
	if err != nil {
		t.Fatal(err)
	}
	st := statuses(res)
	if st["files/components-talos.gz"] != Written || st["files/bootstrap-components-talos.yaml"] != Written {
		t.Fatalf("statuses %v", st)
	}
	// kubeadm's blob, which no pin builds, is rebuilt from its own
	// vendored YAML (its dirty header made reproducible), not from talos's.
	kubeadmYAML := readFile(t, filepath.Join(dir, "files/bootstrap-components.yaml"))
	if got := readFile(t, filepath.Join(dir, "files/components.gz")); st["files/components.gz"] != Written || blob.EncodingOf(got, kubeadmYAML) != blob.Reproducible || blob.EncodingOf(kubeadmBlob, kubeadmYAML) != blob.DirtyHeader {
		t.Fatalf("kubeadm's blob (%s) is not the reproducible encoding of its own YAML", st["files/components.gz"])
	}
	info := blob.Inspect(bytes.NewReader(readFile(t, filepath.Join(dir, "files/components-talos.gz"))), 1<<20)
	if info.Err != nil || info.RawSize != int64(len(components)) {
		t.Fatalf("talos blob: %+v", info)
	}
}
