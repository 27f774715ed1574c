//go:build integration

package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/pinseal/pinseal/internal/app/admission"
	"github.com/pinseal/pinseal/internal/testkit/kubetest"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
)

var gvrWebhooks = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}

// warnings collects the API server's warnings (what kubectl prints).
type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	w.got = append(w.got, text)
	w.mu.Unlock()
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.got
	w.got = nil
	return out
}

// admitWorld is the real API server with the example tree installed and
// its releases signed in a registry, a namespace the webhook judges, and
// a client that records warnings.
type admitWorld struct {
	*kubetest.World
	dyn    dynamic.Interface
	warns  *warnings
	policy string
	ns     string
	// unsigned holds the tree's releases pushed with no signature.
	unsigned map[string]remotetest.Release
	lastURL  string
	lastCA   []byte
}

func newAdmitWorld(t *testing.T) *admitWorld {
	w := &admitWorld{World: kubetest.NewWorld(t), warns: &warnings{}, ns: "admit"}
	rc := w.Srv.Config()
	rc.WarningHandler = w.warns
	var err error
	if w.dyn, err = dynamic.NewForConfig(rc); err != nil {
		t.Fatal(err)
	}
	kubetest.Namespace(t, w.Dyn, w.ns)
	unsignedPrefix := w.Prefix
	unsignedPrefix.Path = "unsigned"
	w.unsigned = remotetest.Publish(t, w.Root, unsignedPrefix, remotetest.Steps{})
	w.policy = filepath.Join(t.TempDir(), "admission-policy.yaml")
	pol := fmt.Sprintf("apiVersion: pinseal/v1\nkind: Policy\nkeys: [%s]\nadmission:\n  registries: [%s/%s, %s/unsigned]\n",
		remotetest.WritePublicKey(t, w.Key), w.Prefix.Host, w.Prefix.Path, w.Prefix.Host)
	if err := os.WriteFile(w.policy, []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// serve starts `verifier serve`'s server with admission in mode on a
// free 127.0.0.1 port and points the webhook configuration at it (URL,
// its self-signed certificate as caBundle, failurePolicy).
func (w *admitWorld) serve(t *testing.T, mode, failurePolicy string) *testServer {
	port, err := testpeer.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.Registries = []string{w.Prefix.Host}
	cfg.Admission = &AdmissionConfig{Mode: mode, Policy: w.policy, Listen: fmt.Sprintf("127.0.0.1:%d", port)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	engine := NewVerifyEngine(cfg, true, nil)
	t.Cleanup(engine.Sandbox.Close)
	ts := startServer(t, cfg, engine)
	ca, err := os.ReadFile(filepath.Join(cfg.DataDir, "admission-tls", "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	w.register(t, fmt.Sprintf("https://127.0.0.1:%d/admit", port), ca, failurePolicy, mode)
	return ts
}

// register writes the webhook configuration the chart writes, with a URL.
//
// mode is what the probe that waits for it expects: enforce (refused by
// pinseal), or any other (admitted: warn, audit, or the webhook down under
// Ignore; the configuration before it always answers otherwise).
func (w *admitWorld) register(t *testing.T, url string, ca []byte, failurePolicy, mode string) {
	w.lastURL, w.lastCA = url, ca
	hook := func(name string, rules map[string]any, selector map[string]any) map[string]any {
		h := map[string]any{
			"name": name + ".admission.pinseal.dev", "admissionReviewVersions": []any{"v1"}, "sideEffects": "None",
			"failurePolicy": failurePolicy, "timeoutSeconds": int64(10),
			"clientConfig":      map[string]any{"url": url, "caBundle": base64.StdEncoding.EncodeToString(ca)},
			"rules":             []any{rules},
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": w.ns}},
		}
		if selector != nil {
			h["objectSelector"] = selector
		}
		return h
	}
	var kinds []any
	for _, k := range []string{"CoreProvider", "BootstrapProvider", "ControlPlaneProvider", "InfrastructureProvider", "IPAMProvider", "AddonProvider", "RuntimeExtensionProvider"} {
		kinds = append(kinds, kubetest.ProviderGVR(k).Resource)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": "pinseal"},
		"webhooks": []any{
			hook("providers", map[string]any{"apiGroups": []any{admission.Group}, "apiVersions": []any{"v1alpha2"},
				"operations": []any{"CREATE", "UPDATE"}, "resources": kinds}, nil),
			hook("configmaps", map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"},
				"operations": []any{"CREATE", "UPDATE"}, "resources": []any{"configmaps"}},
				map[string]any{"matchExpressions": []any{map[string]any{"key": admission.IdentityLabel, "operator": "Exists"}}}),
		},
	}}
	ctx := context.Background()
	res := w.Dyn.Resource(gvrWebhooks)
	if old, err := res.Get(ctx, "pinseal", metav1.GetOptions{}); err == nil {
		u.SetResourceVersion(old.GetResourceVersion())
		if _, err := res.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	} else if _, err := res.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server picks a new configuration up within a second or so:
	// wait until a probe with its URL's answer comes back.
	probe := 0
	kubetest.WaitFor(t, "the webhook configuration to be in force", func() error {
		probe++
		cm := kubetest.ConfigMapObject(fmt.Sprintf("probe-%d", probe), map[string]string{admission.IdentityLabel: "core-probe"}, nil, nil, []byte("x"), []byte("y"))
		cm.SetNamespace(w.ns)
		_, err := w.dyn.Resource(kubetest.GVRConfigMap).Namespace(w.ns).Create(ctx, cm, metav1.CreateOptions{DryRun: []string{"All"}})
		w.warns.take()
		switch {
		case mode == "enforce" && err != nil && strings.Contains(err.Error(), "pinseal:"):
			return nil
		case mode != "enforce" && err == nil:
			return nil
		}
		return fmt.Errorf("probe: %v", err)
	})
}

// coreConfigMap is the tree's core ConfigMap as Helm writes it, labelled
// for the webhook, in the judged namespace; gz replaces its blob when set.
func (w *admitWorld) coreConfigMap(t *testing.T, name string, yaml []byte) (*unstructured.Unstructured, string) {
	for _, pkg := range w.Tree.Packages {
		for _, p := range pkg.Providers {
			if p.Kind != "CoreProvider" {
				continue
			}
			rel := w.Rels[p.Version]
			if yaml == nil {
				yaml = rel.YAML
			}
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write(yaml)
			zw.Close()
			labels := map[string]string{admission.IdentityLabel: p.Type() + "-" + p.Name, "provider.cluster.x-k8s.io/version": p.Version}
			cm := kubetest.ConfigMapObject(name, labels, map[string]string{admission.CompressedAnnotation: "true"}, b.Bytes(), nil, rel.Metadata)
			cm.SetNamespace(w.ns)
			return cm, p.Version
		}
	}
	t.Fatal("no core provider in the example tree")
	return nil, ""
}

func (w *admitWorld) create(gvr schema.GroupVersionResource, u *unstructured.Unstructured) error {
	_, err := w.dyn.Resource(gvr).Namespace(w.ns).Create(context.Background(), u, metav1.CreateOptions{})
	return err
}

func (w *admitWorld) ociProvider(name, oci, version string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": admission.Group + "/v1alpha2", "kind": "CoreProvider",
		"spec": map[string]any{"version": version, "fetchConfig": map[string]any{"oci": oci}},
	}}
	u.SetName(name)
	u.SetNamespace(w.ns)
	return u
}

func wantRefused(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: admitted, want refused", what)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: the client's error lacks %q:\n%v", what, p, err)
		}
	}
}

// TestIntegrationAdmission: the real kube-apiserver calls `verifier
// serve`'s webhook over TLS on 127.0.0.1 (caBundle: its self-signed
// certificate); the releases are signed in a registry.
func TestIntegrationAdmission(t *testing.T) {
	w := newAdmitWorld(t)
	ts := w.serve(t, "enforce", "Fail")
	cmGVR := kubetest.GVRConfigMap

	signed, version := w.coreConfigMap(t, "", nil)
	signed.SetName(version)
	if err := w.create(cmGVR, signed); err != nil {
		t.Fatalf("the signed release's ConfigMap was refused: %v", err)
	}
	tampered, _ := w.coreConfigMap(t, "", append(w.Rels[version].YAML, []byte("\n# tampered\n")...))
	tampered.SetName(version + "-copy") // another object, same release label
	wantRefused(t, "tampered ConfigMap", w.create(cmGVR, tampered), "ConfigMap admit/"+version+"-copy", "rule content", "fix:")

	cur, err := w.dyn.Resource(cmGVR).Namespace(w.ns).Get(context.Background(), version, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edited, _ := w.coreConfigMap(t, version, append(w.Rels[version].YAML, []byte("\n# edited\n")...))
	edited.SetResourceVersion(cur.GetResourceVersion())
	_, err = w.dyn.Resource(cmGVR).Namespace(w.ns).Update(context.Background(), edited, metav1.UpdateOptions{})
	wantRefused(t, "edit in place", err, "rule in-place-edit")

	repo, name := "", ""
	for _, pkg := range w.Tree.Packages {
		for _, p := range pkg.Providers {
			if p.Kind == "CoreProvider" {
				repo, name = "http://"+w.Rels[p.Version].Repo.Name(), p.Name
			}
		}
	}
	unsignedRepo := "http://" + w.unsigned[version].Repo.Name()
	wantRefused(t, "unsigned OCI tag", w.create(kubetest.ProviderGVR("CoreProvider"), w.ociProvider(name, unsignedRepo, version)),
		"CoreProvider admit/"+name, "rule unsigned", "signature")
	wantRefused(t, "digest reference", w.create(kubetest.ProviderGVR("CoreProvider"),
		w.ociProvider("digest", repo+"@"+w.Rels[version].Digest.String(), version)), "rule oci-source", "digest")
	if err := w.create(kubetest.ProviderGVR("CoreProvider"), w.ociProvider(name, repo, version)); err != nil {
		t.Errorf("the signed OCI release was refused: %v", err)
	}
	ts.stop()

	// warn: admitted, with the reasons as warnings.
	ts = w.serve(t, "warn", "Fail")
	tampered.SetName(version + "-warned")
	w.warns.take()
	if err := w.create(cmGVR, tampered); err != nil {
		t.Fatalf("warn refused: %v", err)
	}
	if ws := strings.Join(w.warns.take(), "\n"); !strings.Contains(ws, "rule content") {
		t.Errorf("warn: warnings %q, want the content rule", ws)
	}
	ts.stop()

	// audit: admitted, counted.
	ts = w.serve(t, "audit", "Fail")
	tampered.SetName(version + "-audited")
	if err := w.create(cmGVR, tampered); err != nil {
		t.Fatalf("audit refused: %v", err)
	}
	_, metrics := ts.Get("/metrics")
	if !strings.Contains(string(metrics), `pinseal_admission_problems_total{mode="audit",rule="content"} 1`) {
		t.Errorf("audit: the decision is not counted:\n%s", metrics)
	}
	ts.stop()

	// The webhook stopped: failurePolicy decides.
	tampered.SetName(version + "-down-fail")
	wantRefused(t, "webhook down, failurePolicy Fail", w.create(cmGVR, tampered), "failed calling webhook")
	w.register(t, w.lastURL, w.lastCA, "Ignore", "ignore")
	tampered.SetName(version + "-down-ignore")
	if err := w.create(cmGVR, tampered); err != nil {
		t.Errorf("webhook down, failurePolicy Ignore: refused: %v", err)
	}
}
