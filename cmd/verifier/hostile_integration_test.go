//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

// hostServer is an HTTP server on 127.0.0.1 that records every request.
type hostServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "METHOD PATH auth=AUTHORIZATION"
}

func newHostServer(t *testing.T, h http.HandlerFunc) *hostServer {
	s := &hostServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path+" auth="+r.Header.Get("Authorization"))
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *hostServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func (s *hostServer) host() string { return strings.TrimPrefix(s.URL, "http://") }

// peakRSS is the process's peak resident set size (VmHWM) in bytes.
func (p *serveProcess) peakRSS(t *testing.T) int64 { return p.memStatus(t, "VmHWM") }

// verify POSTs {"ref": ref} and returns the status, the cache header and
// the body.
func (p *serveProcess) verify(t *testing.T, token, ref string) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.base+"/v1/verify", strings.NewReader(`{"ref":"`+ref+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 90 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("POST /v1/verify %s: %v", ref, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Pinseal-Cache"), body
}

// verdict POSTs ref, wants 200 and returns the report.
func (p *serveProcess) verdict(t *testing.T, token, ref string) (*report.Report, string) {
	t.Helper()
	code, cache, body := p.verify(t, token, ref)
	var rep report.Report
	if code != http.StatusOK || json.Unmarshal(body, &rep) != nil {
		t.Fatalf("POST /v1/verify %s: %d %s", ref, code, body)
	}
	return &rep, cache
}

// finding returns the first finding of check in rep, or fails.
func finding(t *testing.T, rep *report.Report, check, want string) report.Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Check == check && strings.Contains(f.Message+"\n"+f.Detail, want) {
			return f
		}
	}
	b, _ := json.MarshalIndent(rep.Findings, "", " ")
	t.Fatalf("no %s finding mentioning %q in %s", check, want, b)
	return report.Finding{}
}

// TestIntegrationServeHostileRegistry runs hostile-registry attacks (a moved
// tag, a release copied into another provider's repository, an auth realm
// and redirects that lead elsewhere, an oversized signature image) against
// one real `verifier serve` process, with releases
// pushed and signed by the real `builder push --key` into Debian's
// docker-registry, moved and copied with the oras CLI, and stand-in
// registries on 127.0.0.1. After each attack the same process still
// verifies the clean release (200, passed), and its peak RSS stays low.
func TestIntegrationServeHostileRegistry(t *testing.T) {
	orasBin := testpeer.Oras(t)
	reg := testpeer.StartRegistry(t)
	verifierBin, builderBin := verifierBinary(t), buildBinary(t, "builder")
	work := t.TempDir()
	const token = "hostile-token-0123456789abcdef"

	// Outside the allowlist: must never see a request.
	outside := newHostServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"token":"stolen","AccessKeyId":"AKIA-metadata"}`)
	})
	// An allowed token service on another host: must never see credentials.
	tokens := newHostServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"token":"good-token"}`)
	})
	// The stand-in registry: one repository per trick.
	standIn := newHostServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v2/realm/"):
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/latest/meta-data",service="registry"`, outside.URL))
			w.WriteHeader(http.StatusUnauthorized)
		case strings.HasPrefix(r.URL.Path, "/v2/redirect/"):
			http.Redirect(w, r, outside.URL+"/latest/meta-data/iam/security-credentials/", http.StatusTemporaryRedirect)
		case strings.HasPrefix(r.URL.Path, "/v2/body/"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"errors":[{"code":"UNKNOWN","message":"SECRET-UPSTREAM-BODY from the registry"}]}`)
		case strings.HasPrefix(r.URL.Path, "/v2/token/") && r.Header.Get("Authorization") != "Bearer good-token":
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="registry",scope="repository:token/x:pull"`, tokens.URL))
			w.WriteHeader(http.StatusUnauthorized)
		default:
			http.NotFound(w, r)
		}
	})

	// Registry credentials for the stand-in in a docker config.
	dockerCfg := filepath.Join(work, "docker")
	os.MkdirAll(dockerCfg, 0o700)
	auth := base64.StdEncoding.EncodeToString([]byte("ci:REGISTRY-PASSWORD"))
	os.WriteFile(filepath.Join(dockerCfg, "config.json"), []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q},%q:{"auth":%q}}}`, standIn.host(), auth, tokens.host(), auth)), 0o600)
	env := []string{"DOCKER_CONFIG=" + dockerCfg, "COSIGN_PASSWORD=pw"}
	run := func(bin string, args ...string) testpeer.Result {
		t.Helper()
		r := testpeer.Run(t, env, bin, args...)
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		return r
	}
	exitCode := func(r testpeer.Result) int {
		var ee *exec.ExitError
		if errors.As(r.Err, &ee) {
			return ee.ExitCode()
		}
		if r.Err != nil {
			return -1
		}
		return 0
	}

	// Keys, and the example releases pushed signed and attested.
	run(builderBin, "keygen", "--output-key-prefix", filepath.Join(work, "release"))
	run(builderBin, "keygen", "--output-key-prefix", filepath.Join(work, "other"))
	tree := remotetest.CopyExamples(t)
	pkgs := []string{filepath.Join(tree, "capi-providers-core"), filepath.Join(tree, "capi-providers-infraprovider")}
	prefix := reg.Host + "/capi"
	run(builderBin, append([]string{"push", "--to", prefix, "--key", filepath.Join(work, "release.key"), "--plain-http"}, pkgs...)...)
	core := prefix + "/core-cluster-api"
	clean := core + ":v1.10.1-core"

	// The service: the policy names the key file.
	os.MkdirAll(filepath.Join(work, "keys"), 0o700)
	pubKey := filepath.Join(work, "keys", "release.pub")
	releasePub, _ := os.ReadFile(filepath.Join(work, "release.pub"))
	os.WriteFile(pubKey, releasePub, 0o644)
	os.WriteFile(filepath.Join(work, "policy.yaml"), []byte("apiVersion: pinseal/v1\nkind: Policy\nkeys:\n- keys/release.pub\n"), 0o644)
	os.WriteFile(filepath.Join(work, "tokens"), []byte(token+"\n"), 0o600)
	cfg := filepath.Join(work, "serve.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`listen: 127.0.0.1:0
dataDir: data
tokensFile: tokens
policy: policy.yaml
registries: [%s, %s, %s]
limits:
  requestTimeout: 60s
`, prefix, standIn.host(), tokens.host())), 0o600)
	srv := startServeProcess(t, cfg, serveProcOptions{args: []string{"--plain-http"}, env: []string{"DOCKER_CONFIG=" + dockerCfg}, bareEnv: true})

	// A clean upload: the example tree as a .tar.gz.
	upload := tarGzDir(t, tree)
	stillServes := func(t *testing.T) {
		t.Helper()
		rep, _ := srv.verdict(t, token, clean)
		if !rep.Summary.Passed {
			b, _ := json.Marshal(rep.Findings)
			t.Fatalf("the clean release %s no longer passes: %s", clean, b)
		}
		req, _ := http.NewRequest(http.MethodPost, srv.base+"/v1/verify", bytes.NewReader(upload))
		req.Header.Set("Content-Type", "application/gzip")
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("clean upload: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var up report.Report
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &up) != nil || !up.Summary.Passed || up.Summary.Packages != 2 {
			t.Fatalf("clean upload of the example tree: %d %s", resp.StatusCode, body)
		}
		// Answered 200 at all means within limits.requestTimeout; how fast a
		// busy machine verifies is not the promise.
		t.Logf("clean upload answered in %s", time.Since(start).Round(time.Millisecond))
	}
	stillServes(t)

	t.Run("moved tag", func(t *testing.T) {
		// Anyone who can push a tag moves v9.9.9-other onto the signed
		// v1.10.1-core: no key needed.
		run(orasBin, "tag", "--plain-http", clean, "v9.9.9-other")
		moved := core + ":v9.9.9-other"
		rep, _ := srv.verdict(t, token, moved)
		if rep.Summary.Passed {
			t.Fatalf("the service passes the moved tag %s", moved)
		}
		finding(t, rep, "version-reused", `release "v1.10.1-core" in the registry, "v9.9.9-other"`)
		r := testpeer.Run(t, env, verifierBin, "verify", moved, "--key", pubKey, "--plain-http")
		if exitCode(r) != 1 || !strings.Contains(r.Stdout, "version-reused") || !strings.Contains(r.Stdout, `"v9.9.9-other"`) {
			t.Fatalf("verifier verify %s: exit %d\n%s%s", moved, exitCode(r), r.Stdout, r.Stderr)
		}
		stillServes(t)
	})

	t.Run("copied into another provider's repository", func(t *testing.T) {
		into := prefix + "/infrastructure-proxmox"
		// With its signature and attestation: builder push writes them as
		// Sigstore bundles attached as referrers, which `oras cp -r` copies.
		run(orasBin, "cp", "-r", "--from-plain-http", "--to-plain-http", core+":v1.10.1-core", into+":v1.10.1-core")
		copied := into + ":v1.10.1-core"
		rep, _ := srv.verdict(t, token, copied)
		if rep.Summary.Passed {
			t.Fatalf("the service passes %s, a core release copied into the proxmox repository", copied)
		}
		finding(t, rep, "version-reused", "whose releases belong in repository core-cluster-api")
		r := testpeer.Run(t, env, verifierBin, "verify", copied, "--key", pubKey, "--plain-http")
		if exitCode(r) != 1 || !strings.Contains(r.Stdout, "belong in repository core-cluster-api") {
			t.Fatalf("verifier verify %s: exit %d\n%s%s", copied, exitCode(r), r.Stdout, r.Stderr)
		}
		stillServes(t)
	})

	t.Run("realm and redirects lead elsewhere", func(t *testing.T) {
		for _, tt := range []struct {
			repo string
			want []string
		}{
			{"realm/x", []string{"refused to contact " + outside.host(), "not an allowed registry host"}},
			{"redirect/x", []string{"refused to contact " + outside.host(), "not an allowed registry host"}},
			{"body/x", []string{standIn.host() + "/v2/body/x/manifests/v1", "response status code 500"}},
		} {
			ref := standIn.host() + "/" + tt.repo + ":v1"
			code, _, body := srv.verify(t, token, ref)
			if code != http.StatusBadGateway {
				t.Fatalf("%s: %d %s, want 502", ref, code, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(body), w) {
					t.Errorf("%s: answer %s lacks %q", ref, body, w)
				}
			}
			if strings.Contains(string(body), "SECRET-UPSTREAM-BODY") {
				t.Errorf("%s: the registry's error body is relayed: %s", ref, body)
			}
			// The CLI: only the ref's host unless told otherwise.
			r := testpeer.Run(t, env, verifierBin, "verify", ref, "--key", pubKey, "--plain-http")
			if exitCode(r) != 2 || !strings.Contains(r.Stderr, tt.want[0]) || strings.Contains(r.Stderr, "SECRET-UPSTREAM-BODY") {
				t.Errorf("verifier verify %s: exit %d\n%s", ref, exitCode(r), r.Stderr)
			}
		}
		// A token service on another allowed host is asked, without the
		// registry's credentials.
		code, _, body := srv.verify(t, token, standIn.host()+"/token/x:v1")
		if code != http.StatusBadGateway || !strings.Contains(string(body), "not found") {
			t.Fatalf("token/x: %d %s, want 502 (not found after a token)", code, body)
		}
		if got := outside.requests(); len(got) != 0 {
			t.Fatalf("the host outside the allowlist was contacted: %v", got)
		}
		asked := tokens.requests()
		if len(asked) == 0 {
			t.Fatal("the allowed token service was never asked (the test proves nothing)")
		}
		for _, r := range asked {
			if !strings.HasSuffix(r, "auth=") {
				t.Fatalf("credentials went to the token host: %s", r)
			}
		}
		sawToken := false
		for _, r := range standIn.requests() {
			sawToken = sawToken || strings.HasSuffix(r, "auth=Bearer good-token")
		}
		if !sawToken {
			t.Fatalf("the stand-in never got the token: %v", standIn.requests())
		}
		stillServes(t)
	})

	t.Run("60-layer signature image", func(t *testing.T) {
		// The signed core release copied to a repository of its own whose
		// .sig tag is then replaced: 60 layers naming one 16 MiB blob.
		big := prefix + "/big/core-cluster-api"
		run(orasBin, "cp", "--from-plain-http", "--to-plain-http", clean, big+":v1.10.1-core")
		dgst := strings.TrimSpace(run(orasBin, "resolve", "--plain-http", clean).Stdout)
		repo, err := artifact.OpenRegistry(big, remotetest.Options)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		blob := bytes.Repeat([]byte("s"), 16<<20)
		bd := content.NewDescriptorFromBytes("application/vnd.dev.cosign.simplesigning.v1+json", blob)
		bd.Annotations = map[string]string{"dev.cosignproject.cosign/signature": "AAAA"}
		cfgBytes := []byte("{}")
		cd := content.NewDescriptorFromBytes(ocispec.MediaTypeImageConfig, cfgBytes)
		for _, b := range []struct {
			d ocispec.Descriptor
			b []byte
		}{{bd, blob}, {cd, cfgBytes}} {
			if err := repo.Push(ctx, b.d, bytes.NewReader(b.b)); err != nil {
				t.Fatal(err)
			}
		}
		m := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: cd}
		m.SchemaVersion = 2
		for range 60 {
			m.Layers = append(m.Layers, bd)
		}
		raw, _ := json.Marshal(m)
		md := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, raw)
		if err := repo.Push(ctx, md, bytes.NewReader(raw)); err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, md, sign.SignatureTag(digest.Digest(dgst))); err != nil {
			t.Fatal(err)
		}
		t.Logf("the .sig manifest is %d bytes for 60 × %d MiB", len(raw), len(blob)>>20)

		rep, _ := srv.verdict(t, token, big+":v1.10.1-core")
		if rep.Summary.Passed {
			t.Fatal("passes with a 60-layer signature image")
		}
		finding(t, rep, "signature", "layer bytes 16777216 exceeds the verifier's limit of 1048576")
		peak := srv.peakRSS(t)
		t.Logf("verifier serve peak RSS after the 60-layer signature image: %d MiB", peak>>20)
		if peak > 400<<20 {
			t.Fatalf("peak RSS %d MiB: the signature image was read", peak>>20)
		}
		stillServes(t)
	})

	t.Run("cached verdicts follow keys, signatures and SIGHUP", func(t *testing.T) {
		// Unsigned, then signed: the unsigned verdict is not kept.
		late := prefix + "/late"
		run(builderBin, "push", "--to", late, "--plain-http", pkgs[0])
		lateRef := late + "/core-cluster-api:v1.10.1-core"
		rep, _ := srv.verdict(t, token, lateRef)
		finding(t, rep, "signature", "is not signed")
		run(builderBin, "push", "--to", late, "--key", filepath.Join(work, "release.key"), "--plain-http", pkgs[0])
		if rep, cache := srv.verdict(t, token, lateRef); !rep.Summary.Passed || cache != "miss" {
			t.Fatalf("after signing: passed %v, cache %q", rep.Summary.Passed, cache)
		}

		// The clean verdict is cached...
		if _, cache := srv.verdict(t, token, clean); cache != "hit" {
			t.Fatalf("the clean verdict is not cached (%q)", cache)
		}
		// ...until the key file the policy names is replaced.
		otherPub, _ := os.ReadFile(filepath.Join(work, "other.pub"))
		replace := func(b []byte) {
			tmp := pubKey + ".tmp"
			os.WriteFile(tmp, b, 0o644)
			if err := os.Rename(tmp, pubKey); err != nil {
				t.Fatal(err)
			}
		}
		replace(otherPub)
		rep, cache := srv.verdict(t, token, clean)
		if rep.Summary.Passed || cache != "miss" {
			t.Fatalf("after the key was replaced: passed %v, cache %q", rep.Summary.Passed, cache)
		}
		finding(t, rep, "signature", "none of the trusted keys")
		replace(releasePub)
		stillServes(t)

		// SIGHUP reloads the policy and drops cached verdicts.
		if _, cache := srv.verdict(t, token, clean); cache != "hit" {
			t.Fatalf("not cached again (%q)", cache)
		}
		if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(srv.logText(), "policy reloaded") {
			if time.Now().After(deadline) {
				t.Fatal("no reload logged after SIGHUP")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if rep, cache := srv.verdict(t, token, clean); !rep.Summary.Passed || cache != "miss" {
			t.Fatalf("after SIGHUP: passed %v, cache %q", rep.Summary.Passed, cache)
		}
	})

	peak := srv.peakRSS(t)
	t.Logf("verifier serve peak RSS over every attack: %d MiB", peak>>20)
	if peak > 1<<30 {
		t.Fatalf("peak RSS %d MiB, want under 1 GiB", peak>>20)
	}
}
