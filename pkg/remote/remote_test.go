package remote_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"oras.land/oras-go/v2/errdef"

	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/remote"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/sign"
)

func loadTree(t *testing.T, root string) *model.Tree {
	t.Helper()
	tr, err := load.Tree(context.Background(), root, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Packages) != 2 {
		t.Fatalf("examples: %d packages", len(tr.Packages))
	}
	return tr
}

func byID(tr *model.Tree) map[string]*model.Provider {
	out := map[string]*model.Provider{}
	for _, pkg := range tr.Packages {
		for _, p := range pkg.Providers {
			out[p.ID()] = p
		}
	}
	return out
}

// TestAttachRecordsPublishedReleases: what builder push --key stores is
// found, read and verified, in a registry and in an OCI layout.
func TestAttachRecordsPublishedReleases(t *testing.T) {
	for name, prefix := range map[string]func(testing.TB) artifact.Prefix{"registry": remotetest.Registry, "layout": remotetest.Layout} {
		t.Run(name, func(t *testing.T) {
			root := remotetest.CopyExamples(t)
			pfx := prefix(t)
			key := remotetest.Key(t)
			pub := remotetest.Publish(t, root, pfx, remotetest.Both(key))
			tr := loadTree(t, root)
			if err := remote.Attach(context.Background(), tr, pfx, remote.Options{Registry: remotetest.Options, Keys: []*sign.PublicKey{key.Public()}}); err != nil {
				t.Fatal(err)
			}
			for id, p := range byID(tr) {
				a := p.Artifact
				rel, ok := pub[p.Version]
				if a == nil || !ok {
					t.Fatalf("%s: artifact %v, published %v", id, a, ok)
				}
				if !a.Found || a.Err != "" || a.Digest != rel.Digest.String() || a.Pinned() != rel.Pinned() || a.Ref != rel.Ref() {
					t.Errorf("%s: %+v, want %s", id, a, rel.Pinned())
				}
				if a.Config == nil || a.Config.Release != p.Version || a.Config.Kind != p.Kind || !slices.Equal(a.Config.Pins, rel.Pins) {
					t.Errorf("%s: config %+v", id, a.Config)
				}
				if a.BlobSHA256 == "" || a.MetadataSHA256 == "" || a.YAMLSHA256 == "" || len(a.Missing) != 0 || a.YAMLTitle != artifact.YAMLTitle {
					t.Errorf("%s: layers %+v", id, a)
				}
				if !a.Signature.Valid || a.Signature.KeyID != key.Public().ID {
					t.Errorf("%s: signature %+v", id, a.Signature)
				}
				pr := a.Provenance
				if !pr.Valid || !pr.Found || pr.BuilderID != version.BuilderID || len(pr.Materials) != len(rel.Pins) || pr.Materials[0].URL != rel.Pins[0].URL {
					t.Errorf("%s: provenance %+v", id, pr)
				}
				if a.Content != nil {
					t.Errorf("%s: Attach inspected the layers", id)
				}
			}
		})
	}
}

func TestAttachMissingUnreachableTampered(t *testing.T) {
	ctx := context.Background()
	root := remotetest.CopyExamples(t)
	key := remotetest.Key(t)
	keys := []*sign.PublicKey{key.Public()}

	// Nothing pushed: not found, no error.
	pfx := remotetest.Registry(t)
	tr := loadTree(t, root)
	if err := remote.Attach(ctx, tr, pfx, remote.Options{Registry: remotetest.Options, Keys: keys}); err != nil {
		t.Fatal(err)
	}
	for id, p := range byID(tr) {
		if a := p.Artifact; a == nil || a.Found || a.Err != "" || a.Signature.Checked || !strings.HasPrefix(a.Ref, pfx.String()+"/") {
			t.Errorf("%s not pushed: %+v", id, a)
		}
	}

	// The registry is gone: Err, not Found.
	srv := httptest.NewServer(nil)
	host := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	gone, err := artifact.ParsePrefix(host + "/capi")
	if err != nil {
		t.Fatal(err)
	}
	tr = loadTree(t, root)
	if err := remote.Attach(ctx, tr, gone, remote.Options{Registry: remotetest.Options, Keys: keys}); err != nil {
		t.Fatal(err)
	}
	for id, p := range byID(tr) {
		if a := p.Artifact; a.Found || a.Err == "" {
			t.Errorf("%s on a dead registry: %+v", id, a)
		}
	}

	// A tampered layer: the digest still resolves and the signature still
	// verifies, but the content is not trusted.
	lay := remotetest.Layout(t)
	pub := remotetest.Publish(t, root, lay, remotetest.Both(key))
	core := pub["v1.10.1-core"]
	remotetest.Tamper(t, lay, core, artifact.BlobTitle)
	tr = loadTree(t, root)
	if err := remote.Attach(ctx, tr, lay, remote.Options{Registry: remotetest.Options, Keys: keys}); err != nil {
		t.Fatal(err)
	}
	a := byID(tr)["CoreProvider/cluster-api"].Artifact
	if !a.Found || !a.Tampered || !strings.Contains(a.Err, "components.gz") || !a.Signature.Valid || a.Config == nil || a.Config.Release != "v1.10.1-core" {
		t.Errorf("tampered: %+v", a)
	}
	if b := byID(tr)["InfrastructureProvider/proxmox"].Artifact; b.Err != "" || !b.Signature.Valid {
		t.Errorf("the other release is affected: %+v", b)
	}

	// Canceled: an error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := remote.Attach(cctx, loadTree(t, root), lay, remote.Options{Registry: remotetest.Options}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled Attach = %v", err)
	}
}

func TestFetchVerdicts(t *testing.T) {
	ctx := context.Background()
	root := remotetest.CopyExamples(t)
	pfx := remotetest.Registry(t)
	key, other := remotetest.Key(t), remotetest.Key(t)
	pub := remotetest.Publish(t, root, pfx, remotetest.Steps{Sign: other})
	core := pub["v1.10.1-core"]
	opts := remote.Options{Registry: remotetest.Options, Keys: []*sign.PublicKey{key.Public()}}

	a, pulled, err := remote.Fetch(ctx, core.Repo, core.Release.Release, opts)
	if err != nil || pulled == nil {
		t.Fatal(err)
	}
	if a.Signature.Valid || a.Signature.Reason != model.OtherKey {
		t.Errorf("signature by another key: %+v", a.Signature)
	}
	if a.Provenance.Valid || a.Provenance.Found || a.Provenance.Reason != model.NoSignature {
		t.Errorf("no attestation: %+v", a.Provenance)
	}

	// By digest, and no keys at all.
	a, _, err = remote.Fetch(ctx, core.Repo, core.Digest.String(), remote.Options{Registry: remotetest.Options})
	if err != nil || a.Ref != core.Pinned() || a.Signature.Reason != model.NoTrustedKeys {
		t.Errorf("by digest without keys: %+v, %v", a, err)
	}

	// Not there.
	a, _, err = remote.Fetch(ctx, core.Repo, "v9.9.9-core", opts)
	if !errors.Is(err, errdef.ErrNotFound) || a.Found {
		t.Errorf("missing tag: %+v, %v", a, err)
	}
}

func TestInspectContent(t *testing.T) {
	ctx := context.Background()
	root := remotetest.CopyExamples(t)
	pfx := remotetest.Layout(t)
	pub := remotetest.Publish(t, root, pfx, remotetest.Steps{})
	rel := pub["v0.7.7-infraprovider-proxmox"]
	a, pulled, err := remote.Fetch(ctx, rel.Repo, rel.Release.Release, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	remote.Inspect(a, pulled, rel.Release.Release, 0)
	c := a.Content
	if c == nil || c.Blob == nil || c.Blob.Err != nil || c.Diff != nil || c.Blob.RawSHA256 != c.YAMLDigest || c.Version != "v0.7.7" {
		t.Fatalf("clean content: %+v", c)
	}
	if c.Metadata == nil || c.Metadata.Err != nil || len(c.Metadata.ReleaseSeries) == 0 {
		t.Fatalf("metadata: %+v", c.Metadata)
	}

	// A YAML layer that is not the blob's content.
	changed := rel.Release
	changed.Release = "v0.7.7-changed"
	changed.YAML = []byte(strings.Replace(string(changed.YAML), "kind: Namespace", "kind: Secret", 1))
	other := remotetest.Push(t, pfx, changed)
	a, pulled, err = remote.Fetch(ctx, other.Repo, other.Digest.String(), remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	remote.Inspect(a, pulled, "", 0)
	if d := a.Content.Diff; d == nil || !strings.Contains(d.Excerpt, "-kind: Secret") || !strings.Contains(d.Excerpt, "+kind: Namespace") {
		t.Fatalf("diff: %+v", a.Content.Diff)
	}
}
