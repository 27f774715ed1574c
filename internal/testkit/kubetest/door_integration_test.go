//go:build integration

package kubetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/pinseal/pinseal/internal/app/admission"
	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/verify"
)

// The door: the real kube-apiserver calls a real `verifier serve`
// process's admission webhook over TLS while the real cluster-api-operator
// installs what it admitted; the releases are pushed by the real `builder
// push` to Debian's docker-registry over plain HTTP.

// repoRoot is the module root, from this package's directory.
const repoRoot = "../../.."

// doorWorld is one API server, registry, operator and verifier service
// shared by every step of TestRealOperatorDoor.
type doorWorld struct {
	srv         *APIServer
	dyn         dynamic.Interface // admin, recording warnings
	warns       *warnRecorder
	bin         string // directory of the built verifier and builder
	reg         *testpeer.Registry
	keyPub      string
	keyFile     string            // the signing key, password "pw"
	pushed      map[string]string // "<type>-<name>" -> digest of the signed release
	policy      string
	data        string // the service's data directory (its self-signed certificate)
	tokens      string
	admit       string // 127.0.0.1:PORT of the admission listener
	main        string // 127.0.0.1:PORT of the main listener
	serve       *exec.Cmd
	serveLg     *bytes.Buffer
	served      chan struct{}
	operatorLog string
	core        installed
	infra       installed
}

type warnRecorder struct {
	mu  sync.Mutex
	got []string
}

func (w *warnRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	w.got = append(w.got, text)
	w.mu.Unlock()
}

func (w *warnRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.got
	w.got = nil
	return out
}

// buildTools builds cmd/verifier and cmd/builder into one directory.
func buildTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/verifier", "./cmd/builder")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/verifier ./cmd/builder: %v\n%s", err, out)
	}
	return dir
}

// run runs a built tool, for at most timebound.Hang, and returns its
// stdout.
func (d *doorWorld) run(t *testing.T, env []string, tool string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timebound.Hang)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(d.bin, tool), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w\n%s%s", tool, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), err
}

// newDoorWorld builds the tools, signs and pushes both example packages
// (and pushes them unsigned elsewhere), starts the API server with the
// provider CRDs and the namespaces, and the verifier service.
func newDoorWorld(t *testing.T) *doorWorld {
	t.Helper()
	OperatorBinary(t)
	d := &doorWorld{warns: &warnRecorder{}, pushed: map[string]string{}}
	d.reg = testpeer.StartRegistry(t)
	d.srv = Start(t)
	d.bin = buildTools(t)

	keys := filepath.Join(t.TempDir(), "k")
	pw := []string{sign.PasswordEnv + "=pw", "DOCKER_CONFIG=" + t.TempDir(), "SOURCE_DATE_EPOCH="}
	if _, err := d.run(t, pw, "builder", "keygen", "--output-key-prefix", keys); err != nil {
		t.Fatal(err)
	}
	d.keyPub, d.keyFile = keys+".pub", keys+".key"
	pkgs := []string{filepath.Join(repoRoot, "examples", "packages", "capi-providers-core"), filepath.Join(repoRoot, "examples", "packages", "capi-providers-infraprovider")}
	out, err := d.run(t, pw, "builder", append(append([]string{"push"}, pkgs...), "--to", d.reg.Host+"/capi", "--plain-http", "--key", keys+".key")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "pushed" {
			repo, dg, _ := strings.Cut(f[1], "@")
			d.pushed[repo[strings.LastIndex(repo, "/")+1:]] = dg
		}
	}
	if len(d.pushed) != 2 {
		t.Fatalf("builder push: want two releases pushed, got %v:\n%s", d.pushed, out)
	}
	if _, err := d.run(t, pw, "builder", append(append([]string{"push"}, pkgs...), "--to", d.reg.Host+"/unsigned", "--plain-http")...); err != nil {
		t.Fatal(err)
	}

	rc := d.srv.Config()
	rc.WarningHandler = d.warns
	if d.dyn, err = dynamic.NewForConfig(rc); err != nil {
		t.Fatal(err)
	}
	InstallProviderCRDs(t, d.dyn)
	for _, k := range []string{"Certificate", "Issuer"} {
		installTrimmedCRD(t, &World{Dyn: d.dyn}, "cert-manager.io", "v1", k)
	}
	for _, ns := range []string{NS, "admit"} {
		Namespace(t, d.dyn, ns)
	}

	tree, err := verify.Load(context.Background(), filepath.Join(repoRoot, "examples", "packages"), verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range tree.Packages {
		for _, p := range pkg.Providers {
			yamlFile, _ := pkg.Layout.ComponentsYAML(configMapOf(t, pkg, p))
			in := installed{p, readFile(t, filepath.Join(pkg.Dir, yamlFile))}
			if p.Kind == "CoreProvider" {
				d.core = in
			} else {
				d.infra = in
			}
		}
	}
	if d.core.p == nil || d.infra.p == nil {
		t.Fatal("examples/packages: want a CoreProvider and an InfrastructureProvider")
	}

	dir := t.TempDir()
	d.policy = filepath.Join(dir, "admission-policy.yaml")
	pol := fmt.Sprintf("apiVersion: pinseal/v1\nkind: Policy\nkeys: [%s]\nadmission:\n  registries: [%s/capi, %s/unsigned]\n", d.keyPub, d.reg.Host, d.reg.Host)
	writeFile(t, d.policy, pol)
	d.tokens = filepath.Join(dir, "tokens")
	writeFile(t, d.tokens, doorToken+"\n")
	d.data = filepath.Join(dir, "data")
	for _, a := range []*string{&d.admit, &d.main} {
		p, err := testpeer.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		*a = "127.0.0.1:" + strconv.Itoa(p)
	}
	t.Cleanup(func() {
		d.stopServe()
		if t.Failed() {
			t.Logf("verifier serve log (last lines):\n%s", tail(d.serveLog(), 4000))
		}
	})
	return d
}

const doorToken = "door-test-token-0123456789"

func configMapOf(t *testing.T, pkg *model.Package, p *model.Provider) *model.ConfigMap {
	t.Helper()
	for _, c := range pkg.ConfigMaps {
		if c.Name == p.Version {
			return c
		}
	}
	t.Fatalf("%s: no ConfigMap %s", pkg.Path, p.Version)
	return nil
}

// startServe runs `verifier serve` with admission in mode, on the same
// ports and data directory every time (its self-signed certificate is
// kept across restarts), and waits for the webhook's TLS listener.
func (d *doorWorld) startServe(t *testing.T, mode string) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "serve.yaml")
	writeFile(t, cfg, fmt.Sprintf(`listen: %s
dataDir: %s
tokensFile: %s
registries: [%s]
admission:
  mode: %s
  policy: %s
  listen: %s
`, d.main, d.data, d.tokens, d.reg.Host, mode, d.policy, d.admit))
	d.serveLg = &bytes.Buffer{}
	d.serve = exec.Command(filepath.Join(d.bin, "verifier"), "serve", "--config", cfg, "--plain-http")
	d.serve.Stdout, d.serve.Stderr = lockedWriter{d.serveLg}, lockedWriter{d.serveLg}
	if err := d.serve.Start(); err != nil {
		t.Fatal(err)
	}
	d.served = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(d.serve, d.served)
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	waitHang(t, "verifier serve's admission listener", func() error {
		select {
		case <-d.served:
			t.Fatalf("verifier serve exited:\n%s", d.serveLog())
		default:
		}
		resp, err := c.Get("https://" + d.admit + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
}

var serveLogMu sync.Mutex

type lockedWriter struct{ b *bytes.Buffer }

func (w lockedWriter) Write(p []byte) (int, error) {
	serveLogMu.Lock()
	defer serveLogMu.Unlock()
	return w.b.Write(p)
}

func (d *doorWorld) serveLog() string {
	serveLogMu.Lock()
	defer serveLogMu.Unlock()
	if d.serveLg == nil {
		return ""
	}
	return d.serveLg.String()
}

// stopServe stops the service (SIGTERM, then SIGKILL after 10 s).
func (d *doorWorld) stopServe() {
	if d.serve == nil {
		return
	}
	d.serve.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.served:
	case <-time.After(10 * time.Second):
		d.serve.Process.Kill()
		<-d.served
	}
	d.serve = nil
}

var gvrWebhooks = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}

// register writes the chart's three webhooks (provider kinds, labelled
// ConfigMaps, the operator's store), judging namespaces NS and admit,
// pointing at the service's TLS listener with its certificate as
// caBundle, and waits until a probe gets the answer expect wants:
// "refused" (pinseal's refusal), "admitted", or "down" (the API server's
// failure to call it).
func (d *doorWorld) register(t *testing.T, failurePolicy, expect string) {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(d.data, "admission-tls", "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	hook := func(name string, rules, selector map[string]any) map[string]any {
		return map[string]any{
			"name": name + ".admission.pinseal.dev", "admissionReviewVersions": []any{"v1"}, "sideEffects": "None",
			"failurePolicy": failurePolicy, "timeoutSeconds": int64(10),
			"clientConfig": map[string]any{"url": "https://" + d.admit + "/admit", "caBundle": base64.StdEncoding.EncodeToString(ca)},
			"rules":        []any{rules},
			"namespaceSelector": map[string]any{"matchExpressions": []any{map[string]any{
				"key": "kubernetes.io/metadata.name", "operator": "In", "values": []any{NS, "admit"}}}},
			"objectSelector": selector,
		}
	}
	var kinds []any
	for _, k := range ProviderKinds {
		kinds = append(kinds, ProviderGVR(k).Resource)
	}
	cms := map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE", "UPDATE"}, "resources": []any{"configmaps"}}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": "pinseal"},
		"webhooks": []any{
			hook("providers", map[string]any{"apiGroups": []any{admission.Group}, "apiVersions": []any{"v1alpha2"},
				"operations": []any{"CREATE", "UPDATE"}, "resources": kinds}, map[string]any{}),
			hook("configmaps", cms, map[string]any{"matchExpressions": []any{map[string]any{"key": admission.IdentityLabel, "operator": "Exists"}}}),
			hook("operator-store", cms, map[string]any{"matchLabels": map[string]any{operator.LabelManaged: "true"}}),
		},
	}}
	ctx := context.Background()
	res := d.dyn.Resource(gvrWebhooks)
	if old, err := res.Get(ctx, "pinseal", metav1.GetOptions{}); err == nil {
		u.SetResourceVersion(old.GetResourceVersion())
		_, err = res.Update(ctx, u, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	} else if _, err := res.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d.probe(t, expect)
}

// probe waits until a dry-run labelled ConfigMap gets the answer expect.
func (d *doorWorld) probe(t *testing.T, expect string) {
	t.Helper()
	n := 0
	waitHang(t, "the webhook to answer "+expect, func() error {
		n++
		cm := ConfigMapObject(fmt.Sprintf("probe-%d", n), map[string]string{admission.IdentityLabel: "core-probe"}, nil, nil, []byte("x"), []byte("y"))
		cm.SetNamespace("admit")
		_, err := d.dyn.Resource(GVRConfigMap).Namespace("admit").Create(context.Background(), cm, metav1.CreateOptions{DryRun: []string{"All"}})
		d.warns.take()
		switch {
		case expect == "refused" && err != nil && strings.Contains(err.Error(), "pinseal:"):
			return nil
		case expect == "down" && err != nil && strings.Contains(err.Error(), "failed calling webhook"):
			return nil
		case expect == "admitted" && err == nil:
			return nil
		}
		return fmt.Errorf("probe: %v", err)
	})
}

// coreConfigMap is the core release's ConfigMap as Helm writes it from
// the example chart, with the identity and version labels the webhook
// needs, in ns; components replaces the release's YAML when set.
func (d *doorWorld) coreConfigMap(name, ns string, components []byte) *unstructured.Unstructured {
	p := d.core.p
	if components == nil {
		components = d.core.yaml
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(components)
	zw.Close()
	labels := map[string]string{admission.IdentityLabel: p.Type() + "-" + p.Name, operator.LabelVersion: p.Version}
	for k, v := range p.Selector.MatchLabels {
		labels[k] = v
	}
	meta, _ := os.ReadFile(filepath.Join(repoRoot, "examples", "packages", "capi-providers-core", "files", "metadata.yaml"))
	cm := ConfigMapObject(name, labels, map[string]string{admission.CompressedAnnotation: "true"}, b.Bytes(), nil, meta)
	cm.SetNamespace(ns)
	return cm
}

func (d *doorWorld) provider(kind, name, ns, version string, fetch map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": model.OperatorAPIVersion, "kind": kind,
		"spec": map[string]any{"version": version, "fetchConfig": fetch},
	}}
	u.SetName(name)
	u.SetNamespace(ns)
	return u
}

func (d *doorWorld) create(gvr schema.GroupVersionResource, u *unstructured.Unstructured) error {
	_, err := d.dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{FieldManager: "helm"})
	return err
}

func refused(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: admitted, want refused", what)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: the refusal lacks %q:\n%v", what, p, err)
		}
	}
}

// ociOf is the fetchConfig.oci of a pushed release under path.
func (d *doorWorld) ociOf(path string, p *model.Provider) string {
	return "http://" + d.reg.Host + "/" + path + "/" + p.Type() + "-" + p.Name
}

// absent fails the test when any CRD or Deployment of in's components,
// or the operator's store of it, is in the cluster.
func (d *doorWorld) absent(t *testing.T, in installed, why string) {
	t.Helper()
	ctx := context.Background()
	for _, u := range docs(t, in.yaml) {
		var err error
		switch u.GetKind() {
		case "CustomResourceDefinition":
			_, err = d.dyn.Resource(CRDGVR).Get(ctx, u.GetName(), metav1.GetOptions{})
		case "Deployment":
			_, err = d.dyn.Resource(GVRDeployment).Namespace(NS).Get(ctx, u.GetName(), metav1.GetOptions{})
		default:
			continue
		}
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s: %s %s is in the cluster (%v)", why, u.GetKind(), u.GetName(), err)
		}
	}
	store := in.p.Type() + "-" + in.p.Name + "-" + in.p.Version
	if _, err := d.dyn.Resource(GVRConfigMap).Namespace(NS).Get(ctx, store, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("%s: the operator stored ConfigMap %s (%v)", why, store, err)
	}
}

func docs(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 1<<20)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("components: %v", err)
		}
		if u.Object != nil {
			out = append(out, u)
		}
	}
}

func (d *doorWorld) installed(p *model.Provider, ns string) error {
	return providerInstalled(&World{Dyn: d.dyn}, &model.Provider{Kind: p.Kind, Name: p.Name, Namespace: ns})
}

// TestRealOperatorDoor: the cluster's door with everything real. A
// `verifier serve` process's webhook (enforce, failurePolicy Fail) admits
// the signed core release's ConfigMap and its provider, and the real
// operator installs it; it refuses a tampered ConfigMap, an edit in place,
// an unsigned OCI tag and a digest reference, and the operator installs
// nothing from them; it admits the signed OCI release of the
// infrastructure provider, which the operator installs from the registry
// `builder push` wrote, and what the operator applied is the components
// after the operator's own customisation. warn and audit admit and say
// so; a stopped webhook gives failurePolicy's answer. Then `verifier
// cluster` on the world the operator left is clean, and each planted
// state turns exactly its check red; last, the operator rules pinseal
// models are shown by the real operator.
func TestRealOperatorDoor(t *testing.T) {
	start := time.Now()
	d := newDoorWorld(t)
	ctx := context.Background()
	t.Logf("setup (build, keygen, push, API server): %s", time.Since(start).Round(time.Second))

	d.startServe(t, "enforce")
	d.register(t, "Fail", "refused")
	d.operatorLog = d.srv.StartOperator(t)
	core, infra := d.core.p, d.infra.p
	cms := d.dyn.Resource(GVRConfigMap).Namespace(NS)

	// The signed core release: admitted and installed.
	if err := d.create(GVRConfigMap, d.coreConfigMap(core.Version, NS, nil)); err != nil {
		t.Fatalf("the signed core release's ConfigMap was refused: %v", err)
	}
	sel := toAny(d.coreConfigMap("", NS, nil).GetLabels())
	delete(sel, operator.LabelVersion) // the operator picks by the selector and the name
	if err := d.create(ProviderGVR(core.Kind), d.provider(core.Kind, core.Name, NS, core.Version,
		map[string]any{"selector": map[string]any{"matchLabels": sel}})); err != nil {
		t.Fatalf("the CoreProvider selecting the signed release was refused: %v", err)
	}
	waitLong(t, "CoreProvider ProviderInstalled=True", func() error { return d.installed(core, NS) })
	playControllerManager(t, &World{Dyn: d.dyn}, d.core)

	t.Run("refused", func(t *testing.T) {
		tampered := d.coreConfigMap(core.Version+"-copy", NS, append(append([]byte(nil), d.core.yaml...), "\n# tampered\n"...))
		refused(t, "tampered ConfigMap", d.create(GVRConfigMap, tampered), "ConfigMap "+NS+"/"+core.Version+"-copy", "rule content", "fix:")
		if _, err := cms.Get(ctx, core.Version+"-copy", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the tampered ConfigMap is in the cluster: %v", err)
		}

		cur, err := cms.Get(ctx, core.Version, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		edited := d.coreConfigMap(core.Version, NS, append(append([]byte(nil), d.core.yaml...), "\n# edited\n"...))
		edited.SetResourceVersion(cur.GetResourceVersion())
		_, err = cms.Update(ctx, edited, metav1.UpdateOptions{})
		refused(t, "edit in place", err, "rule in-place-edit")
		if now, _ := cms.Get(ctx, core.Version, metav1.GetOptions{}); now == nil || now.GetResourceVersion() != cur.GetResourceVersion() {
			t.Errorf("the edit in place reached the cluster")
		}

		gvr := ProviderGVR(infra.Kind)
		refused(t, "unsigned OCI tag", d.create(gvr, d.provider(infra.Kind, infra.Name, NS, infra.Version,
			map[string]any{"oci": d.ociOf("unsigned", infra)})), infra.Kind+" "+NS+"/"+infra.Name, "rule unsigned", "signature")
		digestRef := d.ociOf("capi", infra) + "@" + d.pushed[infra.Type()+"-"+infra.Name]
		refused(t, "digest reference", d.create(gvr, d.provider(infra.Kind, infra.Name, NS, infra.Version,
			map[string]any{"oci": digestRef})), "rule oci-source", "digest")
		// Nothing refused is in the cluster for the operator to install
		// from, and it installed nothing of the provider.
		if _, err := d.dyn.Resource(gvr).Namespace(NS).Get(ctx, infra.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a refused %s is in the cluster: %v", infra.Kind, err)
		}
		d.absent(t, d.infra, "after the refusals")
	})

	// The signed OCI release: admitted, fetched by the operator from
	// docker-registry, installed; its store passes the webhook too.
	if err := d.create(ProviderGVR(infra.Kind), d.provider(infra.Kind, infra.Name, NS, infra.Version,
		map[string]any{"oci": d.ociOf("capi", infra)})); err != nil {
		t.Fatalf("the signed OCI release was refused: %v", err)
	}
	waitLong(t, "InfrastructureProvider ProviderInstalled=True", func() error { return d.installed(infra, NS) })
	playControllerManager(t, &World{Dyn: d.dyn}, d.infra)

	t.Run("applied is the components after customisation", func(t *testing.T) {
		for _, in := range []installed{d.core, d.infra} {
			d.compareApplied(t, in)
		}
		// The operator's store of the OCI release: the name, labels and
		// content pinseal's model of it says (operator.StoreLabels).
		store, err := cms.Get(ctx, infra.Type()+"-"+infra.Name+"-"+infra.Version, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the operator's store of the OCI release: %v", err)
		}
		if got, want := store.GetLabels(), operator.StoreLabels(infra.Type(), infra.Name, infra.Version); !equalStrings(got, want) {
			t.Errorf("store labels %v, pinseal's model %v", got, want)
		}
		if got, _, _ := unstructured.NestedString(store.Object, "data", "components"); got != string(d.infra.yaml) {
			t.Errorf("the store's components (%d bytes) are not the pushed components.yaml (%d bytes)", len(got), len(d.infra.yaml))
		}
	})

	t.Run("warn, audit, down", func(t *testing.T) {
		tampered := func(name string) *unstructured.Unstructured {
			return d.coreConfigMap(name, "admit", append(append([]byte(nil), d.core.yaml...), "\n# tampered\n"...))
		}
		d.stopServe()
		d.startServe(t, "warn")
		d.probe(t, "admitted")
		if err := d.create(GVRConfigMap, tampered("warned")); err != nil {
			t.Errorf("warn refused: %v", err)
		}
		if ws := strings.Join(d.warns.take(), "\n"); !strings.Contains(ws, "rule content") {
			t.Errorf("warn: warnings %q, want the content rule", ws)
		}

		d.stopServe()
		d.startServe(t, "audit")
		d.probe(t, "admitted")
		if err := d.create(GVRConfigMap, tampered("audited")); err != nil {
			t.Errorf("audit refused: %v", err)
		}
		if ws := d.warns.take(); len(ws) != 0 {
			t.Errorf("audit: warnings %q, want none", ws)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://"+d.main+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+doorToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(metrics), `pinseal_admission_problems_total{mode="audit",rule="content"} 1`) {
			t.Errorf("audit: the decision is not counted:\n%s", metrics)
		}
		if !strings.Contains(d.serveLog(), "rule=content") {
			t.Errorf("audit: the decision is not logged:\n%s", tail(d.serveLog(), 3000))
		}

		d.stopServe()
		d.probe(t, "down")
		refused(t, "webhook down, failurePolicy Fail", d.create(GVRConfigMap, tampered("down-fail")), "failed calling webhook")
		d.register(t, "Ignore", "admitted")
		if err := d.create(GVRConfigMap, tampered("down-ignore")); err != nil {
			t.Errorf("webhook down, failurePolicy Ignore: refused: %v", err)
		}
	})

	// The world the operator left, with the webhook gone (the plants are
	// a cluster-admin's) and the operator stopped (nothing reconciles a
	// plant away while the check runs).
	if err := d.dyn.Resource(gvrWebhooks).Delete(ctx, "pinseal", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*model.Provider{core, infra} {
		waitLong(t, p.Kind+" Ready=True", func() error { return d.ready(p) })
	}
	d.srv.StopOperator()
	t.Run("verifier cluster", func(t *testing.T) { d.clusterPlants(t) })

	d.operatorLog = d.srv.StartOperator(t)
	t.Run("operator rules", func(t *testing.T) { d.operatorRules(t) })
	t.Logf("TestRealOperatorDoor took %s", time.Since(start).Round(time.Second))
}

// ready reports nil once the operator copied the provider's Deployment's
// Available into its Ready condition.
func (d *doorWorld) ready(p *model.Provider) error {
	u, err := d.dyn.Resource(ProviderGVR(p.Kind)).Namespace(NS).Get(context.Background(), p.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
			return nil
		}
	}
	return fmt.Errorf("no Ready=True condition (%v)", conds)
}

// waitHang retries fn every 100 ms until it succeeds, for at most
// timebound.Hang: what it waits for (a process serving, a configuration
// in force) has no bound of its own.
func waitHang(t *testing.T, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timebound.Hang)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func equalStrings(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
