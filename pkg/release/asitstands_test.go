package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/build"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// asItStandsBlobs is where each provider of fixture.AsItStands keeps its
// blob and YAML.
var asItStandsBlobs = map[string]struct{ pkg, blob, yaml string }{
	"CoreProvider/cluster-api":        {fixture.AsItStandsCore, "files/components.gz", "files/core-components.yaml"},
	"BootstrapProvider/kubeadm":       {fixture.AsItStandsBootstrap, "files/components.gz", "files/bootstrap-components.yaml"},
	"BootstrapProvider/talos":         {fixture.AsItStandsBootstrap, "files/components-talos.gz", "files/bootstrap-components-talos.yaml"},
	"ControlPlaneProvider/kamaji":     {fixture.AsItStandsCP, "files/components.gz", "files/control-plane-components.yaml"},
	"InfrastructureProvider/kubevirt": {fixture.AsItStandsInfra, "files/components.gz", "files/infrastructure-components.yaml"},
}

var asItStandsPackages = []string{fixture.AsItStandsCore, fixture.AsItStandsBootstrap, fixture.AsItStandsCP, fixture.AsItStandsInfra}

// pushAll pushes the monorepo's packages into a fresh OCI layout and
// returns the results by provider.
func pushAll(t *testing.T, root string) (map[string]PushResult, string) {
	t.Helper()
	out := t.TempDir()
	prefix, err := artifact.ParsePrefix("oci-layout:" + out)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, p := range asItStandsPackages {
		dirs = append(dirs, filepath.Join(root, p))
	}
	results, _ := Push(context.Background(), dirs, PushOptions{Prefix: prefix, BuilderVersion: "test"})
	m := map[string]PushResult{}
	for _, r := range results {
		if r.PackageError() {
			t.Fatalf("%s: %s", r.Package, r.Error)
		}
		m[r.Provider] = r
	}
	return m, out
}

// TestPushAsItStands is the push half of the real monorepo's case: two
// providers' blobs were made by gzip without -n (a blob-header error each)
// and hold exactly their YAML, the core's YAML drifted from its blob.
// Every provider whose content is clean is pushed, those with a dirty
// header with a warning and the reproducible encoding of their YAML; the
// drifted core is refused for blob-yaml alone. The digests do not depend
// on the name and time the tree's header embeds, and are those pushed
// after `builder build` made the tree clean, whose blobs are then byte for
// byte the pushed ones.
func TestPushAsItStands(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	root := t.TempDir()
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	first, layout := pushAll(t, root)
	if len(first) != len(asItStandsBlobs) {
		t.Fatalf("results %v", first)
	}
	for id, r := range first {
		v := asItStandsBlobs[id]
		dirty := slices.Contains(fixture.AsItStandsDirtyHeader, id)
		switch {
		case id == "CoreProvider/cluster-api":
			if len(r.Refused) != 1 || r.Refused[0].Check != check.BlobYAML || r.Reference != "" {
				t.Errorf("drifted core: %+v, want refused for blob-yaml alone", r)
			}
			continue
		case r.Error != "" || r.Status != artifact.Pushed:
			t.Errorf("%s: %+v, want pushed", id, r)
			continue
		case dirty && (len(r.Warnings) != 1 || r.Warnings[0].Check != check.BlobHeader || r.Warnings[0].Provider != id ||
			r.Reencoded != filepath.ToSlash(filepath.Join(root, v.pkg, v.blob))):
			t.Errorf("%s (dirty header): warnings %+v, reencoded %q; want its blob-header as a warning and its blob re-encoded", id, r.Warnings, r.Reencoded)
		case !dirty && (len(r.Warnings) != 0 || r.Reencoded != ""):
			// talos shares its package with kubeadm's dirty header.
			t.Errorf("%s: warnings %+v, reencoded %q; want none", id, r.Warnings, r.Reencoded)
		}
		p := pull(t, layout, r)
		yml := read(t, root, v.pkg, v.yaml)
		if want, _ := blob.CompressBytes(yml); dirty && !bytes.Equal(p.Blob, want) {
			t.Errorf("%s: components.gz is not the reproducible encoding of the YAML", id)
		}
		if !dirty && !bytes.Equal(p.Blob, read(t, root, v.pkg, v.blob)) {
			t.Errorf("%s: components.gz is not the tree's blob", id)
		}
	}

	// Another name and time in kubeadm's header: the same artifact.
	kubeadm := asItStandsBlobs["BootstrapProvider/kubeadm"]
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Header = gzip.Header{Name: "kubeadm.yaml", ModTime: time.Unix(1700000000, 0)}
	zw.Write(read(t, root, kubeadm.pkg, kubeadm.yaml))
	zw.Close()
	if err := os.WriteFile(filepath.Join(root, kubeadm.pkg, kubeadm.blob), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	other, _ := pushAll(t, root)
	if a, b := digestOf(first["BootstrapProvider/kubeadm"]), digestOf(other["BootstrapProvider/kubeadm"]); a == "" || a != b {
		t.Errorf("kubeadm pushed as %s, and as %s under another header", a, b)
	}

	// builder build makes the tree clean: every blob is then the pushed
	// one, and a push gives the same digests (the core's is new).
	for _, p := range asItStandsPackages {
		if _, err := build.Build(context.Background(), filepath.Join(root, p), build.Options{Fetcher: &fetch.Fetcher{Offline: true, CacheDir: t.TempDir()}}); err != nil {
			t.Fatal(err)
		}
	}
	after, layout2 := pushAll(t, root)
	for id, r := range after {
		v := asItStandsBlobs[id]
		if r.Error != "" || len(r.Warnings) != 0 || r.Reencoded != "" {
			t.Errorf("%s after builder build: %+v", id, r)
			continue
		}
		if id != "CoreProvider/cluster-api" && digestOf(r) != digestOf(first[id]) {
			t.Errorf("%s: pushed as %s before builder build, %s after", id, digestOf(first[id]), digestOf(r))
		}
		if !bytes.Equal(pull(t, layout2, r).Blob, read(t, root, v.pkg, v.blob)) {
			t.Errorf("%s: after builder build the tree's blob is not the pushed one", id)
		}
	}
}

func read(t *testing.T, root string, rel ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{root}, rel...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func digestOf(r PushResult) string {
	_, d, _ := strings.Cut(r.Reference, "@")
	return d
}

// pull reads back what r pushed into the layout below dir.
func pull(t *testing.T, dir string, r PushResult) *artifact.Pulled {
	t.Helper()
	repo, _, err := artifact.OpenReference(r.Reference, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := artifact.Pull(context.Background(), repo, r.Release)
	if err != nil {
		t.Fatalf("pull %s from %s: %v", r.Reference, dir, err)
	}
	return p
}

// TestReleasesWithPinFileDirtyHeader: a pinned package whose blob holds
// exactly its YAML under a header with a name and a time is pushed in the
// reproducible encoding, with its blob-header as a warning; the clean
// package (GNU gzip -9 -n's blob) is pushed byte for byte.
func TestReleasesWithPinFileDirtyHeader(t *testing.T) {
	root := fixture.CleanCopy(t)
	dir := filepath.Join(root, "packages/system/capi-providers-core")
	clean, err := Releases(context.Background(), dir, Options{})
	if err != nil || len(clean) != 1 || clean[0].Release == nil || clean[0].Reencoded != "" || len(clean[0].Warnings) != 0 {
		t.Fatalf("clean pinned core: %+v, %v", clean, err)
	}
	gz := read(t, dir, "files/components.gz")
	if !bytes.Equal(clean[0].Release.Blob, gz) {
		t.Fatal("the clean blob is not pushed byte for byte")
	}
	yml := read(t, dir, "files/core-components.yaml")
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Header = gzip.Header{Name: "core-components.yaml", ModTime: time.Unix(fixture.DirtyMTime, 0)}
	zw.Write(yml)
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "files/components.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	provs, err := Releases(context.Background(), dir, Options{})
	if err != nil || len(provs) != 1 || provs[0].Release == nil {
		t.Fatalf("dirty pinned core: %+v, %v", provs, err)
	}
	p := provs[0]
	want, _ := blob.CompressBytes(yml)
	if !bytes.Equal(p.Release.Blob, want) || p.Reencoded != filepath.ToSlash(dir)+"/files/components.gz" {
		t.Errorf("dirty pinned core: reencoded %q, blob is ours %v", p.Reencoded, bytes.Equal(p.Release.Blob, want))
	}
	if len(p.Warnings) != 1 || p.Warnings[0].Check != check.BlobHeader {
		t.Errorf("warnings %+v, want the blob-header", p.Warnings)
	}
}
