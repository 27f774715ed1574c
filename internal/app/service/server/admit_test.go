package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pinseal/pinseal/internal/app/admission"
	"github.com/pinseal/pinseal/pkg/policy"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

const (
	admitComponents = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n"
	admitMetadata   = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\n"
	admitRef        = "127.0.0.1:5000/capi/core-cluster-api:v1.10.1-core"
)

// admitEngine is a fakeEngine that also looks releases up: admitRef is
// signed; block makes a lookup wait for its context.
type admitEngine struct {
	fakeEngine
	lookups atomic.Int32
	block   bool
}

func hexSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func (e *admitEngine) LookupRelease(ctx context.Context, ref string, _ *policy.Policy) (admission.Release, error) {
	e.lookups.Add(1)
	if e.block {
		<-ctx.Done()
		return admission.Release{}, ctx.Err()
	}
	if ref != admitRef {
		return admission.Release{Ref: ref, Problem: "no such release in the registry", Fix: "push it"}, nil
	}
	return admission.Release{Ref: ref, Digest: "sha256:abcd", Kind: "CoreProvider", Name: "cluster-api",
		Components: hexSum(admitComponents), Metadata: hexSum(admitMetadata)}, nil
}

func admitConfig(t *testing.T, mode string) *Config {
	cfg := testConfig(t)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(pol, []byte("apiVersion: pinseal/v1\nkind: Policy\nadmission:\n  registries: [127.0.0.1:5000/capi]\n"), 0o600)
	cfg.Admission = &AdmissionConfig{Mode: mode, Policy: pol, Listen: "127.0.0.1:0", MaxRequestBytes: 64 << 10}
	return cfg
}

func admitConfigMap(t *testing.T, name, comps string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(comps))
	w.Close()
	cm := corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "capi",
			Labels:      map[string]string{admission.IdentityLabel: "core-cluster-api"},
			Annotations: map[string]string{admission.CompressedAnnotation: "true"}},
		Data:       map[string]string{admission.MetadataKey: admitMetadata},
		BinaryData: map[string][]byte{admission.ComponentsKey: b.Bytes()},
	}
	raw, _ := json.Marshal(cm)
	rv := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("uid-" + name), Kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Operation: admissionv1.Create,
			Namespace: "capi", Name: name, Object: runtime.RawExtension{Raw: raw}},
	}
	body, _ := json.Marshal(rv)
	return body
}

// admitClient is a client of ts's admission listener (TLS; the test
// trusts any certificate, TestAdmitTLS checks the caBundle), or of the
// main listener when admission is off.
func (ts *testServer) admitClient(t *testing.T) *client {
	addr, _ := ts.admitAddr.Load().(string)
	if addr == "" {
		return ts.client
	}
	c := newClient(t, "https://"+addr, "")
	c.HTTP = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	return c
}

// postAdmit posts an AdmissionReview where the API server would: the
// admission listener.
func (ts *testServer) postAdmit(t *testing.T, query string, body []byte) (*admissionv1.AdmissionResponse, *http.Response, []byte) {
	t.Helper()
	return ts.admitClient(t).postAdmit(t, query, body)
}

func (c *client) postAdmit(t *testing.T, query string, body []byte) (*admissionv1.AdmissionResponse, *http.Response, []byte) {
	t.Helper()
	resp, out := c.Do(http.MethodPost, "/admit"+query, "application/json", bytes.NewReader(body))
	if resp.StatusCode != http.StatusOK {
		return nil, resp, out
	}
	var rv admissionv1.AdmissionReview
	if err := json.Unmarshal(out, &rv); err != nil || rv.Response == nil {
		t.Fatalf("answer %s: %v", out, err)
	}
	return rv.Response, resp, out
}

func TestAdmitModes(t *testing.T) {
	for _, tt := range []struct {
		mode            string
		tamperedAllowed bool
		warnings        int
		outcome         string
	}{
		{"enforce", false, 0, "refused"},
		{"warn", true, 1, "warned"},
		{"audit", true, 0, "audited"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			eng := &admitEngine{}
			ts := startServer(t, admitConfig(t, tt.mode), eng)
			r, _, _ := ts.postAdmit(t, "", admitConfigMap(t, "v1.10.1-core", admitComponents))
			if !r.Allowed || r.UID != "uid-v1.10.1-core" || len(r.Warnings) != 0 {
				t.Fatalf("signed release: %+v", r)
			}
			r, _, _ = ts.postAdmit(t, "", admitConfigMap(t, "v1.10.1-core", admitComponents+"# tampered\n"))
			if r.Allowed != tt.tamperedAllowed || len(r.Warnings) != tt.warnings {
				t.Fatalf("tampered: %+v", r)
			}
			if !tt.tamperedAllowed && !strings.Contains(r.Result.Message, "ConfigMap capi/v1.10.1-core: rule content") {
				t.Errorf("message %q", r.Result.Message)
			}
			if tt.warnings > 0 && !strings.Contains(r.Warnings[0], "rule content") {
				t.Errorf("warning %q", r.Warnings[0])
			}
			_, metrics := ts.Get("/metrics")
			for _, want := range []string{
				`pinseal_admission_decisions_total{cached="false",mode="` + tt.mode + `",outcome="` + tt.outcome + `"} 1`,
				`pinseal_admission_problems_total{mode="` + tt.mode + `",rule="content"} 1`,
			} {
				if !strings.Contains(string(metrics), want) {
					t.Errorf("metrics lack %s", want)
				}
			}
		})
	}
}

func TestAdmitCache(t *testing.T) {
	eng := &admitEngine{}
	ts := startServer(t, admitConfig(t, "enforce"), eng)
	body := admitConfigMap(t, "v1.10.1-core", admitComponents)
	for range 3 {
		if r, _, _ := ts.postAdmit(t, "", body); !r.Allowed {
			t.Fatalf("%+v", r)
		}
	}
	if n := eng.lookups.Load(); n != 1 {
		t.Errorf("%d lookups for 3 requests of the same content, want 1", n)
	}
	_, metrics := ts.Get("/metrics")
	if !strings.Contains(string(metrics), `pinseal_admission_decisions_total{cached="true",mode="enforce",outcome="allowed"} 2`) {
		t.Errorf("cached decisions not counted:\n%s", metrics)
	}
}

func TestAdmitTimeout(t *testing.T) {
	eng := &admitEngine{block: true}
	ts := startServer(t, admitConfig(t, "enforce"), eng)
	start := time.Now()
	r, _, _ := ts.postAdmit(t, "?timeout=2s", admitConfigMap(t, "v1.10.1-core", admitComponents))
	if took := time.Since(start); timebound.Over(took, 2*time.Second) {
		t.Errorf("a 2s webhook decided in %s", took)
	}
	if r.Allowed || !strings.Contains(r.Result.Message, "rule unverified") {
		t.Fatalf("%+v", r)
	}
	// Not cached: the next request looks again.
	ts.postAdmit(t, "?timeout=1s", admitConfigMap(t, "v1.10.1-core", admitComponents))
	if n := eng.lookups.Load(); n != 2 {
		t.Errorf("lookups %d, want 2 (an unverified verdict is not cached)", n)
	}
}

func TestAdmitTimeoutParameter(t *testing.T) {
	for q, want := range map[string]time.Duration{"": 10*time.Second - admitMargin, "?timeout=5s": 5*time.Second - admitMargin,
		"?timeout=90s": 30*time.Second - admitMargin, "?timeout=junk": 10*time.Second - admitMargin} {
		r, _ := http.NewRequest(http.MethodPost, "/admit"+q, nil)
		if got := admitTimeout(r); got != want {
			t.Errorf("%q: %s, want %s", q, got, want)
		}
	}
}

func TestAdmitBadRequests(t *testing.T) {
	ts := startServer(t, admitConfig(t, "enforce"), &admitEngine{})
	if _, resp, body := ts.postAdmit(t, "", []byte(`{"kind":"AdmissionReview"}`)); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("no request: %d %s", resp.StatusCode, body)
	}
	big := admitConfigMap(t, "v1.10.1-core", admitComponents)
	big = append(big[:len(big)-1], []byte(`,"pad":"`+strings.Repeat("x", 128<<10)+`"}`)...)
	if _, resp, body := ts.postAdmit(t, "", big); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("over maxRequestBytes: %d %s", resp.StatusCode, body)
	}
	// Only the TLS listener serves the webhook, and nothing else of the
	// API: it takes no token.
	if _, resp, body := ts.client.postAdmit(t, "", admitConfigMap(t, "v1.10.1-core", admitComponents)); resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "admission.listen") {
		t.Errorf("POST /admit on the main listener: %d %s, want 404 naming admission.listen", resp.StatusCode, body)
	}
	ac := ts.admitClient(t).withToken(testToken)
	for _, p := range []string{"/metrics", "/v1/scans", "/"} {
		if resp, body := ac.Do(http.MethodGet, p, "", nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s on the admission listener: %d %s, want 404", p, resp.StatusCode, body)
		}
	}
	if resp, body := ac.Do(http.MethodGet, "/healthz", "", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz on the admission listener: %d %s", resp.StatusCode, body)
	}
	off := startServer(t, testConfig(t), &fakeEngine{})
	if _, resp, _ := off.postAdmit(t, "", admitConfigMap(t, "v1", admitComponents)); resp.StatusCode != http.StatusNotFound {
		t.Errorf("admission not configured: %d", resp.StatusCode)
	}
}

// TestAdmitTLS: the webhook listener serves a self-signed certificate
// that its own tls.crt verifies (the caBundle), and renews it.
func TestAdmitTLS(t *testing.T) {
	cfg := admitConfig(t, "enforce")
	ts := startServer(t, cfg, &admitEngine{})
	addr, _ := ts.admitAddr.Load().(string)
	if addr == "" {
		t.Fatal("no admission listener")
	}
	ca, err := os.ReadFile(filepath.Join(cfg.DataDir, "admission-tls", "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 30 * time.Second}
	resp, err := hc.Post("https://"+addr+"/admit", "application/json", bytes.NewReader(admitConfigMap(t, "v1.10.1-core", admitComponents)))
	if err != nil {
		t.Fatalf("TLS with the caBundle: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}

	// Renewal: a certificate inside renewBefore of its end is replaced.
	ss := &SelfSignedTLS{Dir: t.TempDir(), Hosts: []string{"127.0.0.1", "verifier.pinseal.svc"}, Validity: Duration(48 * time.Hour), RenewBefore: Duration(24 * time.Hour)}
	now := time.Now()
	src, err := newCertSource(AdmissionTLS{SelfSigned: ss}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	first, _ := src.current()
	if again, _ := src.current(); again != first {
		t.Error("a valid certificate was replaced")
	}
	now = now.Add(25 * time.Hour)
	if renewed, _ := src.current(); renewed == first {
		t.Error("a certificate inside renewBefore was not renewed")
	}
	leaf, _ := x509.ParseCertificate(first.Certificate[0])
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != "verifier.pinseal.svc" || len(leaf.IPAddresses) != 1 {
		t.Errorf("hosts %v %v", leaf.DNSNames, leaf.IPAddresses)
	}
}

func TestAdmissionConfigValidate(t *testing.T) {
	for name, tt := range map[string]struct {
		mutate func(c *Config)
		want   string
	}{
		"bad mode":         {func(c *Config) { c.Admission.Mode = "block" }, "admission.mode"},
		"no policy":        {func(c *Config) { c.Admission.Policy = "" }, "admission.policy: required"},
		"cert without key": {func(c *Config) { c.Admission.TLS.CertFile = "/x.crt" }, "certFile and keyFile together"},
		"registry outside the allowlist": {func(c *Config) { c.Registries = []string{"registry.example"} },
			"not within the config's registries"},
		"git source not configured": {func(c *Config) {
			os.WriteFile(c.Admission.Policy, []byte("apiVersion: pinseal/v1\nkind: Policy\nadmission:\n  gitSources: [{source: tree, commits: ["+strings.Repeat("a", 40)+"]}]\n"), 0o600)
		}, `admission.gitSources names "tree", which is no source with git:`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := admitConfig(t, "")
			tt.mutate(cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	if err := admitConfig(t, "").Validate(); err != nil {
		t.Fatalf("clean config: %v", err)
	}
}
