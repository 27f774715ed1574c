// Package remotetest builds registry fixtures for the tests of the registry
// checks.
//
// It builds registry fixtures for the tests of the
// registry checks: a copy of the example packages, the in-process
// go-containerregistry registry on 127.0.0.1 or an OCI layout, and their
// releases pushed, signed and attested the way `builder push --key` does,
// so that a test can change one thing and see one check go red.
package remotetest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/sign"
)

// BuilderVersion is stamped on the fixture releases.
const BuilderVersion = "v0.0.0-remotetest"

// ExamplesDir is the repository's examples/packages directory.
func ExamplesDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("remotetest: cannot locate source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "examples", "packages")
}

// CopyExamples copies examples/packages (a core and an infrastructure provider,
// both with a pin.yaml) into a temporary directory and returns it.
func CopyExamples(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "packages")
	if err := fixture.CopyDir(ExamplesDir(), dst); err != nil {
		t.Fatalf("remotetest: copy examples: %v", err)
	}
	return dst
}

// Registry starts go-containerregistry's in-process registry on 127.0.0.1
// and returns the prefix HOST:PORT/capi (plain HTTP).
func Registry(t testing.TB) artifact.Prefix {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	p, err := artifact.ParsePrefix(strings.TrimPrefix(srv.URL, "http://") + "/capi")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Layout returns an OCI layout prefix in a temporary directory.
func Layout(t testing.TB) artifact.Prefix {
	t.Helper()
	p, err := artifact.ParsePrefix(artifact.LayoutScheme + filepath.Join(t.TempDir(), "oci"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Options reach the fixture registries (plain HTTP, no docker config).
var Options = artifact.Options{PlainHTTP: true, Credentials: credentials.NewMemoryStore()}

// Key is a fresh ECDSA P-256 signing key (unencrypted: scrypt is slow).
func Key(t testing.TB) *sign.PrivateKey {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := sign.NewPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// WritePublicKey writes k's public key as cosign.pub into a temporary
// directory and returns its path.
func WritePublicKey(t testing.TB, k *sign.PrivateKey) string {
	t.Helper()
	b, err := k.Public().PEM()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// WritePolicy writes a policy that trusts k's public key (written by
// WritePublicKey) into a temporary directory and returns its path.
func WritePolicy(t testing.TB, k *sign.PrivateKey) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte("apiVersion: pinseal/v1\nkind: Policy\nkeys:\n- "+WritePublicKey(t, k)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Release is a pushed release.
type Release struct {
	artifact.Release
	Repo   artifact.Repository
	Digest digest.Digest
}

// Ref is the release by tag: "REPO:TAG".
func (r Release) Ref() string { return r.Repo.Name() + ":" + r.Release.Release }

// Pinned is the release by digest: "REPO@sha256:…".
func (r Release) Pinned() string { return r.Repo.Name() + "@" + r.Digest.String() }

// Steps say what Publish does besides pushing.
type Steps struct {
	Sign, Attest *sign.PrivateKey // nil: leave it out
}

// Both signs and attests with k.
func Both(k *sign.PrivateKey) Steps { return Steps{Sign: k, Attest: k} }

// Publish pushes the releases of every package directory under root (as
// `builder push` reads them) to prefix, then signs and attests them as
// steps say. It returns them by release.
func Publish(t testing.TB, root string, prefix artifact.Prefix, steps Steps) map[string]Release {
	t.Helper()
	t.Setenv("SOURCE_DATE_EPOCH", "")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Release{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		rels, err := artifact.LoadReleases(filepath.Join(root, d.Name()), BuilderVersion)
		if err != nil {
			t.Fatalf("remotetest: %v", err)
		}
		for _, rel := range rels {
			r := Push(t, prefix, rel)
			Finish(t, r, steps)
			out[rel.Release] = r
		}
	}
	return out
}

// Push pushes rel to its repository below prefix (no signature).
func Push(t testing.TB, prefix artifact.Prefix, rel artifact.Release) Release {
	t.Helper()
	repo, err := prefix.Repository(rel.RepositoryName(), Options)
	if err != nil {
		t.Fatal(err)
	}
	res, err := artifact.Push(context.Background(), repo, rel, artifact.PushOptions{})
	if err != nil {
		t.Fatalf("remotetest: push %s: %v", rel, err)
	}
	return Release{Release: rel, Repo: repo, Digest: res.Descriptor.Digest}
}

// Overwrite packs rel into its repository below prefix and moves the tag
// rel.Release to it, as someone who ignores immutability would (Push
// refuses).
func Overwrite(t testing.TB, prefix artifact.Prefix, rel artifact.Release) Release {
	t.Helper()
	ctx := context.Background()
	repo, err := prefix.Repository(rel.RepositoryName(), Options)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := artifact.Pack(ctx, repo, rel)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, rel.Release); err != nil {
		t.Fatal(err)
	}
	return Release{Release: rel, Repo: repo, Digest: desc.Digest}
}

// Finish signs and attests r as steps say (the attestation is the SLSA
// provenance `builder push` makes, of r.Release).
func Finish(t testing.TB, r Release, steps Steps) {
	t.Helper()
	ctx := context.Background()
	if steps.Sign != nil {
		if _, err := sign.Sign(ctx, r.Repo, r.Digest, steps.Sign, sign.Options{}); err != nil {
			t.Fatalf("remotetest: sign %s: %v", r.Pinned(), err)
		}
	}
	if steps.Attest != nil {
		Attest(t, r, r.Release, steps.Attest)
	}
}

// Attest stores the provenance of rel (e.g. r.Release with other pins)
// as an attestation about r's digest.
func Attest(t testing.TB, r Release, rel artifact.Release, k *sign.PrivateKey) {
	t.Helper()
	stmt, err := sign.ProvenanceStatement(r.Repo.Name(), r.Digest, rel)
	if err != nil {
		t.Fatal(err)
	}
	AttestStatement(t, r, stmt, k)
}

// AttestStatement stores stmt as an attestation about r's digest.
func AttestStatement(t testing.TB, r Release, stmt []byte, k *sign.PrivateKey) {
	t.Helper()
	if _, err := sign.Attest(context.Background(), r.Repo, r.Digest, k, stmt, sign.Options{}); err != nil {
		t.Fatalf("remotetest: attest %s: %v", r.Pinned(), err)
	}
}

// WithBuilder rewrites the builder id of a provenance statement.
func WithBuilder(t testing.TB, stmt []byte, id string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(stmt, &m); err != nil {
		t.Fatal(err)
	}
	m["predicate"].(map[string]any)["runDetails"].(map[string]any)["builder"].(map[string]any)["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CopyTag points tag to at what tag from points at, in one repository
// (e.g. to copy a signature to another digest's signature tag).
func CopyTag(t testing.TB, repo artifact.Repository, from, to string) {
	t.Helper()
	ctx := context.Background()
	desc, err := repo.Resolve(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, to); err != nil {
		t.Fatal(err)
	}
}

// LayerPath is the file of a layer (by title) of r in an OCI layout
// prefix, to tamper with.
func LayerPath(t testing.TB, prefix artifact.Prefix, r Release, title string) string {
	t.Helper()
	p, err := artifact.Pull(context.Background(), r.Repo, r.Digest.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Manifest.Layers {
		if l.Annotations[ocispec.AnnotationTitle] == title {
			return filepath.Join(prefix.Dir, r.RepositoryName(), "blobs", l.Digest.Algorithm().String(), l.Digest.Encoded())
		}
	}
	t.Fatalf("remotetest: %s has no layer %s", r.Pinned(), title)
	return ""
}

// Tamper flips the last stored byte of a layer of r in an OCI layout
// prefix: same size, other digest, and the manifest still names the old
// one.
func Tamper(t testing.TB, prefix artifact.Prefix, r Release, title string) {
	t.Helper()
	p := LayerPath(t, prefix, r, title)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, Flip(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Flip returns b with its last byte changed.
func Flip(b []byte) []byte {
	c := bytes.Clone(b)
	c[len(c)-1] ^= 0xff
	return c
}
