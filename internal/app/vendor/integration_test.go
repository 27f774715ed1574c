//go:build integration

package vendor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/pinseal/pinseal/internal/app/vendor"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/opsim"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/verify"
)

// TestIntegrationVendorOCI: with the chart's registry value set, builder
// vendor --to-oci pushes the release the operator would download to the
// reference the chart's own fetchConfig.oci template names, signed and
// attested, in a real docker-registry; verifier check with that value and
// the registry allowed then holds the provider as an OCI artifact it
// verified, with no finding, and the operator's fetch installs the
// upstream bytes from it. A push that fails (the registry is gone)
// leaves the tree as it was.
func TestIntegrationVendorOCI(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	reg := testpeer.StartRegistry(t)
	key := remotetest.Key(t)
	w := newWorld(t)
	ctx := context.Background()
	values := filepath.Join(t.TempDir(), "platform-values.yaml")
	if err := os.WriteFile(values, []byte("registry: http://"+reg.Host+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fp := fetchedProvider(t, "ControlPlaneProvider/kamaji")
	opts := w.opts
	opts.Provider, opts.Values, opts.ToOCI = fp.ID(), []string{values}, reg.Host+"/capi"
	opts.Key = func() (*sign.PrivateKey, error) { return key, nil }
	opts.BuilderVersion = remotetest.BuilderVersion
	opts.Registry = artifact.Options{Credentials: credentials.NewMemoryStore()}

	// Another prefix than the chart's reference is refused, nothing pushed.
	bad := opts
	bad.ToOCI = reg.Host + "/elsewhere"
	before := snapshot(t, w.root)
	if _, err := vendor.Vendor(ctx, w.chart(fp.ID(), t), bad); err == nil || !strings.Contains(err.Error(), "not under --to-oci") {
		t.Fatalf("other prefix: err = %v", err)
	}

	res, err := vendor.Vendor(ctx, w.chart(fp.ID(), t), opts)
	if err != nil {
		t.Fatal(err)
	}
	repo := reg.Host + "/capi/control-plane-kamaji-components"
	if res.Form != vendor.FormOCI || !strings.HasPrefix(res.Reference, repo+"@sha256:") || res.Tag != fp.Version || !res.Signed || len(res.Files) != 3 {
		t.Fatalf("result %+v", res)
	}

	vreg, err := verify.NewRegistry(nil, verify.RegistryOptions{Registry: opts.Registry, Keys: []*sign.PublicKey{key.Public()}, Allow: []string{reg.Host}})
	if err != nil {
		t.Fatal(err)
	}
	vopts := verify.Options{Registry: vreg}
	vopts.Values = []load.ValuesFiles{{Package: "packages/system/" + fp.Chart, Files: []string{values}}}
	tree, r, err := verify.Run(ctx, w.root, vopts)
	if err != nil {
		t.Fatal(err)
	}
	pinnedMetadataLoaded(t, tree, fp)
	if s := sourceOf(r, fp.ID()); s == nil || s.Kind != report.SourceOCI || !s.Pinned || s.Ref != repo+":"+fp.Version {
		t.Fatalf("source %+v", s)
	}
	for _, f := range r.Findings {
		// The core provider's metadata is not in the tree, so no
		// contract can be checked (a warning for every provider); the
		// vendored provider's own metadata is.
		uncheckable := f.Check == check.Contract && f.Severity == report.Warning && strings.Contains(f.Message, "could not be checked") &&
			strings.Contains(f.Message, "the core provider CoreProvider/cluster-api's metadata.yaml is not in the tree")
		if (f.Provider == fp.ID() && !uncheckable) || f.Severity == report.Error {
			t.Errorf("finding %s %s: %s", f.Check, f.Provider, f.Message)
		}
	}
	if !r.Summary.Passed || r.Summary.Sources.Pinned != 1 {
		t.Fatalf("summary %+v", r.Summary)
	}

	// The operator installs the upstream bytes from the artifact.
	src, _, err := artifact.OpenReference(repo, artifact.Options{PlainHTTP: true, Credentials: credentials.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	comp, meta, err := opsim.Fetch(ctx, src, fp.Version, opsim.Provider{Type: "control-plane", Name: fp.Name, Version: fp.Version})
	wantComp, wantMeta := fixture.FetchedRelease(fp)
	if err != nil || string(comp) != string(wantComp) || string(meta) != string(wantMeta) {
		t.Fatalf("operator fetch: %v", err)
	}

	// The registry check goes red when the artifact is not what the tree
	// pins.
	pinPath := filepath.Join(w.chart(fp.ID(), t), "pin.yaml")
	pinYAML, _ := os.ReadFile(pinPath)
	edited := strings.Replace(string(pinYAML), releaseapi.SHA256(wantComp), strings.Repeat("ab", 32), 1)
	if err := os.WriteFile(pinPath, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	_, r, err = verify.Run(ctx, w.root, vopts)
	if err != nil {
		t.Fatal(err)
	}
	red := false
	for _, f := range r.Findings {
		if f.Provider == fp.ID() && f.Severity == report.Error && f.Check == check.VersionReused {
			red = true
		}
	}
	if !red {
		t.Fatalf("a pin that is not the artifact's stays green:\n%+v", r.Findings)
	}
	if err := os.WriteFile(pinPath, pinYAML, 0o644); err != nil {
		t.Fatal(err)
	}

	// builder bump moves the pinned release on; vendor --to-oci pushes
	// the new one as pinned, and the registry holds it verified.
	w.host.Publish(fp.Repo, releaseapi.Release{Tag: "v0.15.3", Files: []releaseapi.File{{Name: fp.Asset, Data: append(wantComp, "# v0.15.3\n"...)}, {Name: "metadata.yaml", Data: wantMeta}}})
	m, _ := fetch.ParseMirror(w.host.Mirror())
	if _, err := bump.Bump(ctx, w.chart(fp.ID(), t), bump.Options{To: "v0.15.3", TrustOnFirstUse: true, Tree: w.root, Fetcher: &fetch.Fetcher{Mirrors: []fetch.Mirror{m}}}); err != nil {
		t.Fatalf("bump: %v", err)
	}
	again, err := vendor.Vendor(ctx, w.chart(fp.ID(), t), opts)
	if err != nil || again.Tag != "v0.15.3" || again.Digests[0].From != vendor.FromPin || len(again.Files) != 0 {
		t.Fatalf("push of the bumped release: %v %+v", err, again)
	}
	_, r, err = verify.Run(ctx, w.root, vopts)
	if err != nil {
		t.Fatal(err)
	}
	if s := sourceOf(r, fp.ID()); s == nil || !s.Pinned || s.Ref != repo+":v0.15.3" || !r.Summary.Passed {
		t.Fatalf("after bump: source %+v, summary %+v", s, r.Summary)
	}

	// A push that fails writes nothing.
	down := opts
	down.Provider = "CoreProvider/cluster-api"
	downValues := filepath.Join(t.TempDir(), "down.yaml")
	os.WriteFile(downValues, []byte("registry: http://127.0.0.1:1\n"), 0o644)
	down.Values, down.ToOCI = []string{downValues}, "127.0.0.1:1"
	before = snapshot(t, w.root)
	if _, err := vendor.Vendor(ctx, w.chart(down.Provider, t), down); err == nil || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("push to nowhere: err = %v", err)
	}
	if !mapsEqual(before, snapshot(t, w.root)) {
		t.Fatal("a failed push changed the tree")
	}

	// The upstream cosign verifies the signature and the provenance.
	cosign3 := testpeer.Cosign3(t)
	pub := remotetest.WritePublicKey(t, key)
	if r := testpeer.Run(t, nil, cosign3, "verify", "--key", pub, "--insecure-ignore-tlog", "--allow-http-registry", res.Reference); r.Err != nil {
		t.Fatalf("cosign verify: %v", r.Err)
	}
	if r := testpeer.Run(t, nil, cosign3, "verify-attestation", "--type", "slsaprovenance1", "--key", pub, "--insecure-ignore-tlog", "--allow-http-registry", res.Reference); r.Err != nil {
		t.Fatalf("cosign verify-attestation: %v", r.Err)
	}
}
