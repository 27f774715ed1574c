//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/opsim"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/verify"
)

// vendored is where each provider of the monorepo fixture keeps its files.
var vendored = map[string]struct{ pkg, yaml, metadata, blob, release string }{
	"CoreProvider/cluster-api":        {fixture.AsItStandsCore, "files/core-components.yaml", "files/metadata.yaml", "files/components.gz", "v1.10.1-core"},
	"BootstrapProvider/kubeadm":       {fixture.AsItStandsBootstrap, "files/bootstrap-components.yaml", "files/metadata.yaml", "files/components.gz", "v1.10.1-bootstrap"},
	"BootstrapProvider/talos":         {fixture.AsItStandsBootstrap, "files/bootstrap-components-talos.yaml", "files/metadata-talos.yaml", "files/components-talos.gz", "v0.6.12-bootstrap-talos"},
	"ControlPlaneProvider/kamaji":     {fixture.AsItStandsCP, "files/control-plane-components.yaml", "files/metadata.yaml", "files/components.gz", "v0.19.0-cozystack.0"},
	"InfrastructureProvider/kubevirt": {fixture.AsItStandsInfra, "files/infrastructure-components.yaml", "files/metadata.yaml", "files/components.gz", "v0.1.9-cozystack.0"},
}

var monorepoPackages = []string{fixture.AsItStandsCore, fixture.AsItStandsBootstrap, fixture.AsItStandsCP, fixture.AsItStandsInfra}

func readRel(t *testing.T, root string, rel ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{root}, rel...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIntegrationMonorepoAsItStands is the end-to-end test of the builder on a
// synthetic monorepo modelled on the real one (no pin.yaml; computed
// Makefile version + Dockerfile ARG; talos-style names; two providers in
// one package; two blobs made by gzip without -n whose content is clean;
// the core's blob differs from its YAML), with Debian's docker-registry:
//
//   - builder push with no pin file pushes every provider whose content is
//     clean (a dirty blob header is a warning, and the artifact carries
//     the reproducible encoding of the YAML) and refuses the drifted core,
//     writing no tag for it;
//   - every pushed artifact is installed by the simulated operator fetch
//     for its kind with the current and the old type name, byte-identical
//     to the vendored YAML and metadata, and `verifier verify` passes on it;
//   - every fix hint the verifier prints works on the package as it stands;
//   - builder build with no pin file makes every blob equal to its YAML
//     (the YAML untouched), and verifier check then passes;
//   - pushed again, nothing changes (the artifacts pushed before the build
//     are byte for byte the tree's after it) and verifier check
//     --registry passes.
func TestIntegrationMonorepoAsItStands(t *testing.T) {
	reg := testpeer.StartRegistry(t)
	t.Setenv("SOURCE_DATE_EPOCH", "")
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ctx := context.Background()
	keys := testKeys(t)
	pub, err := sign.LoadPublicKey(keys + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "monorepo")
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	regOpts := artifact.Options{PlainHTTP: true, Credentials: credentials.NewMemoryStore()}
	prefix := reg.Host + "/capi"

	// The gate sees exactly the planted drift and the dirty headers.
	drifted := checkTree(t, root, verify.Options{})
	if got := slices.Sorted(slices.Values(errorChecks(drifted))); !slices.Equal(got, []string{"blob-header BootstrapProvider/kubeadm", "blob-header InfrastructureProvider/kubevirt", "blob-yaml CoreProvider/cluster-api"}) {
		t.Fatalf("drifted monorepo: error findings %v, want the planted blob-yaml and the two blob-headers", got)
	}

	// Every fix hint is a command that works on the package as it stands.
	runHints(t, root, drifted, verify.Options{})

	// Push as it stands: the drifted core is refused, the rest pushed.
	var dirs []string
	for _, p := range monorepoPackages {
		dirs = append(dirs, filepath.Join(root, p))
	}
	args := append([]string{"push"}, dirs...)
	args = append(args, "--to", prefix, "--plain-http", "--key", keys+".key", "--json")
	stdout, stderr, err := runBuildTestCmd(t, args...)
	if err == nil {
		t.Fatalf("push of the drifted monorepo succeeded:\n%s", stdout)
	}
	var results []pushResult
	if err := json.Unmarshal([]byte(stdout), &results); err != nil {
		t.Fatalf("push --json: %v\n%s\n%s", err, stdout, stderr)
	}
	pushed := map[string]pushResult{}
	for _, r := range results {
		switch {
		case r.Provider == "CoreProvider/cluster-api":
			if len(r.Refused) != 1 || r.Refused[0].Check != check.BlobYAML || r.Reference != "" || !strings.Contains(r.Error, "blob-yaml") {
				t.Fatalf("drifted core: %+v, want refused for blob-yaml", r)
			}
		case r.Error != "" || r.Status != artifact.Pushed:
			t.Fatalf("%s: %+v\n%s", r.Provider, r, stderr)
		case slices.Contains(fixture.AsItStandsDirtyHeader, r.Provider) != (len(r.Warnings) == 1 && r.Warnings[0].Check == check.BlobHeader && r.Reencoded != ""):
			t.Fatalf("%s: warnings %+v, reencoded %q; want a blob-header warning and a re-encoded blob exactly for %v", r.Provider, r.Warnings, r.Reencoded, fixture.AsItStandsDirtyHeader)
		default:
			pushed[r.Provider] = r
		}
	}
	if len(pushed) != 4 {
		t.Fatalf("pushed %d providers, want the 4 clean ones: %+v", len(pushed), results)
	}
	coreRepo, err := artifact.OpenRegistry(prefix+"/core-cluster-api", regOpts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := coreRepo.Resolve(ctx, "v1.10.1-core"); !errors.Is(err, errdef.ErrNotFound) {
		t.Fatalf("the refused core has a tag: %v", err)
	}

	// Each pushed artifact: installed by every operator release, byte for
	// byte the vendored files; verifier verify passes.
	for id, r := range pushed {
		v := vendored[id]
		kind, name, _ := strings.Cut(id, "/")
		if r.Release != v.release {
			t.Errorf("%s pushed as %s, want %s", id, r.Release, v.release)
		}
		repo, err := artifact.OpenRegistry(prefix+"/"+model.RepositoryName(model.ProviderKinds[kind], name), regOpts)
		if err != nil {
			t.Fatal(err)
		}
		yml, md := readRel(t, root, v.pkg, v.yaml), readRel(t, root, v.pkg, v.metadata)
		for _, tn := range operator.Types(kind) {
			comp, meta, err := opsim.Fetch(ctx, repo, v.release, opsim.Provider{Type: tn.Type, Name: name, Version: v.release})
			if err != nil {
				t.Errorf("%s, operator %s (type %q): %v", id, tn.Releases, tn.Type, err)
				continue
			}
			if !bytes.Equal(comp, yml) || !bytes.Equal(meta, md) {
				t.Errorf("%s, operator %s (type %q) installs other bytes than %s and %s", id, tn.Releases, tn.Type, v.yaml, v.metadata)
			}
		}
		// The vendored blob, or, under a dirty header, the blob
		// builder build writes (blob.CompressBytes of the YAML).
		p, err := artifact.Pull(ctx, repo, v.release)
		want := readRel(t, root, v.pkg, v.blob)
		if slices.Contains(fixture.AsItStandsDirtyHeader, id) {
			want, _ = blob.CompressBytes(yml)
		}
		if err != nil || !bytes.Equal(p.Blob, want) {
			t.Errorf("%s: components.gz is not the vendored blob or its reproducible encoding: %v", id, err)
		}
		rep, _, err := verify.Ref(ctx, r.Reference, verify.RefOptions{Keys: []*sign.PublicKey{pub}, Registry: regOpts})
		if err != nil || !rep.Summary.Passed || len(rep.Findings) != 0 {
			t.Errorf("verifier verify %s: %v %+v", r.Reference, err, rep)
		}
	}

	// builder build with no pin file: every blob equals its YAML, the YAML
	// is untouched, nothing is fetched; verifier check passes.
	before := map[string][]byte{}
	for id, v := range vendored {
		before[id] = readRel(t, root, v.pkg, v.yaml)
	}
	out, stderr, err := runBuildTestCmd(t, append([]string{"build", "--offline", "--cache", t.TempDir()}, dirs...)...)
	if err != nil {
		t.Fatalf("build: %v\n%s\n%s", err, out, stderr)
	}
	if n := strings.Count(out, "nothing was fetched"); n != 4 {
		t.Errorf("build output says nothing was fetched %d times, want 4:\n%s", n, out)
	}
	for id, v := range vendored {
		if !bytes.Equal(readRel(t, root, v.pkg, v.yaml), before[id]) {
			t.Errorf("%s: build changed %s", id, v.yaml)
		}
	}
	if !bytes.HasSuffix(before["CoreProvider/cluster-api"], []byte(fixture.AsItStandsDrift)) {
		t.Fatal("the drift is not in the core YAML")
	}
	clean := checkTree(t, root, verify.Options{})
	if got := errorChecks(clean); len(got) != 0 || !clean.Summary.Passed {
		t.Fatalf("after builder build: %v", got)
	}

	// verifier check --registry: only the core's release is missing, and
	// the push its hint gives (run from the tree, with the key as
	// cosign.key there) puts it there.
	checks, err := verify.NewRegistry(nil, verify.RegistryOptions{Prefix: mustPrefix(t, prefix), Registry: regOpts, Keys: []*sign.PublicKey{pub}})
	if err != nil {
		t.Fatal(err)
	}
	opts := verify.Options{Registry: checks}
	missing := checkTree(t, root, opts)
	if got := errorChecks(missing); !slices.Equal(got, []string{"registry-digest CoreProvider/cluster-api"}) {
		t.Fatalf("check --registry before the core is pushed: %v", got)
	}
	if err := os.WriteFile(filepath.Join(root, "cosign.key"), readRel(t, keys+".key"), 0o600); err != nil {
		t.Fatal(err)
	}
	runHints(t, root, missing, opts)
	os.Remove(filepath.Join(root, "cosign.key"))

	// Push again: everything is in place (the core by the hint's push).
	stdout, stderr, err = runBuildTestCmd(t, args...)
	if err != nil || strings.Contains(stdout, `"status": "pushed"`) {
		t.Fatalf("second push: %v\n%s\n%s", err, stdout, stderr)
	}
	withReg := checkTree(t, root, opts)
	if got := errorChecks(withReg); len(got) != 0 || !withReg.Summary.Passed {
		t.Fatalf("verifier check --registry: %v", got)
	}
	n := 0
	for _, p := range withReg.Packages {
		for _, s := range p.Providers {
			if s.Artifact == "" {
				t.Errorf("%s/%s: no artifact in the summary", s.Kind, s.Name)
			}
			n++
		}
	}
	if n != 5 {
		t.Fatalf("%d providers checked against the registry, want 5", n)
	}
}

func mustPrefix(t *testing.T, s string) artifact.Prefix {
	t.Helper()
	p, err := artifact.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
