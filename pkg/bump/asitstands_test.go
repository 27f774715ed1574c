package bump

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/report"
)

// asItStands writes the real monorepo's shape (fixture.AsItStands: kubeadm's
// blob made by gzip without -n, talos's files downloaded by a Makefile
// recipe with no digest, the core's YAML drifted from its blob) and
// returns its root and the bootstrap package.
func asItStands(t *testing.T) (root, boot string) {
	t.Helper()
	root = t.TempDir()
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	return root, filepath.Join(root, fixture.AsItStandsBootstrap)
}

func talosOpts(u *upstream, root, to string) Options {
	o := opts(u, to)
	o.Provider, o.Tree, o.TrustOnFirstUse = "BootstrapProvider/talos", root, true
	// The stand-in's talos releases have none of the fixture's CRDs: a
	// breaking change these tests of the gate let through.
	o.AllowBreaking = true
	return o
}

// checkIDs lists "check provider" of findings.
func checkIDs(fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Check+" "+f.Provider)
	}
	return out
}

// TestBumpPreExisting: bumping talos in the bootstrap package where
// kubeadm's blob has a header error from before succeeds; that finding is
// reported as pre-existing, kubeadm's files are untouched, and the
// drifted core elsewhere in the tree does not matter either.
func TestBumpPreExisting(t *testing.T) {
	u := newUpstream(t)
	root, boot := asItStands(t)
	kubeadmBlob := filepath.Join(boot, "files/components.gz")
	before, _ := os.ReadFile(kubeadmBlob)

	res, err := Bump(context.Background(), boot, talosOpts(u, root, "v0.6.13"))
	if err != nil {
		t.Fatalf("bump refused: %v", err)
	}
	if got := checkIDs(res.PreExisting); !slices.Equal(got, []string{"blob-header BootstrapProvider/kubeadm"}) {
		t.Fatalf("pre-existing %v, want kubeadm's blob-header", got)
	}
	if res.To.Release != "v0.6.13-bootstrap-talos" {
		t.Errorf("bumped to %+v", res.To)
	}
	for _, f := range res.Files {
		if f.Path == "files/components.gz" || f.Path == "files/bootstrap-components.yaml" {
			t.Errorf("the bump of talos changed kubeadm's %s", f.Path)
		}
	}
	if after, _ := os.ReadFile(kubeadmBlob); !bytes.Equal(before, after) {
		t.Error("kubeadm's blob changed")
	}
	yml, _ := os.ReadFile(filepath.Join(boot, "files/bootstrap-components-talos.yaml"))
	gz, _ := os.ReadFile(filepath.Join(boot, "files/components-talos.gz"))
	if !bytes.Equal(yml, u.bytes("siderolabs/cluster-api-bootstrap-provider-talos", "v0.6.13", "bootstrap-components.yaml")) || blob.EncodingOf(gz, yml) != blob.Reproducible {
		t.Error("talos's YAML is not v0.6.13's or its blob is not its reproducible encoding")
	}
}

// TestBumpIntroducedRefused: a bump that introduces an error (v0.7.0's
// metadata.yaml has no 0.7 series) is refused with nothing changed, even
// though the package already had an error before; the refusal names
// that one as pre-existing, apart from the one that refuses.
func TestBumpIntroducedRefused(t *testing.T) {
	u := newUpstream(t)
	root, boot := asItStands(t)
	snap := snapshot(t, root)
	_, err := Bump(context.Background(), boot, talosOpts(u, root, "v0.7.0"))
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a refusal by the gate", err)
	}
	if got := checkIDs(re.Findings); !slices.Equal(got, []string{"metadata-series BootstrapProvider/talos"}) {
		t.Errorf("refused by %v, want talos's metadata-series alone", got)
	}
	if got := checkIDs(re.PreExisting); !slices.Equal(got, []string{"blob-header BootstrapProvider/kubeadm"}) {
		t.Errorf("pre-existing %v, want kubeadm's blob-header", got)
	}
	if !strings.Contains(err.Error(), "not counted") {
		t.Errorf("the refusal does not tell the pre-existing finding apart: %v", err)
	}
	requireSame(t, snap, snapshot(t, root))
}

// TestBumpTouchedIsTheBumps: a finding about the bumped provider is the
// bump's own even when it was there before. Talos's blob with a dirty
// header is rebuilt by the bump (its finding is gone, not listed as
// pre-existing); talos's ConfigMap without the compressed annotation
// stays wrong after the bump, which is refused for it although the same
// finding was there before.
func TestBumpTouchedIsTheBumps(t *testing.T) {
	u := newUpstream(t)
	t.Run("dirty header rebuilt", func(t *testing.T) {
		root, boot := asItStands(t)
		talos := filepath.Join(boot, "files/components-talos.gz")
		yml, _ := os.ReadFile(filepath.Join(boot, "files/bootstrap-components-talos.yaml"))
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Header = gzip.Header{Name: "bootstrap-components-talos.yaml", ModTime: time.Unix(fixture.DirtyMTime, 0)}
		zw.Write(yml)
		zw.Close()
		if err := os.WriteFile(talos, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Bump(context.Background(), boot, talosOpts(u, root, "v0.6.13"))
		if err != nil {
			t.Fatalf("bump refused: %v", err)
		}
		if got := checkIDs(res.PreExisting); !slices.Equal(got, []string{"blob-header BootstrapProvider/kubeadm"}) {
			t.Errorf("pre-existing %v, want kubeadm's blob-header alone", got)
		}
		gz, _ := os.ReadFile(talos)
		yml, _ = os.ReadFile(filepath.Join(boot, "files/bootstrap-components-talos.yaml"))
		if blob.EncodingOf(gz, yml) != blob.Reproducible {
			t.Error("talos's blob is not reproducible after its bump")
		}
	})
	t.Run("stays wrong", func(t *testing.T) {
		root, boot := asItStands(t)
		cms := filepath.Join(boot, "templates/configmaps.yaml")
		b, _ := os.ReadFile(cms)
		i := bytes.LastIndex(b, []byte(`compressed: "true"`))
		if i < 0 || !bytes.Contains(b[i:], []byte("components-talos.gz")) {
			t.Fatal("talos's ConfigMap is not the last one of templates/configmaps.yaml")
		}
		b = slices.Concat(b[:i], []byte(`compressed: "yes"`), b[i+len(`compressed: "true"`):])
		if err := os.WriteFile(cms, b, 0o644); err != nil {
			t.Fatal(err)
		}
		snap := snapshot(t, root)
		_, err := Bump(context.Background(), boot, talosOpts(u, root, "v0.6.13"))
		var re *RefusedError
		if !errors.As(err, &re) {
			t.Fatalf("err = %v, want a refusal by the gate", err)
		}
		if got := checkIDs(re.Findings); !slices.Contains(got, "compressed-annotation BootstrapProvider/talos") {
			t.Errorf("refused by %v, want talos's compressed-annotation among them", got)
		}
		for _, f := range re.PreExisting {
			if f.Provider == "BootstrapProvider/talos" {
				t.Errorf("talos's own finding is listed as pre-existing: %+v", f)
			}
		}
		requireSame(t, snap, snapshot(t, root))
	})
}

// TestFindingKey: the same finding keys alike whatever line or version
// its message names; another check, provider or file does not.
func TestFindingKey(t *testing.T) {
	f := report.Finding{Check: check.BlobHeader, Package: "p", Provider: "BootstrapProvider/kubeadm", File: "p/files/components.gz", Line: 3,
		Message: `gzip header of files/components.gz (ConfigMap "v1.10.1-bootstrap") embeds modification time 2025-04-22T00:00:00Z`}
	g := f
	g.Line, g.Message = 9, strings.ReplaceAll(f.Message, "v1.10.1", "v1.10.2")
	if findingKey(f) != findingKey(g) {
		t.Error("a moved line or another version makes another finding")
	}
	for _, h := range []report.Finding{
		{Check: check.BlobYAML, Package: f.Package, Provider: f.Provider, File: f.File, Message: f.Message},
		{Check: f.Check, Package: f.Package, Provider: "BootstrapProvider/talos", File: f.File, Message: f.Message},
		{Check: f.Check, Package: f.Package, Provider: f.Provider, File: "p/files/components-talos.gz", Message: f.Message},
		{Check: f.Check, Package: f.Package, Provider: f.Provider, File: f.File, Message: "embeds file name"},
	} {
		if findingKey(f) == findingKey(h) {
			t.Errorf("%+v keys like %+v", h, f)
		}
	}
}
