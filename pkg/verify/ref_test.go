package verify

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"

	"github.com/pinseal/pinseal/api/apitest"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

// redChecks lists the checks with findings that count, sorted.
func redChecks(r *report.Report) []string {
	var ids []string
	for _, f := range r.Findings {
		if f.Waiver == nil && !slices.Contains(ids, f.Check) {
			ids = append(ids, f.Check)
		}
	}
	slices.Sort(ids)
	return ids
}

func verifyRef(t *testing.T, ref string, opts RefOptions) *report.Report {
	t.Helper()
	if reflect.ValueOf(opts.Registry).IsZero() {
		opts.Registry = remotetest.Options
	}
	r, _, err := Ref(context.Background(), ref, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRefClean(t *testing.T) {
	for name, prefix := range map[string]func(testing.TB) artifact.Prefix{"registry": remotetest.Registry, "layout": remotetest.Layout} {
		t.Run(name, func(t *testing.T) {
			key := remotetest.Key(t)
			pfx := prefix(t)
			pub := remotetest.Publish(t, remotetest.CopyExamples(t), pfx, remotetest.Both(key))
			for _, rel := range pub {
				for _, ref := range []string{rel.Ref(), rel.Pinned()} {
					r, dgst, err := Ref(context.Background(), ref, RefOptions{Registry: remotetest.Options, Keys: []*sign.PublicKey{key.Public()}})
					if err != nil {
						t.Fatal(err)
					}
					if !r.Summary.Passed || len(r.Findings) != 0 || dgst != rel.Digest.String() {
						t.Fatalf("%s: %s (digest %s)", ref, findings(r), dgst)
					}
					if r.Root != ref || len(r.Packages) != 1 || r.Packages[0].Path != rel.Repo.Name() || r.SchemaVersion != report.SchemaVersion {
						t.Fatalf("%s: report %+v", ref, r)
					}
					s := r.Packages[0].Providers
					if len(s) != 1 || s[0].Kind != rel.Kind || s[0].Name != rel.Name || s[0].Version != rel.Release.Release || s[0].Artifact != rel.Pinned() {
						t.Fatalf("%s: provider summary %+v", ref, s)
					}
					if src := s[0].Source; src == nil || src.Kind != report.SourceOCI || !src.Pinned || src.Registry == "" {
						t.Fatalf("%s: source %+v, want a verified OCI artifact", ref, src)
					}
				}
			}
		})
	}
}

func TestRefErrors(t *testing.T) {
	ctx := context.Background()
	key := remotetest.Key(t)
	pfx := remotetest.Registry(t)
	pub := remotetest.Publish(t, remotetest.CopyExamples(t), pfx, remotetest.Both(key))
	core := pub["v1.10.1-core"]
	keys := []*sign.PublicKey{key.Public()}
	srv := httptest.NewServer(nil)
	dead := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	tests := []struct {
		name string
		ref  string
		opts RefOptions
		is   error
		want string
	}{
		{"not there", core.Repo.Name() + ":v9.9.9-core", RefOptions{Keys: keys}, errdef.ErrNotFound, "does not exist"},
		{"no tag", core.Repo.Name(), RefOptions{Keys: keys}, nil, "names no tag or digest"},
		{"URL", "http://" + core.Ref(), RefOptions{Keys: keys}, nil, "URL scheme"},
		{"no keys", core.Ref(), RefOptions{}, ErrNoTrustedKeys, "no trusted keys"},
		{"registry down", dead + "/capi/core-cluster-api:v1.10.1-core", RefOptions{Keys: keys}, nil, "look up"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Registry = remotetest.Options
			r, _, err := Ref(ctx, tc.ref, tc.opts)
			if err == nil || r != nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("Ref(%s) = %v, %v; want an error with %q", tc.ref, r, err, tc.want)
			}
		})
	}
	if d, err := ResolveRef(ctx, core.Ref(), remotetest.Options); err != nil || d != core.Digest.String() {
		t.Fatalf("ResolveRef = %s, %v", d, err)
	}
	if _, err := ResolveRef(ctx, core.Repo.Name()+":nope", remotetest.Options); !errors.Is(err, errdef.ErrNotFound) {
		t.Fatalf("ResolveRef(missing) = %v", err)
	}
}

// gzipNamed gzips data with a file name and time in the header (gzip
// without -n).
func gzipNamed(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Name = "core-components.yaml"
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pushWithout packs rel without the layer titled skip and tags it.
func pushWithout(t *testing.T, repo artifact.Repository, rel artifact.Release, skip, tag string) {
	t.Helper()
	ctx := context.Background()
	cfg, _ := json.Marshal(rel.Config())
	cd := content.NewDescriptorFromBytes(artifact.ConfigMediaType, cfg)
	if err := repo.Push(ctx, cd, bytes.NewReader(cfg)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		t.Fatal(err)
	}
	var layers []ocispec.Descriptor
	for title, data := range map[string][]byte{artifact.BlobTitle: rel.Blob, artifact.MetadataTitle: rel.Metadata, artifact.YAMLTitle: rel.YAML} {
		if title == skip {
			continue
		}
		d := content.NewDescriptorFromBytes("application/octet-stream", data)
		d.Annotations = map[string]string{ocispec.AnnotationTitle: title}
		if ok, _ := repo.Exists(ctx, d); !ok {
			if err := repo.Push(ctx, d, bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
		}
		layers = append(layers, d)
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, artifact.ArtifactType, oras.PackManifestOptions{Layers: layers, ConfigDescriptor: &cd})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, tag); err != nil {
		t.Fatal(err)
	}
}

// TestRefFindings: one thing wrong with an artifact, one check red.
func TestRefFindings(t *testing.T) {
	type env struct {
		prefix artifact.Prefix
		key    *sign.PrivateKey
		pub    map[string]remotetest.Release
	}
	core := func(e *env) remotetest.Release { return e.pub["v1.10.1-core"] }
	// variant pushes a changed copy of the core release under a new tag,
	// signed and attested, and returns its tag reference.
	variant := func(t *testing.T, e *env, change func(rel *artifact.Release)) string {
		rel := core(e).Release
		rel.Release = "v1.10.1-core-variant"
		change(&rel)
		r := remotetest.Push(t, e.prefix, rel)
		remotetest.Finish(t, r, remotetest.Both(e.key))
		return r.Ref()
	}
	tests := []struct {
		name   string
		layout bool
		ref    func(t *testing.T, e *env) string
		check  string
		want   string
	}{
		{"tampered layer", true, func(t *testing.T, e *env) string {
			remotetest.Tamper(t, e.prefix, core(e), artifact.YAMLTitle)
			return core(e).Ref()
		}, check.RegistryDigest, "do not match the digests in its manifest"},
		{"YAML layer is not the blob's content", false, func(t *testing.T, e *env) string {
			return variant(t, e, func(rel *artifact.Release) {
				rel.YAML = bytes.Replace(rel.YAML, []byte("kind: Namespace"), []byte("kind: Secret"), 1)
			})
		}, check.BlobYAML, "inflates to something other than layer components.yaml: first difference at line"},
		{"blob made by gzip without -n", false, func(t *testing.T, e *env) string {
			return variant(t, e, func(rel *artifact.Release) { rel.Blob = gzipNamed(t, rel.YAML) })
		}, check.BlobHeader, `embeds file name "core-components.yaml"`},
		{"blob truncated", false, func(t *testing.T, e *env) string {
			return variant(t, e, func(rel *artifact.Release) { rel.Blob = rel.Blob[:len(rel.Blob)-9] })
		}, model.CheckBlobCorrupt, "truncated"},
		{"metadata lacks the series", false, func(t *testing.T, e *env) string {
			return variant(t, e, func(rel *artifact.Release) {
				rel.Metadata = []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 9\n  contract: v1beta1\n")
			})
		}, check.MetadataSeries, "no releaseSeries for 1.10"},
		{"config contract is not the metadata's", false, func(t *testing.T, e *env) string {
			return variant(t, e, func(rel *artifact.Release) { rel.Contract = "v1beta2" })
		}, check.MetadataSeries, "says contract v1beta2"},
		{"layer missing", false, func(t *testing.T, e *env) string {
			rel := core(e).Release
			rel.Release = "v1.10.1-core-nometa"
			pushWithout(t, core(e).Repo, rel, artifact.MetadataTitle, rel.Release)
			r, err := ResolveRef(context.Background(), core(e).Repo.Name()+":v1.10.1-core-nometa", remotetest.Options)
			if err != nil {
				t.Fatal(err)
			}
			c := core(e)
			c.Release, c.Digest = rel, digestOf(t, r)
			remotetest.Finish(t, c, remotetest.Both(e.key))
			return core(e).Repo.Name() + ":v1.10.1-core-nometa"
		}, check.RegistryDigest, "lacks layer metadata.yaml"},
		{"tag holds another release", false, func(t *testing.T, e *env) string {
			remotetest.CopyTag(t, core(e).Repo, "v1.10.1-core", "v1.10.2-core")
			return core(e).Repo.Name() + ":v1.10.2-core"
		}, check.VersionReused, `release "v1.10.1-core" in the registry, "v1.10.2-core" in the tree`},
		{"unsigned", false, func(t *testing.T, e *env) string {
			rel := core(e).Release
			rel.Release = "v1.10.1-core-unsigned"
			r := remotetest.Push(t, e.prefix, rel)
			remotetest.Finish(t, r, remotetest.Steps{Attest: e.key})
			return r.Pinned()
		}, check.Signature, "is not signed"},
		{"materials are not the config's pins", false, func(t *testing.T, e *env) string {
			rel := core(e).Release
			rel.Release = "v1.10.1-core-materials"
			r := remotetest.Push(t, e.prefix, rel)
			remotetest.Finish(t, r, remotetest.Steps{Sign: e.key})
			bad := rel
			bad.Pins = slices.Clone(bad.Pins)
			bad.Pins[1].URL = "https://evil.example/metadata.yaml"
			remotetest.Attest(t, r, bad, e.key)
			return r.Ref()
		}, check.Provenance, "other materials than the artifact's pins"},
		{"attestation copied from another digest", false, func(t *testing.T, e *env) string {
			rel := core(e).Release
			rel.Release = "v1.10.1-core-copied"
			r := remotetest.Push(t, e.prefix, rel)
			remotetest.Finish(t, r, remotetest.Steps{Sign: e.key})
			remotetest.CopyTag(t, r.Repo, sign.AttestationTag(core(e).Digest), sign.AttestationTag(r.Digest))
			return r.Ref()
		}, check.Provenance, "about another artifact"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{key: remotetest.Key(t)}
			if tc.layout {
				e.prefix = remotetest.Layout(t)
			} else {
				e.prefix = remotetest.Registry(t)
			}
			e.pub = remotetest.Publish(t, remotetest.CopyExamples(t), e.prefix, remotetest.Both(e.key))
			ref := tc.ref(t, e)
			r := verifyRef(t, ref, RefOptions{Keys: []*sign.PublicKey{e.key.Public()}})
			if got := redChecks(r); !slices.Equal(got, []string{tc.check}) {
				t.Fatalf("red checks = %v, want [%s]:\n%s", got, tc.check, findings(r))
			}
			if f := r.Findings[0]; !strings.Contains(f.Message, tc.want) || f.Package != r.Packages[0].Path || f.Hint == "" {
				t.Errorf("finding %+v lacks %q", f, tc.want)
			}
			if r.ExitCode() != 1 {
				t.Errorf("exit code %d", r.ExitCode())
			}
		})
	}
}

func TestRefPolicy(t *testing.T) {
	key := remotetest.Key(t)
	pfx := remotetest.Registry(t)
	pub := remotetest.Publish(t, remotetest.CopyExamples(t), pfx, remotetest.Steps{Attest: key})
	core := pub["v1.10.1-core"]
	// A live waiver on the repository covers the unsigned artifact; an
	// expired waiver of a tree package does not leak into the artifact's
	// report; tree-only checks are not reported.
	doc := `apiVersion: pinseal/v1
kind: Policy
checks:
  pin-missing: error
waivers:
- package: "` + pfx.Host + `/capi/*"
  check: signature
  reason: signing is being rolled out
  expires: 2999-01-01
- package: packages/system/capi-providers-core
  check: blob-header
  reason: old
  expires: 2000-01-01
`
	pol, err := policy.Parse([]byte(doc), "waivers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := verifyRef(t, core.Ref(), RefOptions{Policy: pol, Keys: []*sign.PublicKey{key.Public()}})
	if !r.Summary.Passed || r.Summary.Waived != 1 || len(r.Findings) != 1 || r.Findings[0].Check != check.Signature {
		t.Fatalf("waived: %+v\n%s", r.Summary, findings(r))
	}
	if pol.Checks[check.ConfigMapVersion] != "" || len(pol.Waivers) != 2 {
		t.Fatal("Ref changed the caller's policy")
	}

	// Signature and provenance off: no key needed.
	off, err := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nchecks:\n  signature: off\n  provenance: off\n"), "off.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r = verifyRef(t, core.Ref(), RefOptions{Policy: off})
	if !r.Summary.Passed || len(r.Findings) != 0 {
		t.Fatalf("checks off: %s", findings(r))
	}
}

// TestRefRunsArtifactChecksOnly: Ref evaluates an artifact with
// check.ArtifactChecks and nothing else, whatever the policy turns on.
func TestRefRunsArtifactChecksOnly(t *testing.T) {
	pol, err := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nchecks:\n  pin-missing: error\n  configmap-version: error\n"), "on.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tr := artifactTree("reg.example/capi/core:v1", "reg.example/capi/core", "v1", &model.Artifact{})
	var got, want []string
	for _, c := range Checks(refOptions(pol, tr, RefOptions{})) {
		got = append(got, c.ID)
	}
	for _, c := range check.ArtifactChecks(nil) {
		want = append(want, c.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Ref runs %v, want the artifact checks %v", got, want)
	}
}

func digestOf(t *testing.T, s string) digest.Digest {
	t.Helper()
	d, err := digest.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRegistryReportsMatchSchema: reports with registry and artifact
// findings follow api/report.schema.json.
func TestRegistryReportsMatchSchema(t *testing.T) {
	schema := apitest.ReportSchema(t)
	key := remotetest.Key(t)
	pfx := remotetest.Layout(t)
	root := remotetest.CopyExamples(t)
	pub := remotetest.Publish(t, root, pfx, remotetest.Steps{Sign: key})
	remotetest.Tamper(t, pfx, pub["v1.10.1-core"], artifact.BlobTitle)
	reports := map[string]*report.Report{
		"check": checkRegistry(t, root, pfx, nil, key.Public()),
		"ref":   verifyRef(t, pub["v1.10.1-core"].Ref(), RefOptions{Keys: []*sign.PublicKey{key.Public()}}),
		"ref2":  verifyRef(t, pub["v0.7.7-infraprovider-proxmox"].Pinned(), RefOptions{Keys: []*sign.PublicKey{remotetest.Key(t).Public()}}),
	}
	for name, r := range reports {
		if r.Summary.Errors < 2 {
			t.Errorf("%s: %d errors, want >= 2:\n%s", name, r.Summary.Errors, findings(r))
		}
		checkSchema(t, schema, name, r)
	}
}

// TestRefRegistryFails: a registry that answers 5xx while the layers are
// read is an error (nothing verified), not a finding about the artifact.
func TestRefRegistryFails(t *testing.T) {
	key := remotetest.Key(t)
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	var failing atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			http.Error(w, "storage backend down", http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	pfx, err := artifact.ParsePrefix(strings.TrimPrefix(srv.URL, "http://") + "/capi")
	if err != nil {
		t.Fatal(err)
	}
	pub := remotetest.Publish(t, remotetest.CopyExamples(t), pfx, remotetest.Both(key))
	failing.Store(true)
	r, _, err := Ref(context.Background(), pub["v1.10.1-core"].Ref(), RefOptions{Registry: remotetest.Options, Keys: []*sign.PublicKey{key.Public()}})
	if err == nil || r != nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("Ref on a failing registry = %v, %v", r, err)
	}
}

// TestRefTagBinding: a tag is bound to its release, and a repository to
// its provider. A tag moved onto another signed release fails
// version-reused both as REPO:TAG and, as the service verifies it, as
// REPO@DIGEST with the tag it was resolved from; a signed release copied
// (with its signature and attestation) into another provider's
// repository fails version-reused too.
func TestRefTagBinding(t *testing.T) {
	ctx := context.Background()
	key := remotetest.Key(t)
	prefix := remotetest.Registry(t)
	pub := remotetest.Publish(t, remotetest.CopyExamples(t), prefix, remotetest.Both(key))
	core := pub["v1.10.1-core"]
	opts := RefOptions{Keys: []*sign.PublicKey{key.Public()}}
	wantRed := func(r *report.Report, want string) {
		t.Helper()
		if got := redChecks(r); !slices.Equal(got, []string{check.VersionReused}) {
			t.Fatalf("red checks = %v, want [%s]:\n%s", got, check.VersionReused, findings(r))
		}
		if f := r.Findings[0]; !strings.Contains(f.Message, want) {
			t.Fatalf("finding %q lacks %q", f.Message, want)
		}
	}

	remotetest.CopyTag(t, core.Repo, "v1.10.1-core", "v9.9.9-other")
	wantRed(verifyRef(t, core.Repo.Name()+":v9.9.9-other", opts), `release "v1.10.1-core" in the registry, "v9.9.9-other"`)
	byService := opts
	byService.Tag = "v9.9.9-other"
	r := verifyRef(t, core.Pinned(), byService)
	wantRed(r, `release "v1.10.1-core" in the registry, "v9.9.9-other"`)
	// The signed provenance names the release too.
	if d := r.Findings[0].Detail; !strings.Contains(d, `release "v1.10.1-core" in the provenance, "v9.9.9-other"`) {
		t.Fatalf("detail %q does not say what the provenance names", d)
	}
	// The digest alone names no tag: it is the release its config says.
	if r := verifyRef(t, core.Pinned(), opts); !r.Summary.Passed {
		t.Fatalf("by digest without a tag:\n%s", findings(r))
	}
	byService.Tag = "v1.10.1-core"
	if r := verifyRef(t, core.Pinned(), byService); !r.Summary.Passed {
		t.Fatalf("by digest with its own tag:\n%s", findings(r))
	}

	// Copied with its signature and attestation into another provider's
	// repository: signed, attested, and still not that provider's.
	var other remotetest.Release
	for _, r := range pub {
		if r.RepositoryName() != core.RepositoryName() {
			other = r
			break
		}
	}
	for _, tag := range []string{"v1.10.1-core", sign.SignatureTag(core.Digest), sign.AttestationTag(core.Digest)} {
		if _, err := oras.Copy(ctx, core.Repo, tag, other.Repo, tag, oras.DefaultCopyOptions); err != nil {
			t.Fatal(err)
		}
	}
	wantRed(verifyRef(t, other.Repo.Name()+":v1.10.1-core", opts), "whose releases belong in repository core-cluster-api")
}
