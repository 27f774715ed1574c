//go:build integration

package artifact

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"oras.land/oras-go/v2/errdef"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// TestIntegrationOrasPullsTitledFiles: the upstream oras CLI pulls the three
// titled files of what we pushed to a real docker-registry, byte-identical.
func TestIntegrationOrasPullsTitledFiles(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	oras := testpeer.Oras(t)
	reg := testpeer.StartRegistry(t)
	ctx := context.Background()
	rel := testRelease(t)
	rel.Kind, rel.Type, rel.Name = "ControlPlaneProvider", "control-plane", "talos"
	prefix, err := ParsePrefix(reg.Host + "/capi")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := prefix.Repository(rel.RepositoryName(), Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Push(ctx, repo, rel, PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if repo.Name() != reg.Host+"/capi/control-plane-talos" {
		t.Fatalf("repository %s", repo.Name())
	}

	out := t.TempDir()
	r := testpeer.Run(t, nil, oras, "pull", "--plain-http", "-o", out, repo.Name()+":"+rel.Release)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	want := map[string][]byte{
		"components.gz":   rel.Blob,
		"metadata.yaml":   rel.Metadata,
		"components.yaml": rel.YAML,
	}
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatalf("oras did not pull %s: %v\n%s", name, err, r.Stdout)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s pulled by oras differs from the pushed bytes", name)
		}
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != len(want) {
		t.Errorf("oras pulled %d files, want %d", len(entries), len(want))
	}

	// The digest oras resolves is the one we pushed (and the one a layout gets).
	r = testpeer.Run(t, nil, oras, "resolve", "--plain-http", repo.Name()+":"+rel.Release)
	if r.Err != nil || strings.TrimSpace(r.Stdout) != res.Descriptor.Digest.String() {
		t.Fatalf("oras resolve = %q, %v; want %s", r.Stdout, r.Err, res.Descriptor.Digest)
	}
	layout, _ := OpenLayout(t.TempDir())
	lres, err := Push(ctx, layout, rel, PushOptions{})
	if err != nil || lres.Descriptor.Digest != res.Descriptor.Digest {
		t.Fatalf("layout push gave %s (%v), registry %s", lres.Descriptor.Digest, err, res.Descriptor.Digest)
	}
}

// TestIntegrationPushFaults puts a fault proxy in front of docker-registry:
// a push that meets a 5xx, a dropped connection or a hang writes no tag,
// and running it again completes.
func TestIntegrationPushFaults(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	reg := testpeer.StartRegistry(t)
	for i, tt := range pushFaults() {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			proxy := testpeer.NewFaultProxy(t, reg.URL)
			rel := testRelease(t)
			name := "capi/fault" + string(rune('a'+i)) + "/infrastructure-proxmox"
			repo, err := OpenRegistry(proxy.Host+"/"+name, Options{PlainHTTP: true, ResponseTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			direct, err := OpenRegistry(reg.Host+"/"+name, Options{PlainHTTP: true})
			if err != nil {
				t.Fatal(err)
			}

			// An older release is there already; its tag must not move.
			old := testRelease(t)
			old.Release = "v0.7.6-infraprovider-proxmox"
			oldRes, err := Push(ctx, direct, old, PushOptions{})
			if err != nil {
				t.Fatal(err)
			}

			proxy.Set(tt.rule)
			if _, err := Push(ctx, repo, rel, PushOptions{}); err == nil {
				t.Fatalf("push succeeded through the fault; requests: %v", proxy.Requests())
			}
			if proxy.Injected() == 0 {
				t.Fatalf("no fault injected; requests: %v", proxy.Requests())
			}
			if d, err := direct.Resolve(ctx, rel.Release); !errors.Is(err, errdef.ErrNotFound) {
				t.Fatalf("tag %s written by a failed push: %v (%v)", rel.Release, d.Digest, err)
			}
			if d, err := direct.Resolve(ctx, old.Release); err != nil || d.Digest != oldRes.Descriptor.Digest {
				t.Fatalf("tag %s moved to %v (%v)", old.Release, d.Digest, err)
			}

			proxy.Set(nil)
			res, err := Push(ctx, repo, rel, PushOptions{})
			if err != nil || res.Status != Pushed {
				t.Fatalf("retry = %+v, %v", res, err)
			}
			p, err := Pull(ctx, direct, rel.Release)
			if err != nil || !bytes.Equal(p.Blob, rel.Blob) {
				t.Fatalf("pull after the retry: %v", err)
			}
		})
	}
}

// TestIntegrationTamperedLayer changes a stored blob inside docker-registry's
// storage: Pull names the layer and wraps ErrTampered.
func TestIntegrationTamperedLayer(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	reg := testpeer.StartRegistry(t)
	ctx := context.Background()
	repo, err := OpenRegistry(reg.Host+"/capi/infrastructure-proxmox", Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	rel := testRelease(t)
	res, err := Push(ctx, repo, rel, PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Pull(ctx, repo, res.Descriptor.Digest.String())
	if err != nil {
		t.Fatal(err)
	}
	path := reg.BlobPath(p.Manifest.Layers[0].Digest.String())
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("registry storage layout: %v", err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Pull(ctx, repo, rel.Release)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "layer components.gz") {
		t.Fatalf("Pull = %v, want ErrTampered naming components.gz", err)
	}
}

// TestIntegrationOperatorInstallsFromRegistry: every kind pushed to a real
// docker-registry is installed, byte for byte, by the simulated operator
// fetch reading that registry, with the current and the old type names.
func TestIntegrationOperatorInstallsFromRegistry(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	reg := testpeer.StartRegistry(t)
	ctx := context.Background()
	prefix, err := ParsePrefix(reg.Host + "/capi")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range operator.Kinds() {
		rel := kindRelease(t, kind)
		repo, err := prefix.Repository(rel.RepositoryName(), Options{PlainHTTP: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Push(ctx, repo, rel, PushOptions{}); err != nil {
			t.Fatal(err)
		}
		installs(t, ctx, repo, rel.Release, rel)
	}
}
