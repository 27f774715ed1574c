package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pinseal/pinseal/internal/app/admission"
)

// gitReview is the AdmissionReview of a CREATE of the core release's
// components ConfigMap as the example chart renders it, with components
// (gzip) and metadata.
func gitReview(t *testing.T, uid string, gz []byte, meta string) []byte {
	t.Helper()
	cm := corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "v1.10.1-core", Namespace: "capi",
			Labels:      map[string]string{admission.IdentityLabel: "core-cluster-api", "core-components": "cozy"},
			Annotations: map[string]string{admission.CompressedAnnotation: "true"}},
		Data:       map[string]string{admission.MetadataKey: meta},
		BinaryData: map[string][]byte{admission.ComponentsKey: gz},
	}
	raw, _ := json.Marshal(cm)
	body, _ := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID(uid), Kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Operation: admissionv1.Create,
			Namespace: "capi", Name: cm.Name, Object: runtime.RawExtension{Raw: raw}},
	})
	return body
}

func gzipOf(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func mustInflate(t *testing.T, gz []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// copyTree copies the directory from into to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAdmitGitSource runs the git voucher for real: a git repository
// (git CLI, file://) holding the example core package, its ConfigMap
// labelled, fetched by the service at the commit the policy trusts,
// rendered by the engine's sandbox, and decided on /admit over the
// admission listener's TLS.
func TestAdmitGitSource(t *testing.T) {
	repo, git, _ := newGitRepo(t)
	core := filepath.Join(repo, "core")
	copyTree(t, filepath.Join("..", "..", "..", "..", "examples", "packages", "capi-providers-core"), core)
	tmpl := filepath.Join(core, "templates", "configmaps.yaml")
	b, err := os.ReadFile(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	labelled := strings.Replace(string(b), "    core-components: cozy\n", "    core-components: cozy\n    "+admission.IdentityLabel+": core-cluster-api\n", 1)
	if labelled == string(b) {
		t.Fatal("the example ConfigMap template changed: label it another way")
	}
	os.WriteFile(tmpl, []byte(labelled), 0o644)
	git("add", "-A")
	git("commit", "-q", "-m", "core")
	trusted := git("rev-parse", "HEAD")
	gz, _ := os.ReadFile(filepath.Join(core, "files", "components.gz"))
	meta, _ := os.ReadFile(filepath.Join(core, "files", "metadata.yaml"))
	// The head moves on: the same release with other metadata, not
	// trusted (yet).
	changedMeta := string(meta) + "# changed after review\n"
	os.WriteFile(filepath.Join(core, "files", "metadata.yaml"), []byte(changedMeta), 0o644)
	git("add", "-A")
	git("commit", "-q", "-m", "core: metadata")
	head := git("rev-parse", "HEAD")

	cfg := testConfig(t)
	cfg.Sources = append(cfg.Sources,
		SourceConfig{Name: "fleet", Git: &GitConfig{URL: "file://" + repo, Ref: "main", Depth: 5}},
		SourceConfig{Name: "gone", Git: &GitConfig{URL: "file://" + filepath.Join(repo, "missing"), Ref: "main"}})
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	trust := func(source, commit string) {
		t.Helper()
		text := fmt.Sprintf("apiVersion: pinseal/v1\nkind: Policy\nadmission:\n  gitSources:\n  - source: %s\n    commits: [%s]\n", source, commit)
		if err := os.WriteFile(pol, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		// A new modification time, so the policy is read again however
		// coarse the file system's clock.
		next := time.Now().Add(time.Duration(len(source)+int(commit[0])) * time.Second)
		os.Chtimes(pol, next, next)
	}
	trust("fleet", trusted)
	cfg.Admission = &AdmissionConfig{Mode: "enforce", Policy: pol, Listen: "127.0.0.1:0"}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	engine := NewVerifyEngine(cfg, false, nil)
	t.Cleanup(engine.Sandbox.Close)
	ts := startServer(t, cfg, engine)

	// post decides body; a tree still being fetched when the webhook's
	// time runs out is unverified, and read once the fetch ends: the test
	// asks again (as the API server's next write would) until it is read.
	post := func(body []byte) *admissionv1.AdmissionResponse {
		t.Helper()
		for deadline := time.Now().Add(admitGitFetchTimeout + time.Minute); ; {
			r, resp, out := ts.postAdmit(t, "?timeout=30s", body)
			if r == nil {
				t.Fatalf("/admit: %d %s", resp.StatusCode, out)
			}
			if r.Allowed || !strings.Contains(r.Result.Message, "still being fetched") || time.Now().After(deadline) {
				return r
			}
		}
	}
	refused := func(what string, r *admissionv1.AdmissionResponse, want ...string) {
		t.Helper()
		if r.Allowed {
			t.Fatalf("%s: admitted", what)
		}
		for _, w := range want {
			if !strings.Contains(r.Result.Message, w) {
				t.Fatalf("%s: message %q, want %q", what, r.Result.Message, w)
			}
		}
	}

	if r := post(gitReview(t, "clean", gz, string(meta))); !r.Allowed {
		t.Fatalf("the release the trusted commit renders: refused: %s", r.Result.Message)
	}
	refused("components differ from the tree", post(gitReview(t, "tampered", gzipOf(t, string(mustInflate(t, gz))+"# tampered\n"), string(meta))),
		"rule content", "git source fleet at "+trusted[:12], "core/templates/configmaps.yaml", "components sha256:")
	refused("what an untrusted commit renders", post(gitReview(t, "head", gz, changedMeta)),
		"rule content", "git source fleet at "+trusted[:12], "metadata sha256:")

	// Trusting the head (the policy is read again) admits what it renders
	// and refuses what it no longer does.
	trust("fleet", head)
	if r := post(gitReview(t, "head", gz, changedMeta)); !r.Allowed {
		t.Fatalf("the release the newly trusted commit renders: refused: %s", r.Result.Message)
	}
	refused("the old commit's release once it is no longer trusted", post(gitReview(t, "clean", gz, string(meta))),
		"rule content", "git source fleet at "+head[:12])

	// A git source that cannot be fetched: unverified, with the reason.
	trust("gone", trusted)
	refused("a git source that cannot be fetched", post(gitReview(t, "clean", gz, string(meta))),
		"rule unverified", "could not read git source gone at "+trusted[:12], "missing")
}
