package verify

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/sign/signtest"
)

func TestTrust(t *testing.T) {
	rootFile := signtest.NewKeyless(t).TrustedRoot(t)
	rootBytes, err := os.ReadFile(rootFile)
	if err != nil {
		t.Fatal(err)
	}
	writePolicy := func(t *testing.T, body string) *policy.Policy {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "trusted_root.json"), rootBytes, 0o644); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "broken.json"), []byte("{"), 0o644)
		p := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(p, []byte("apiVersion: pinseal/v1\nkind: Policy\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		pol, err := policy.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return pol
	}
	id := "identities:\n- issuer: " + signtest.GitHubIssuer + "\n  subject: " + signtest.GitHubIdentity + "\n"
	t.Setenv("TUF_ROOT", t.TempDir()) // no cached public-good root

	tr, err := Trust(writePolicy(t, id+"trustedRoot: trusted_root.json\ntlog: off\n"), nil)
	if err != nil || tr.Root == nil || !strings.HasSuffix(tr.RootSource, "trusted_root.json") || tr.TLog != sign.TLogOff ||
		len(tr.Identities) != 1 || tr.Identities[0].Subject != signtest.GitHubIdentity || tr.Empty() {
		t.Fatalf("Trust = %+v, %v", tr, err)
	}
	if tr, err := Trust(writePolicy(t, ""), nil); err != nil || !tr.Empty() || tr.Root != nil || tr.TLog != sign.TLogOptional {
		t.Fatalf("Trust of an empty policy = %+v, %v", tr, err)
	}
	if _, err := Trust(writePolicy(t, id), nil); err == nil || !strings.Contains(err.Error(), "set trustedRoot") {
		t.Fatalf("identities without a trusted root: %v", err)
	}
	if _, err := Trust(writePolicy(t, id+"trustedRoot: broken.json\n"), nil); err == nil || !strings.Contains(err.Error(), "broken.json") {
		t.Fatalf("broken trusted root: %v", err)
	}

	// The public-good root cosign caches is the default, when it is there.
	tuf := t.TempDir()
	cached := filepath.Join(tuf, "tuf-repo-cdn.sigstore.dev", "targets", "trusted_root.json")
	os.MkdirAll(filepath.Dir(cached), 0o755)
	if err := os.WriteFile(cached, rootBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TUF_ROOT", tuf)
	if tr, err := Trust(writePolicy(t, id), nil); err != nil || tr.RootSource != cached {
		t.Fatalf("Trust with a cached public-good root = %+v, %v", tr, err)
	}
}

// TestTrustedBy: a policy that trusts nobody is ErrNoTrustedKeys while
// the signature or provenance check is on, and fine once both are off or
// a key is given.
func TestTrustedBy(t *testing.T) {
	if _, err := TrustedBy(nil, nil); !errors.Is(err, ErrNoTrustedKeys) {
		t.Errorf("default policy, no key: %v", err)
	}
	key := remotetest.Key(t).Public()
	if tr, err := TrustedBy(nil, []*sign.PublicKey{key}); err != nil || len(tr.Keys) != 1 {
		t.Errorf("default policy, one key = %+v, %v", tr, err)
	}
	for _, off := range []string{"signature", "provenance"} {
		doc := "apiVersion: pinseal/v1\nkind: Policy\nchecks:\n  " + off + ": off\n"
		pol, err := policy.Parse([]byte(doc), "one-off.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := TrustedBy(pol, nil); !errors.Is(err, ErrNoTrustedKeys) {
			t.Errorf("%s off, the other on, no key: %v", off, err)
		}
	}
	both, err := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nchecks:\n  signature: off\n  provenance: off\n"), "off.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := TrustedBy(both, nil); err != nil || !tr.Empty() {
		t.Errorf("both off, no key = %+v, %v", tr, err)
	}
}

// TestRefKeyless: `verifier verify` of an artifact signed and attested
// keylessly (virtual Sigstore bundles attached as referrers) passes under
// a policy naming the identity and its trusted root, and gives the
// signature and provenance findings wrong-identity under a policy naming
// another subject.
func TestRefKeyless(t *testing.T) {
	ctx := context.Background()
	ks := signtest.NewKeyless(t)
	rootFile := ks.TrustedRoot(t)
	pfx := remotetest.Layout(t)
	pub := remotetest.Publish(t, remotetest.CopyExamples(t), pfx, remotetest.Steps{})
	core := pub["v1.10.1-core"]
	stmtSig, _ := json.Marshal(map[string]any{
		"_type": sign.StatementType, "predicateType": sign.SignPredicateType, "predicate": map[string]any{},
		"subject": []map[string]any{{"digest": map[string]string{"sha256": core.Digest.Encoded()}}},
	})
	stmtProv, err := sign.ProvenanceStatement(core.Repo.Name(), core.Digest, core.Release)
	if err != nil {
		t.Fatal(err)
	}
	for stmt, pt := range map[string]string{string(stmtSig): sign.SignPredicateType, string(stmtProv): sign.PredicateSLSAProvenance} {
		b := ks.Bundle(t, signtest.GitHubIdentity, signtest.GitHubIssuer, []byte(stmt), signtest.Opts{Timestamp: true, TLogAt: time.Now()})
		if _, err := sign.AttachBundle(ctx, core.Repo, core.Digest, b, pt); err != nil {
			t.Fatal(err)
		}
	}
	pol := func(subject string) *policy.Policy {
		doc := "apiVersion: pinseal/v1\nkind: Policy\nidentities:\n- issuer: " + signtest.GitHubIssuer + "\n  subject: " + subject +
			"\ntrustedRoot: " + rootFile + "\nbuilders:\n- https://github.com/pinseal/pinseal/cmd/builder\n"
		p, err := policy.Parse([]byte(doc), filepath.Join(t.TempDir(), "policy.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	r, _, err := Ref(ctx, core.Ref(), RefOptions{Policy: pol(signtest.GitHubIdentity)})
	if err != nil || !r.Summary.Passed {
		t.Fatalf("keyless under its identity: %v\n%+v", err, r)
	}
	r, _, err = Ref(ctx, core.Ref(), RefOptions{Policy: pol("https://github.com/acme/other/.github/workflows/release.yml@refs/heads/main")})
	if err != nil || r.Summary.Passed {
		t.Fatalf("keyless under another subject passed: %v", err)
	}
	got := map[string]bool{}
	for _, f := range r.Findings {
		if strings.Contains(f.Message, "wrong-identity") && strings.Contains(f.Message, "Sigstore bundle v0.3") {
			got[f.Check] = true
		}
	}
	if !got["signature"] || !got["provenance"] {
		t.Fatalf("want signature and provenance wrong-identity findings naming the form, got %+v", r.Findings)
	}
}
