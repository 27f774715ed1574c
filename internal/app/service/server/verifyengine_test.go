package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/verify"
)

// trustingPolicy is a parsed policy whose keys: list key's public key.
func trustingPolicy(t *testing.T, key *sign.PrivateKey) *policy.Policy {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: pinseal/v1\nkind: Policy\nkeys:\n- "+remotetest.WritePublicKey(t, key)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

func TestServeEngine(t *testing.T) {
	ctx := context.Background()
	eng := VerifyEngine{Registry: remotetest.Options}
	rep, err := eng.CheckTree(ctx, "../../../../examples", CheckOptions{})
	if err != nil || rep == nil || rep.Summary.Packages == 0 || !rep.Summary.Passed {
		t.Fatalf("CheckTree(examples) = %+v, %v", rep, err)
	}

	// The registry side: the example releases pushed, signed and attested
	// into an in-process registry, verified through the service's engine
	// with a policy that trusts the key.
	tree := remotetest.CopyExamples(t)
	prefix := remotetest.Registry(t)
	key := remotetest.Key(t)
	rels := remotetest.Publish(t, tree, prefix, remotetest.Both(key))
	pol := trustingPolicy(t, key)
	if _, err := eng.CheckTree(ctx, tree, CheckOptions{Registry: prefix.String()}); !errors.Is(configHint(err, ""), ErrNotConfigured) || !strings.Contains(configHint(err, "").Error(), "config's policy") {
		t.Fatalf("registry checks with no trusted key: %v, want ErrNotConfigured naming the config's policy", err)
	}
	rep, err = eng.CheckTree(ctx, tree, CheckOptions{Registry: prefix.String(), Policy: pol})
	if err != nil || !rep.Summary.Passed {
		t.Fatalf("CheckTree with registry = %+v, %v", rep, err)
	}
	for _, r := range rels {
		dgst, err := eng.Resolve(ctx, r.Ref())
		if err != nil || dgst != r.Digest.String() {
			t.Fatalf("Resolve(%s) = %q, %v; want %s", r.Ref(), dgst, err, r.Digest)
		}
		rep, err := eng.VerifyArtifact(ctx, r.Pinned(), VerifyOptions{Policy: pol})
		if err != nil || !rep.Summary.Passed {
			t.Fatalf("VerifyArtifact(%s) = %+v, %v", r.Pinned(), rep, err)
		}
		// Without the key in the policy the signature check must fail.
		if _, err := eng.VerifyArtifact(ctx, r.Pinned(), VerifyOptions{}); !errors.Is(configHint(err, ""), ErrNotConfigured) || !strings.Contains(configHint(err, "").Error(), "default policy") {
			t.Fatalf("VerifyArtifact with no trusted key: %v, want ErrNotConfigured (503) naming the default policy", err)
		}
	}
}

// TestWarnUntrusted: registry verification under a policy that trusts no
// key is said once at start-up; a policy with a key, or no registry at all,
// says nothing.
func TestWarnUntrusted(t *testing.T) {
	key := remotetest.Key(t)
	trusted := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(trusted, []byte("apiVersion: pinseal/v1\nkind: Policy\nkeys:\n- "+remotetest.WritePublicKey(t, key)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"no registry", Config{}, nil},
		{"registries, default policy", Config{Registries: []string{"127.0.0.1:5000"}}, []string{"POST /v1/verify of registry refs will not verify", "built-in default policy"}},
		{"registries, trusted policy", Config{Registries: []string{"127.0.0.1:5000"}, Policy: trusted}, nil},
		{"source registry, default policy", Config{Sources: []SourceConfig{{Name: "prod", Registry: "127.0.0.1:5000/capi"}}}, []string{"registry checks of source prod will not verify"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf strings.Builder
			s := &Server{cfg: &tc.cfg, log: slog.New(slog.NewTextHandler(&buf, nil)), policy: &policyWatch{path: tc.cfg.Policy}, srcPolicy: map[string]*policyWatch{}}
			for _, src := range tc.cfg.Sources {
				s.srcPolicy[src.Name] = &policyWatch{path: src.Policy}
			}
			s.warnUntrusted()
			if len(tc.want) == 0 && buf.Len() > 0 {
				t.Fatalf("unexpected warning: %s", buf.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("log %q lacks %q", buf.String(), w)
				}
			}
		})
	}
}

// TestServeEngineFetchConfigOCI: in a scheduled scan with a registry, a
// provider installing from spec.fetchConfig.oci is checked against its
// artifact when the config's registries allow it, and is a finding,
// with nothing fetched, when they do not.
func TestServeEngineFetchConfigOCI(t *testing.T) {
	ctx := context.Background()
	tree := remotetest.CopyExamples(t)
	prefix := remotetest.Registry(t)
	key := remotetest.Key(t)
	rels := remotetest.Publish(t, tree, prefix, remotetest.Both(key))
	pol := trustingPolicy(t, key)
	// A second core provider object that installs the pushed core release
	// by OCI, in a package of its own.
	core := rels["v1.10.1-core"]
	dir := filepath.Join(tree, "oci-core")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "provider.yaml"), []byte(`apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: CoreProvider
metadata:
  name: cluster-api
  namespace: capi-oci
spec:
  version: v1.10.1-core
  fetchConfig:
    oci: http://`+core.Repo.Name()+`
`), 0o644)

	allowed := VerifyEngine{Registry: remotetest.Options, Allow: []string{prefix.Host + "/" + prefix.Path}}
	rep, err := allowed.CheckTree(ctx, tree, CheckOptions{Registry: prefix.String(), Policy: pol})
	if err != nil || !rep.Summary.Passed {
		t.Fatalf("allowed: %+v, %v", rep, err)
	}
	found := false
	for _, p := range rep.Packages {
		if p.Path == "oci-core" && len(p.Providers) == 1 && p.Providers[0].Artifact == core.Pinned() {
			found = true
		}
	}
	if !found {
		t.Fatalf("the OCI provider was not checked against %s: %+v", core.Pinned(), rep.Packages)
	}

	other := VerifyEngine{Registry: remotetest.Options, Allow: []string{"registry.invalid"}}
	// The --registry prefix's own repositories are still read; the OCI
	// source names the same host, so only an allowlist without it refuses
	// it: use a prefix on another host.
	rep, err = other.CheckTree(ctx, tree, CheckOptions{Registry: "registry.invalid/capi", Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, f := range rep.Findings {
		if f.Package == "oci-core" && f.Check == "registry-digest" && strings.Contains(f.Message, "is not allowed") {
			refused = true
			// The hint names the service's settings, not the CLI's flags.
			if want := "(the config's registries, verifier serve --plain-http)"; !strings.HasSuffix(f.Hint, want) || strings.Contains(f.Hint, "--allow-registry") {
				t.Errorf("hint %q does not end in %q", f.Hint, want)
			}
		}
	}
	if !refused {
		t.Fatalf("a registry outside the allowlist was not refused: %+v", rep.Findings)
	}
}

// TestPolicyParsedOnce: the service hands the engine the policy it parsed
// at start-up, scan after scan and request after request, and a new one
// once the file changed or after ReloadPolicy.
func TestPolicyParsedOnce(t *testing.T) {
	cfg := testConfig(t)
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: pinseal/v1\nkind: Policy\nchecks: {pin-missing: warning}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Policy = file
	cfg.Sources[0].Policy = file
	var mu sync.Mutex
	var seen []*policy.Policy
	eng := &fakeEngine{check: func(_ context.Context, root string, opts CheckOptions) (*report.Report, error) {
		mu.Lock()
		seen = append(seen, opts.Policy)
		mu.Unlock()
		return treeReport(root)
	}}
	ts := startServer(t, cfg, eng)
	scanOnce := func() *policy.Policy {
		t.Helper()
		resp, body := ts.PostJSON("/v1/scans", map[string]string{"source": "tree"})
		wantStatus(t, "POST /v1/scans", resp, body, http.StatusAccepted)
		var sc store.Scan
		json.Unmarshal(body, &sc)
		ts.waitScan(sc.ID)
		mu.Lock()
		defer mu.Unlock()
		return seen[len(seen)-1]
	}
	first := scanOnce()
	if first == nil || first.Source != file || first.Severity("pin-missing") != report.Warning {
		t.Fatalf("the engine got policy %+v, want the parsed %s", first, file)
	}
	if again := scanOnce(); again != first {
		t.Fatal("the policy was parsed again for a second scan of an unchanged file")
	}
	os.WriteFile(file, []byte("apiVersion: pinseal/v1\nkind: Policy\nchecks: {pin-missing: off}\n"), 0o600)
	os.Chtimes(file, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	changed := scanOnce()
	if changed == first || changed.Severity("pin-missing") != report.Off {
		t.Fatal("a changed policy file was not read again")
	}
	if err := ts.ReloadPolicy(); err != nil {
		t.Fatal(err)
	}
	if reloaded := scanOnce(); reloaded == changed {
		t.Fatal("ReloadPolicy did not parse the policy again")
	}
}

// TestBrokenPolicyAtStartUp: a policy that does not parse is a start-up
// error naming the file, not an error of every request.
func TestBrokenPolicyAtStartUp(t *testing.T) {
	for _, where := range []string{"config", "source"} {
		t.Run(where, func(t *testing.T) {
			cfg := testConfig(t)
			file := filepath.Join(t.TempDir(), "broken.yaml")
			os.WriteFile(file, []byte("apiVersion: pinseal/v1\nkind: Policy\nchecks: [\n"), 0o600)
			if where == "config" {
				cfg.Policy = file
			} else {
				cfg.Sources[0].Policy = file
			}
			_, err := New(context.Background(), cfg, &fakeEngine{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err == nil || !strings.Contains(err.Error(), file) {
				t.Fatalf("New with a broken %s policy: %v, want an error naming %s", where, err, file)
			}
		})
	}
}

// TestConfigHint: the server names its config where the CLI names flags.
func TestConfigHint(t *testing.T) {
	refused := fmt.Errorf("resolve: %w", &artifact.HostRefusedError{Registry: "r.example", Host: "auth.example", Reason: "not allowed", NotAllowed: true})
	if err := configHint(refused, ""); !errors.Is(err, artifact.ErrHostNotAllowed) || !strings.Contains(err.Error(), "config's registries") || strings.Contains(err.Error(), "--") {
		t.Fatalf("host not allowed: %v", err)
	}
	other := fmt.Errorf("resolve: %w", &artifact.HostRefusedError{Registry: "r.example", Host: "auth.example", Reason: "POST"})
	if err := configHint(other, ""); err != other {
		t.Fatalf("a refusal that allowing cannot fix got a hint: %v", err)
	}
	if err := configHint(verify.ErrNoTrustedKeys, "/etc/p.yaml"); !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), "policy /etc/p.yaml trusts no key") || strings.Contains(err.Error(), "--") {
		t.Fatalf("no trusted keys: %v", err)
	}
}

// TestSettingNames: the service names every setting a hint may name but
// the inflate limit, which it does not let anyone change.
func TestSettingNames(t *testing.T) {
	for _, s := range report.Settings {
		if _, ok := settingNames[s]; ok == (s == report.SettingInflateLimit) {
			t.Errorf("setting %s: named %q", s, settingNames[s])
		}
	}
}
