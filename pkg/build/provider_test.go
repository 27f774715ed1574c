package build

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/blob"
)

// dirtyGzip is b under a header with a name and a time (gzip without -n).
func dirtyGzip(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Header = gzip.Header{Name: "x.yaml", ModTime: time.Unix(fixture.DirtyMTime, 0)}
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// TestBuildOneProvider: `builder build --provider` builds that provider's
// files only. In the bootstrap package as it stands, kubeadm's blob has a
// dirty header and (here) its pin a download that cannot be made: the
// build of talos neither fetches nor writes anything of kubeadm's, and
// succeeds; the build of the whole package fails on kubeadm's download;
// the build of kubeadm alone fails on it too and changes nothing.
func TestBuildOneProvider(t *testing.T) {
	root := t.TempDir()
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, fixture.AsItStandsBootstrap)
	talosYAML := readFile(t, filepath.Join(dir, "files/bootstrap-components-talos.yaml"))
	if err := os.WriteFile(filepath.Join(dir, "files/components-talos.gz"), dirtyGzip(t, talosYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := readFile(t, filepath.Join(dir, "files/metadata.yaml"))
	pinYAML := "providers:\n- kind: BootstrapProvider\n  name: kubeadm\n  version: v1.10.1\n  release: v1.10.1-bootstrap\n  sources:\n" +
		"  - url: file://" + filepath.ToSlash(filepath.Join(root, "nowhere", "bootstrap-components.yaml")) + "\n    sha256: " + strings.Repeat("ab", 32) + "\n    to: files/bootstrap-components.yaml\n" +
		"  - url: file://" + filepath.ToSlash(filepath.Join(root, "nowhere", "metadata.yaml")) + "\n    sha256: " + shaHex(meta) + "\n    to: files/metadata.yaml\n" +
		"  blob: files/components.gz\n"
	if err := os.WriteFile(filepath.Join(dir, "pin.yaml"), []byte(pinYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	kubeadmBlob := readFile(t, filepath.Join(dir, "files/components.gz"))

	if _, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)}); err == nil || !strings.Contains(err.Error(), "BootstrapProvider/kubeadm") {
		t.Fatalf("build of the package: %v, want kubeadm's download to fail it", err)
	}
	if _, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t), Provider: "BootstrapProvider/kubeadm"}); err == nil {
		t.Fatal("build of kubeadm alone succeeded without its download")
	}
	if _, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t), Provider: "BootstrapProvider/nope"}); err == nil || !strings.Contains(err.Error(), "BootstrapProvider/talos") {
		t.Fatalf("unknown provider: %v, want the providers named", err)
	}
	if got := readFile(t, filepath.Join(dir, "files/components-talos.gz")); blob.EncodingOf(got, talosYAML) != blob.DirtyHeader {
		t.Fatal("a failed build changed talos's blob")
	}

	res, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t), Provider: "BootstrapProvider/talos"})
	if err != nil {
		t.Fatalf("build of talos: %v", err)
	}
	if len(res.Fetched) != 0 {
		t.Errorf("build of talos fetched %v", res.Fetched)
	}
	for _, f := range res.Files {
		if f.Path != "files/components-talos.gz" {
			t.Errorf("build of talos wrote or checked %s", f.Path)
		}
	}
	if got := readFile(t, filepath.Join(dir, "files/components-talos.gz")); blob.EncodingOf(got, talosYAML) != blob.Reproducible {
		t.Error("talos's blob is not rebuilt reproducibly")
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, "files/components.gz")), kubeadmBlob) {
		t.Error("the build of talos changed kubeadm's blob")
	}
}
