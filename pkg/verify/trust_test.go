package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/policy"
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
