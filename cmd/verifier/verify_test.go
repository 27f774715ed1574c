package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
)

// TestVerifyAndCheckRegistry runs `verifier verify REF` and `verifier
// check ROOT --registry PREFIX` against releases pushed and signed as
// `builder push --key` does (registry: the in-process registry over plain
// HTTP; the docker config is not consulted for 127.0.0.1 without
// credentials).
func TestVerifyAndCheckRegistry(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	key := remotetest.Key(t)
	pub := remotetest.WritePublicKey(t, key)
	other := remotetest.WritePublicKey(t, remotetest.Key(t))
	root := remotetest.CopyExamples(t)
	pfx := remotetest.Registry(t)
	rels := remotetest.Publish(t, root, pfx, remotetest.Both(key))
	core := rels["v1.10.1-core"]

	lay := remotetest.Layout(t)
	lrels := remotetest.Publish(t, root, lay, remotetest.Both(key))
	tampered := lrels["v0.7.7-infraprovider-proxmox"]
	remotetest.Tamper(t, lay, tampered, artifact.BlobTitle)

	withKey := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(withKey, []byte("apiVersion: pinseal/v1\nkind: Policy\nkeys:\n- "+pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badKey := filepath.Join(t.TempDir(), "bad.pub")
	if err := os.WriteFile(badKey, []byte("not a key"), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []cliCase{
		{"verify clean", []string{"verify", core.Ref(), "--key", pub, "--plain-http"}, 0, "PASSED"},
		{"verify by digest, key in the policy", []string{"verify", core.Pinned(), "--policy", withKey, "--plain-http"}, 0, "PASSED"},
		{"verify under another key", []string{"verify", core.Ref(), "--key", other, "--plain-http"}, 1, "none of the trusted keys"},
		{"verify under another key names --key", []string{"verify", core.Ref(), "--key", other, "--plain-http"}, 1, "to the trusted keys (--key, or `keys:` in the --policy file)"},
		{"verify tampered layer", []string{"verify", tampered.Ref(), "--key", pub}, 1, "registry-digest"},
		{"verify json", []string{"verify", "-o", "json", core.Ref(), "--key", pub, "--plain-http"}, 0, `"artifact": "` + core.Pinned() + `"`},
		{"verify without keys", []string{"verify", core.Ref(), "--plain-http"}, 2, "no trusted keys"},
		{"verify without keys says --key", []string{"verify", core.Ref(), "--plain-http"}, 2, "; pass --key cosign.pub"},
		{"verify bad key", []string{"verify", core.Ref(), "--key", badKey, "--plain-http"}, 2, "--key " + badKey},
		{"verify missing tag", []string{"verify", core.Repo.Name() + ":v0.0.0", "--key", pub, "--plain-http"}, 2, "does not exist"},
		{"verify two refs", []string{"verify", core.Ref(), core.Ref()}, 2, "exactly one REF"},
		{"verify bad output", []string{"verify", "-o", "xml", core.Ref(), "--key", pub}, 2, "unknown output format"},
		{"check with registry", []string{"check", root, "--registry", pfx.String(), "--key", pub, "--plain-http"}, 0, "PASSED"},
		{"check with layout", []string{"check", root, "--registry", lay.String(), "--key", pub}, 1, "registry-digest"},
		{"check with registry, untrusted key", []string{"check", root, "--registry", pfx.String(), "--key", other, "--plain-http"}, 1, "signature"},
		{"check key without registry", []string{"check", root, "--key", pub}, 2, "need --registry"},
		{"check bad registry", []string{"check", root, "--registry", "https://x/y", "--key", pub}, 2, "--registry"},
		{"check registry without keys", []string{"check", root, "--registry", pfx.String(), "--plain-http"}, 2, "no trusted keys"},
		{"check registry without keys says --key", []string{"check", root, "--registry", pfx.String(), "--plain-http"}, 2, "; pass --key cosign.pub"},
	}
	runCases(t, tests)

	// The JSON report of verify: Root is the ref, one package.
	out, _, _ := runVerifier(t, "verify", "-o", "json", core.Ref(), "--key", pub, "--plain-http")
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Root != core.Ref() || len(r.Packages) != 1 || r.Packages[0].Path != core.Repo.Name() || !r.Summary.Passed {
		t.Errorf("verify report = %+v", r)
	}
	// SARIF names the registry checks' rules.
	out, _, _ = runVerifier(t, "verify", "-o", "sarif", tampered.Ref(), "--key", pub)
	if !strings.Contains(out, `"ruleId": "registry-digest"`) {
		t.Errorf("sarif lacks the registry-digest result:\n%s", out)
	}
}
