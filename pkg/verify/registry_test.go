package verify

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

	"github.com/pinseal/pinseal/internal/testkit/hinttest"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

var registryIDs = []string{check.RegistryDigest, check.VersionReused, check.Signature, check.Provenance}

// checkRegistry runs `verifier check ROOT --registry PREFIX` as a library
// call, trusting key.
func checkRegistry(t *testing.T, root string, prefix artifact.Prefix, pol *policy.Policy, keys ...*sign.PublicKey) *report.Report {
	t.Helper()
	reg, err := NewRegistry(pol, RegistryOptions{Prefix: prefix, Registry: remotetest.Options, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	_, r, err := Run(context.Background(), root, Options{Policy: pol, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// redRegistryChecks lists the registry checks with findings, and the
// providers they name.
func redRegistryChecks(r *report.Report) (ids, provs []string) {
	for _, f := range r.Findings {
		if slices.Contains(registryIDs, f.Check) && !slices.Contains(ids, f.Check) {
			ids = append(ids, f.Check)
		}
		if slices.Contains(registryIDs, f.Check) && !slices.Contains(provs, f.Provider) {
			provs = append(provs, f.Provider)
		}
	}
	return ids, provs
}

func write(t *testing.T, file string, data []byte) {
	t.Helper()
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRegistryCleanIsGreen(t *testing.T) {
	for name, prefix := range map[string]func(testing.TB) artifact.Prefix{"registry": remotetest.Registry, "layout": remotetest.Layout} {
		t.Run(name, func(t *testing.T) {
			root := remotetest.CopyExamples(t)
			pfx := prefix(t)
			key := remotetest.Key(t)
			pub := remotetest.Publish(t, root, pfx, remotetest.Both(key))
			r := checkRegistry(t, root, pfx, nil, key.Public())
			if !r.Summary.Passed || len(r.Findings) != 0 {
				t.Fatalf("clean tree and registry: %+v", r.Findings)
			}
			n := 0
			for _, p := range r.Packages {
				for _, s := range p.Providers {
					if rel, ok := pub[s.Version]; !ok || s.Artifact != rel.Pinned() {
						t.Errorf("%s/%s: summary artifact %q", s.Kind, s.Name, s.Artifact)
					}
					n++
				}
			}
			if n != 2 {
				t.Fatalf("%d providers", n)
			}
		})
	}
}

// TestRegistryMutationsGoRedAlone: a clean tree published with builder
// push --key is green; one change to the tree or the registry turns
// exactly one registry check red.
func TestRegistryMutationsGoRedAlone(t *testing.T) {
	const (
		coreID  = "CoreProvider/cluster-api"
		infraID = "InfrastructureProvider/proxmox"
		coreRel = "v1.10.1-core"
		infra   = "v0.7.7-infraprovider-proxmox"
	)
	corePkg := func(root string) string { return filepath.Join(root, "capi-providers-core") }
	type env struct {
		root   string
		prefix artifact.Prefix
		key    *sign.PrivateKey
		pol    *policy.Policy
	}
	// publish pushes every release with steps.
	publish := func(t *testing.T, e *env, steps remotetest.Steps) map[string]remotetest.Release {
		return remotetest.Publish(t, e.root, e.prefix, steps)
	}
	tests := []struct {
		name   string
		layout bool
		setup  func(t *testing.T, e *env)
		check  string
		prov   string
		want   string
	}{
		{"local blob regenerated (same YAML, other gzip bytes)", false, func(t *testing.T, e *env) {
			publish(t, e, remotetest.Both(e.key))
			y, _ := os.ReadFile(filepath.Join(corePkg(e.root), "files/core-components.yaml"))
			write(t, filepath.Join(corePkg(e.root), "files/components.gz"), gzipLevel1(t, y))
		}, check.RegistryDigest, coreID, "same release, different blob bytes"},
		{"local blob edited", false, func(t *testing.T, e *env) {
			publish(t, e, remotetest.Both(e.key))
			y, _ := os.ReadFile(filepath.Join(corePkg(e.root), "files/core-components.yaml"))
			b, _ := blob.CompressBytes(append(y, "# edited\n"...))
			write(t, filepath.Join(corePkg(e.root), "files/components.gz"), b)
		}, check.RegistryDigest, coreID, "components.gz sha256"},
		{"local metadata edited", false, func(t *testing.T, e *env) {
			publish(t, e, remotetest.Both(e.key))
			f := filepath.Join(corePkg(e.root), "files/metadata.yaml")
			m, _ := os.ReadFile(f)
			write(t, f, append([]byte("# a comment\n"), m...))
		}, check.RegistryDigest, coreID, "metadata.yaml sha256"},
		{"YAML and blob changed without a version bump", false, func(t *testing.T, e *env) {
			publish(t, e, remotetest.Both(e.key))
			f := filepath.Join(corePkg(e.root), "files/core-components.yaml")
			y, _ := os.ReadFile(f)
			y = append(y, "# patched\n"...)
			write(t, f, y)
			b, _ := blob.CompressBytes(y)
			write(t, filepath.Join(corePkg(e.root), "files/components.gz"), b)
		}, check.VersionReused, coreID, "components YAML"},
		{"another artifact pushed under the tag", false, func(t *testing.T, e *env) {
			pub := publish(t, e, remotetest.Both(e.key))
			rel := pub[infra].Release
			rel.YAML = append(slices.Clone(rel.YAML), "# not the tree's\n"...)
			rel.Blob, _ = blob.CompressBytes(rel.YAML)
			remotetest.Finish(t, remotetest.Overwrite(t, e.prefix, rel), remotetest.Both(e.key))
		}, check.VersionReused, infraID, "differs from the tree's release"},
		{"not pushed", false, func(t *testing.T, e *env) {
			rels, err := artifact.LoadReleases(corePkg(e.root), remotetest.BuilderVersion)
			if err != nil {
				t.Fatal(err)
			}
			remotetest.Finish(t, remotetest.Push(t, e.prefix, rels[0]), remotetest.Both(e.key))
		}, check.RegistryDigest, infraID, "is not in the registry"},
		{"tampered layer", true, func(t *testing.T, e *env) {
			pub := publish(t, e, remotetest.Both(e.key))
			remotetest.Tamper(t, e.prefix, pub[coreRel], artifact.MetadataTitle)
		}, check.RegistryDigest, coreID, "do not match the digests in its manifest"},
		{"unsigned", false, func(t *testing.T, e *env) {
			publish(t, e, remotetest.Steps{Attest: e.key})
		}, check.Signature, "", "is not signed"},
		{"signed with another key", false, func(t *testing.T, e *env) {
			publish(t, e, remotetest.Steps{Sign: remotetest.Key(t), Attest: e.key})
		}, check.Signature, "", "none of the trusted keys"},
		{"signature copied from another digest", false, func(t *testing.T, e *env) {
			pub := publish(t, e, remotetest.Steps{Attest: e.key})
			core := pub[coreRel]
			other := core.Release
			other.Release = "v1.10.1-core-other"
			signed := remotetest.Push(t, e.prefix, other)
			remotetest.Finish(t, signed, remotetest.Steps{Sign: e.key})
			remotetest.Finish(t, pub[infra], remotetest.Steps{Sign: e.key})
			remotetest.CopyTag(t, core.Repo, sign.SignatureTag(signed.Digest), sign.SignatureTag(core.Digest))
		}, check.Signature, coreID, "for another digest"},
		{"no attestation", false, func(t *testing.T, e *env) {
			publish(t, e, remotetest.Steps{Sign: e.key})
		}, check.Provenance, "", "has no provenance attestation"},
		{"attestation with different materials", false, func(t *testing.T, e *env) {
			pub := publish(t, e, remotetest.Steps{Sign: e.key})
			remotetest.Finish(t, pub[coreRel], remotetest.Steps{Attest: e.key})
			r := pub[infra]
			bad := r.Release
			bad.Pins = slices.Clone(bad.Pins)
			bad.Pins[0].SHA256 = strings.Repeat("f", 64)
			remotetest.Attest(t, r, bad, e.key)
		}, check.Provenance, infraID, "other materials than the artifact's pins"},
		{"builder not allowed by the policy", false, func(t *testing.T, e *env) {
			publish(t, e, remotetest.Both(e.key))
			var err error
			e.pol, err = policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nbuilders:\n- https://ci.example.com/builder\n"), "test.yaml")
			if err != nil {
				t.Fatal(err)
			}
		}, check.Provenance, "", "which the policy does not allow"},
		{"attested by another builder", false, func(t *testing.T, e *env) {
			pub := publish(t, e, remotetest.Steps{Sign: e.key})
			r := pub[coreRel]
			stmt, err := sign.ProvenanceStatement(r.Repo.Name(), r.Digest, r.Release)
			if err != nil {
				t.Fatal(err)
			}
			remotetest.AttestStatement(t, r, remotetest.WithBuilder(t, stmt, "https://evil.example/builder"), e.key)
			remotetest.Finish(t, pub[infra], remotetest.Steps{Attest: e.key})
		}, check.Provenance, coreID, `names builder "https://evil.example/builder"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{root: remotetest.CopyExamples(t), key: remotetest.Key(t)}
			if tc.layout {
				e.prefix = remotetest.Layout(t)
			} else {
				e.prefix = remotetest.Registry(t)
			}
			tc.setup(t, e)
			r := checkRegistry(t, e.root, e.prefix, e.pol, e.key.Public())
			ids, provs := redRegistryChecks(r)
			if !slices.Equal(ids, []string{tc.check}) {
				t.Fatalf("red registry checks = %v, want [%s]:\n%s", ids, tc.check, findings(r))
			}
			if tc.prov != "" && !slices.Equal(provs, []string{tc.prov}) {
				t.Errorf("providers = %v, want [%s]", provs, tc.prov)
			}
			for _, f := range r.Findings {
				if f.Check == tc.check && !strings.Contains(f.Message, tc.want) {
					t.Errorf("message %q lacks %q", f.Message, tc.want)
				}
				if flags := hinttest.FindingFlags(f); len(flags) > 0 {
					t.Errorf("%s finding names flags %q of an interface; name the setting (report.Setting) instead: %s", f.Check, flags, f.Hint)
				}
			}
			if r.Summary.Passed || r.ExitCode() != 1 {
				t.Errorf("a red registry check passes the run: %+v", r.Summary)
			}
		})
	}
}

func findings(r *report.Report) string {
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString(f.Check + " " + f.Provider + ": " + f.Message + "\n")
	}
	return b.String()
}

func TestNewRegistryKeys(t *testing.T) {
	pfx := remotetest.Registry(t)
	if _, err := NewRegistry(nil, RegistryOptions{Prefix: pfx}); !errors.Is(err, ErrNoTrustedKeys) {
		t.Fatalf("no keys: %v", err)
	}
	// With signature and provenance off, no key is needed.
	off, err := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nchecks:\n  signature: off\n  provenance: off\n"), "off.yaml")
	if err != nil {
		t.Fatal(err)
	}
	root := remotetest.CopyExamples(t)
	remotetest.Publish(t, root, pfx, remotetest.Steps{})
	r := checkRegistry(t, root, pfx, off)
	if !r.Summary.Passed {
		t.Fatalf("unsigned, checks off: %s", findings(r))
	}

	// Keys from the policy: a file relative to it, and inline PEM.
	k1, k2 := remotetest.Key(t), remotetest.Key(t)
	dir := t.TempDir()
	p1, _ := k1.Public().PEM()
	p2, _ := k2.Public().PEM()
	write(t, filepath.Join(dir, "release.pub"), p1)
	doc := "apiVersion: pinseal/v1\nkind: Policy\nkeys:\n- release.pub\n- |\n" + indent(string(p2)) + "\n"
	write(t, filepath.Join(dir, "policy.yaml"), []byte(doc))
	pol, err := policy.Load(filepath.Join(dir, "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := TrustedKeys(pol, []*sign.PublicKey{k1.Public()})
	if err != nil || len(keys) != 2 || !keys[0].Equal(k1.Public()) || !keys[1].Equal(k2.Public()) || keys[0].Source != "release.pub" {
		t.Fatalf("TrustedKeys = %v, %v", keys, err)
	}
	root = remotetest.CopyExamples(t)
	pfx = remotetest.Registry(t)
	remotetest.Publish(t, root, pfx, remotetest.Both(k2))
	if r := checkRegistry(t, root, pfx, pol); !r.Summary.Passed {
		t.Fatalf("signed by a policy key: %s", findings(r))
	}

	// A key of an unknown type is an error naming it.
	bad := "apiVersion: pinseal/v1\nkind: Policy\nkeys:\n- |\n  -----BEGIN PUBLIC KEY-----\n  MEMwBQYDK2VxAzoAX9dEm1m0Yf0s54fsYWrUah2hNCSFpw4fig6nXYDpZ3jt8SR2\n  m0bHBhvWeD3x5Q9s0foavq/oJWGA\n  -----END PUBLIC KEY-----\n"
	bp, err := policy.Parse([]byte(bad), "bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ke *sign.KeyError
	if _, err := NewRegistry(bp, RegistryOptions{Prefix: pfx}); !errors.As(err, &ke) || ke.Reason != sign.KeyUnknownType || !strings.Contains(err.Error(), "keys[0]") {
		t.Fatalf("Ed448 key: %v", err)
	}
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n")
}

// gzipLevel1 compresses y reproducibly (no name, MTIME 0) but at another
// level than builder build: the same content, other bytes.
func gzipLevel1(t *testing.T, y []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(y)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
