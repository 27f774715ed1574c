//go:build integration

package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

const ociYAML = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kamaji-system\n"

const ociMetadata = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries:\n- major: 0\n  minor: 19\n  contract: v1beta1\n"

// ociRelease is the release a fetchConfig.oci provider installs.
func ociRelease(t *testing.T, release string) artifact.Release {
	gz, err := gzipBytes([]byte(ociYAML))
	if err != nil {
		t.Fatal(err)
	}
	return artifact.Release{
		ArtifactConfig: model.ArtifactConfig{
			Kind:     "ControlPlaneProvider",
			Name:     "kamaji",
			Type:     "control-plane",
			Release:  release,
			Version:  "v0.19.0",
			Contract: "v1beta1",
			Pins: []pin.Source{{URL: "https://example.com/kamaji/v0.19.0/control-plane-components.yaml",
				SHA256: strings.Repeat("ab", 32), To: "files/control-plane-components.yaml"}},
			BuilderVersion: remotetest.BuilderVersion,
		},
		Blob:     gz,
		YAML:     []byte(ociYAML),
		Metadata: []byte(ociMetadata),
	}
}

func gzipBytes(b []byte) ([]byte, error) { return blob.CompressBytes(b) }

// ociTree writes a plain manifest package holding one ControlPlaneProvider
// that installs from oci (spec.fetchConfig.oci) and returns the root.
func ociTree(t *testing.T, oci, version string) string {
	root := t.TempDir()
	dir := filepath.Join(root, "capi-providers-cpprovider")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "providers.yaml"), []byte(fmt.Sprintf(`apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: ControlPlaneProvider
metadata:
  name: kamaji
  namespace: cozy-cluster-api
spec:
  version: %s
  fetchConfig:
    oci: %s
`, version, oci)))
	return root
}

// pushTitled pushes rel like artifact.Pack but with the raw YAML layer
// titled yamlTitle, and tags it.
func pushTitled(t *testing.T, repo artifact.Repository, rel artifact.Release, yamlTitle string) remotetest.Release {
	t.Helper()
	ctx := context.Background()
	var layers []ocispec.Descriptor
	for _, l := range []struct {
		title string
		data  []byte
	}{{artifact.BlobTitle, rel.Blob}, {artifact.MetadataTitle, rel.Metadata}, {yamlTitle, rel.YAML}} {
		d := content.NewDescriptorFromBytes("application/octet-stream", l.data)
		d.Annotations = map[string]string{ocispec.AnnotationTitle: l.title}
		if err := repo.Push(ctx, d, strings.NewReader(string(l.data))); err != nil {
			t.Fatal(err)
		}
		layers = append(layers, d)
	}
	cfg := []byte(fmt.Sprintf(`{"kind":%q,"name":%q,"type":%q,"release":%q,"version":%q,"contract":%q,"pins":[{"url":%q,"sha256":%q,"to":%q}],"builderVersion":"x"}`,
		rel.Kind, rel.Name, rel.Type, rel.Release, rel.Version, rel.Contract, rel.Pins[0].URL, rel.Pins[0].SHA256, rel.Pins[0].To))
	cd := content.NewDescriptorFromBytes(artifact.ConfigMediaType, cfg)
	if err := repo.Push(ctx, cd, strings.NewReader(string(cfg))); err != nil {
		t.Fatal(err)
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, artifact.ArtifactType, oras.PackManifestOptions{Layers: layers, ConfigDescriptor: &cd})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, rel.Release); err != nil {
		t.Fatal(err)
	}
	return remotetest.Release{Release: rel, Repo: repo, Digest: desc.Digest}
}

// TestIntegrationFetchConfigOCI: a provider installing from an OCI
// artifact (spec.fetchConfig.oci) is checked against that artifact in a
// real docker-registry: present, signed and attested passes; missing,
// unsigned, not installable by every operator release and a registry
// that was not allowed each give their own finding.
func TestIntegrationFetchConfigOCI(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	reg := testpeer.StartRegistry(t)
	key := remotetest.Key(t)
	prefix, err := artifact.ParsePrefix(reg.Host + "/capi")
	if err != nil {
		t.Fatal(err)
	}
	// No --plain-http: the http:// of fetchConfig.oci says it, as for the operator.
	tls := artifact.Options{Credentials: credentials.NewMemoryStore()}
	// Providers read through a proxy that lists every request, so a test
	// can see that a registry that was not allowed is never contacted.
	proxy := testpeer.NewFaultProxy(t, reg.URL)
	repoName := proxy.Host + "/capi/control-plane-kamaji"

	// v0.19.0-cozystack.0: pushed, signed and attested.
	good := remotetest.Push(t, prefix, ociRelease(t, "v0.19.0-cozystack.0"))
	remotetest.Finish(t, good, remotetest.Both(key))
	// v0.19.0-cozystack.1: attested, not signed.
	unsigned := remotetest.Push(t, prefix, ociRelease(t, "v0.19.0-cozystack.1"))
	remotetest.Finish(t, unsigned, remotetest.Steps{Attest: key})
	// v0.19.0-cozystack.2: signed and attested, but its YAML is titled
	// as pinseal did before: the current operator does not find it.
	legacy := pushTitled(t, unsigned.Repo, ociRelease(t, "v0.19.0-cozystack.2"), "controlplane-components.yaml")
	remotetest.Finish(t, legacy, remotetest.Both(key))

	tests := []struct {
		name, oci, version string
		allow              []string
		check, want        string // "" = green
		also               string // a second check the fault turns red
	}{
		{"present and signed, tag from spec.version", "http://" + repoName, "v0.19.0-cozystack.0", []string{proxy.Host}, "", "", ""},
		{"present and signed, explicit tag", "http://" + repoName + ":v0.19.0-cozystack.0", "v0.19.0-cozystack.0", []string{proxy.Host + "/capi"}, "", "", ""},
		{"missing", "http://" + repoName, "v0.19.0-cozystack.9", []string{proxy.Host}, check.RegistryDigest, "is not in the registry", ""},
		{"unsigned", "http://" + repoName, "v0.19.0-cozystack.1", []string{proxy.Host}, check.Signature, "is not signed", ""},
		{"not installable by the current operator", "http://" + repoName, "v0.19.0-cozystack.2", []string{proxy.Host}, check.OCIInstall, `operator v0.23.0 and later (type "control-plane")`, ""},
		{"registry not allowed", "http://" + repoName, "v0.19.0-cozystack.0", []string{"registry.example.com"}, check.RegistryDigest, "is not allowed", ""},
		{"repository outside the allowed prefix", "http://" + repoName, "v0.19.0-cozystack.0", []string{proxy.Host + "/other"}, check.RegistryDigest, "is not allowed", ""},
		// Offline, oci-source says the tag is not spec.version; the
		// registry shows what the tag holds is another release.
		{"tag other than spec.version", "http://" + repoName + ":v0.19.0-cozystack.0", "v0.19.0-cozystack.5", []string{proxy.Host}, check.OCISource, `fetches tag "v0.19.0-cozystack.0" but installs it as release "v0.19.0-cozystack.5"`, check.VersionReused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := ociTree(t, tc.oci, tc.version)
			reg, err := NewRegistry(nil, RegistryOptions{Registry: tls, Keys: []*sign.PublicKey{key.Public()}, Allow: tc.allow})
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Registry: reg}
			before := len(proxy.Requests())
			_, r, err := Run(context.Background(), root, opts)
			if err != nil {
				t.Fatal(err)
			}
			// The test registry has a port: with no tag, operators before
			// v0.20.0 cannot read the value, a warning of oci-source's.
			var red []string
			warned := 0
			for _, f := range r.Findings {
				if f.Check == check.OCISource && f.Severity == report.Warning && strings.Contains(f.Detail, "rule port-no-tag") {
					warned++
					continue
				}
				if !slices.Contains(red, f.Check) {
					red = append(red, f.Check)
				}
			}
			if noTag := strings.Count(tc.oci, ":") == 2; (warned == 1) != noTag || warned > 1 {
				t.Errorf("%d port-no-tag warnings for %s:\n%s", warned, tc.oci, findings(r))
			}
			if tc.check == "" {
				if len(red) != 0 {
					t.Fatalf("want green, got %s", findings(r))
				}
				if len(proxy.Requests()) == before {
					t.Fatalf("the registry log shows no lookup, so it cannot show that a refused one made none")
				}
				if got, want := r.Packages[0].Providers[0].Artifact, repoName+"@"+good.Digest.String(); got != want {
					t.Fatalf("summary artifact %q, want %s", got, want)
				}
				return
			}
			want := []string{tc.check}
			if tc.also != "" {
				want = append(want, tc.also)
			}
			if !slices.Equal(red, want) {
				t.Fatalf("red checks %v, want %v:\n%s", red, want, findings(r))
			}
			var f report.Finding
			for _, g := range r.Findings {
				if g.Check == tc.check {
					f = g
					break
				}
			}
			if f.Severity != report.Error || f.Provider != "ControlPlaneProvider/kamaji" || !strings.Contains(f.Message+"\n"+f.Detail, tc.want) || f.Hint == "" {
				t.Fatalf("finding %+v, want %q", f, tc.want)
			}
			if tc.want == "is not allowed" && len(proxy.Requests()) != before {
				t.Fatalf("a registry that was not allowed was contacted: %v", proxy.Requests()[before:])
			}
		})
	}
}

// TestIntegrationVerifyRefOldLayout: verifier verify of an artifact whose
// YAML is titled as pinseal titled control-plane YAML before (found only
// by operators before v0.23.0) is red on oci-install alone; the same
// release as builder push writes it now is green.
func TestIntegrationVerifyRefOldLayout(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	reg := testpeer.StartRegistry(t)
	key := remotetest.Key(t)
	prefix, err := artifact.ParsePrefix(reg.Host + "/capi")
	if err != nil {
		t.Fatal(err)
	}
	now := remotetest.Push(t, prefix, ociRelease(t, "v0.19.0-cozystack.0"))
	remotetest.Finish(t, now, remotetest.Both(key))
	old := pushTitled(t, now.Repo, ociRelease(t, "v0.19.0-cozystack.1"), "controlplane-components.yaml")
	remotetest.Finish(t, old, remotetest.Both(key))
	opts := RefOptions{Keys: []*sign.PublicKey{key.Public()}, Registry: remotetest.Options}

	r, _, err := Ref(context.Background(), now.Ref(), opts)
	if err != nil || len(r.Findings) != 0 {
		t.Fatalf("current layout: %v %s", err, findings(r))
	}
	r, _, err = Ref(context.Background(), old.Ref(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 || r.Findings[0].Check != check.OCIInstall || !strings.Contains(r.Findings[0].Message, `type "control-plane"`) {
		t.Fatalf("old layout: %s", findings(r))
	}
}
