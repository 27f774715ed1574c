package admission

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/policy"
)

const (
	prefix     = "registry.test/capi"
	components = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n"
	metadata   = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 10\n  contract: v1beta1\n"
)

// fakeReleases holds the signed releases by ref; Unsigned lists refs that
// exist but are not signed; Err fails every lookup.
type fakeReleases struct {
	signed   map[string]Release
	unsigned map[string]bool
	err      error
	calls    int
}

func (f *fakeReleases) Lookup(_ context.Context, ref string) (Release, error) {
	f.calls++
	if f.err != nil {
		return Release{}, f.err
	}
	if r, ok := f.signed[ref]; ok {
		return r, nil
	}
	if f.unsigned[ref] {
		return Release{Ref: ref, Digest: "sha256:1111", Problem: "no signature by a trusted key", Fix: "sign it"}, nil
	}
	return Release{Ref: ref, Problem: "not found", Fix: "push it"}, nil
}

func releases() *fakeReleases {
	return &fakeReleases{
		signed: map[string]Release{
			prefix + "/core-cluster-api:v1.10.1-core": {Ref: prefix + "/core-cluster-api:v1.10.1-core", Digest: "sha256:abcd",
				Kind: "CoreProvider", Name: "cluster-api", Components: sum([]byte(components)), Metadata: sum([]byte(metadata))},
		},
		unsigned: map[string]bool{prefix + "/core-cluster-api:v1.10.2-core": true},
	}
}

func testPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(`apiVersion: pinseal/v1
kind: Policy
admission:
  registries: [`+prefix+`]
  pinned:
  - kind: InfrastructureProvider
    name: docker
    version: v1.10.1
    url: https://github.com/kubernetes-sigs/cluster-api/releases/v1.10.1/infrastructure-components-development.yaml
    components: `+strings.Repeat("a", 64)+`
    metadata: `+strings.Repeat("b", 64)+`
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// signedConfigMap is the clean fixture: the release as builder writes it.
func signedConfigMap(t *testing.T) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "v1.10.1-core", Namespace: "capi",
			Labels:      map[string]string{IdentityLabel: "core-cluster-api", "core-components": "cozy"},
			Annotations: map[string]string{CompressedAnnotation: "true"}},
		Data:       map[string]string{MetadataKey: metadata},
		BinaryData: map[string][]byte{ComponentsKey: gz(t, components)},
	}
}

func request(t *testing.T, op admissionv1.Operation, kind metav1.GroupVersionKind, obj, old any) *admissionv1.AdmissionRequest {
	t.Helper()
	raw := func(o any) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	return &admissionv1.AdmissionRequest{UID: "u1", Kind: kind, Operation: op, Namespace: "capi", Object: raw(obj), OldObject: raw(old)}
}

var cmKind = metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

func providerKind(k string) metav1.GroupVersionKind {
	return metav1.GroupVersionKind{Group: Group, Version: "v1alpha2", Kind: k}
}

func provider(name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": Group + "/v1alpha2", "kind": "X",
		"metadata": map[string]any{"name": name, "namespace": "capi"}, "spec": spec}
}

func rules(v Verdict) []Rule {
	var out []Rule
	for _, p := range v.Problems {
		out = append(out, p.Rule)
	}
	return out
}

// TestConfigMapRules: each mutation of the signed ConfigMap breaks exactly
// its rule; the clean fixture is admitted.
func TestConfigMapRules(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(cm *corev1.ConfigMap)
		want   []Rule
	}{
		{"signed release", func(*corev1.ConfigMap) {}, nil},
		{"uncompressed data.components", func(cm *corev1.ConfigMap) {
			delete(cm.Annotations, CompressedAnnotation)
			cm.BinaryData = nil
			cm.Data[ComponentsKey] = components
		}, nil},
		{"not a provider ConfigMap", func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"x": "y"}; cm.BinaryData = nil }, nil},
		{"operator store labels", func(cm *corev1.ConfigMap) {
			delete(cm.Labels, IdentityLabel)
			cm.Labels["provider.cluster.x-k8s.io/type"] = "core"
			cm.Labels["provider.cluster.x-k8s.io/name"] = "cluster-api"
		}, nil},
		{"tampered components", func(cm *corev1.ConfigMap) {
			cm.BinaryData[ComponentsKey] = gz(t, components+"---\nkind: Secret\n")
		}, []Rule{RuleContent}},
		{"tampered metadata", func(cm *corev1.ConfigMap) { cm.Data[MetadataKey] = metadata + "# x\n" }, []Rule{RuleContent}},
		{"unsigned release", func(cm *corev1.ConfigMap) { cm.Name = "v1.10.2-core" }, []Rule{RuleUnsigned}},
		{"no release published", func(cm *corev1.ConfigMap) { cm.Name = "v1.10.3-core" }, []Rule{RuleUnsigned}},
		{"no identity", func(cm *corev1.ConfigMap) { delete(cm.Labels, IdentityLabel) }, []Rule{RuleIdentity}},
		{"other provider's identity", func(cm *corev1.ConfigMap) { cm.Labels[IdentityLabel] = "infrastructure-docker" }, []Rule{RuleUnsigned}},
		{"not semver", func(cm *corev1.ConfigMap) { cm.Name = "core" }, []Rule{RuleVersion}},
		{"no metadata", func(cm *corev1.ConfigMap) { delete(cm.Data, MetadataKey) }, []Rule{RuleComponents}},
		{"compressed without binaryData", func(cm *corev1.ConfigMap) { cm.BinaryData = nil; cm.Data[ComponentsKey] = components }, []Rule{RuleComponents}},
		{"gzip without annotation", func(cm *corev1.ConfigMap) { delete(cm.Annotations, CompressedAnnotation) }, []Rule{RuleComponents}},
		{"corrupt gzip", func(cm *corev1.ConfigMap) { cm.BinaryData[ComponentsKey] = []byte("not gzip") }, []Rule{RuleComponents}},
		{"gzip bomb", func(cm *corev1.ConfigMap) {
			cm.BinaryData[ComponentsKey] = gz(t, strings.Repeat("a", 2<<20))
		}, []Rule{RuleComponents}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := signedConfigMap(t)
			tt.mutate(cm)
			d := &Decider{Policy: testPolicy(t), Releases: releases(), InflateLimit: 1 << 20}
			v := d.Decide(context.Background(), request(t, admissionv1.Create, cmKind, cm, nil))
			if got := rules(v); !equalRules(got, tt.want) {
				t.Fatalf("rules = %v, want %v: %v", got, tt.want, v.Lines())
			}
			if v.Object != "ConfigMap capi/"+cm.Name {
				t.Errorf("object = %q", v.Object)
			}
			if tt.want == nil && isComponents(cm) && !strings.HasPrefix(v.Vouched, prefix+"/core-cluster-api:v1.10.1-core@sha256:abcd") {
				t.Errorf("vouched = %q", v.Vouched)
			}
		})
	}
}

func equalRules(a, b []Rule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestConfigMapUpdate(t *testing.T) {
	old := signedConfigMap(t)
	tests := []struct {
		name   string
		mutate func(cm *corev1.ConfigMap)
		want   []Rule
	}{
		{"labels only", func(cm *corev1.ConfigMap) { cm.Labels["x"] = "y" }, nil},
		{"same content recompressed", func(cm *corev1.ConfigMap) {
			b, _ := blob.CompressBytes([]byte(components))
			cm.BinaryData[ComponentsKey] = b
		}, nil},
		{"components edited in place", func(cm *corev1.ConfigMap) {
			cm.BinaryData[ComponentsKey] = gz(t, components+"# edited\n")
		}, []Rule{RuleEdit, RuleContent}},
		{"metadata edited in place", func(cm *corev1.ConfigMap) { cm.Data[MetadataKey] = metadata + "# x\n" }, []Rule{RuleEdit, RuleContent}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := signedConfigMap(t)
			tt.mutate(cm)
			d := &Decider{Policy: testPolicy(t), Releases: releases()}
			v := d.Decide(context.Background(), request(t, admissionv1.Update, cmKind, cm, old))
			if got := rules(v); !equalRules(got, tt.want) {
				t.Fatalf("rules = %v, want %v: %v", got, tt.want, v.Lines())
			}
		})
	}
	// An edit in place is refused even when the new content is itself a
	// signed release's: the name already means the old content.
	oldOther := signedConfigMap(t)
	oldOther.BinaryData[ComponentsKey] = gz(t, "kind: Old\n")
	d := &Decider{Policy: testPolicy(t), Releases: releases()}
	v := d.Decide(context.Background(), request(t, admissionv1.Update, cmKind, signedConfigMap(t), oldOther))
	if got := rules(v); !equalRules(got, []Rule{RuleEdit}) {
		t.Fatalf("rules = %v, want [in-place-edit]", got)
	}
}

func TestProviderRules(t *testing.T) {
	ociRef := prefix + "/core-cluster-api"
	tests := []struct {
		name string
		kind string
		obj  map[string]any
		want []Rule
	}{
		{"signed oci, tag from version", "CoreProvider", provider("cluster-api", map[string]any{"version": "v1.10.1-core",
			"fetchConfig": map[string]any{"oci": ociRef}}), nil},
		{"signed oci, tag written", "CoreProvider", provider("cluster-api", map[string]any{"version": "v1.10.1-core",
			"fetchConfig": map[string]any{"oci": ociRef + ":v1.10.1-core"}}), nil},
		{"unsigned oci tag", "CoreProvider", provider("cluster-api", map[string]any{"version": "v1.10.2-core",
			"fetchConfig": map[string]any{"oci": ociRef}}), []Rule{RuleUnsigned}},
		{"digest the operator cannot parse", "CoreProvider", provider("cluster-api", map[string]any{"version": "v1.10.1-core",
			"fetchConfig": map[string]any{"oci": ociRef + "@sha256:" + strings.Repeat("a", 64)}}), []Rule{RuleOCI}},
		{"tag other than version", "CoreProvider", provider("cluster-api", map[string]any{"version": "v1.10.2-core",
			"fetchConfig": map[string]any{"oci": ociRef + ":v1.10.1-core"}}), []Rule{RuleOCI}},
		{"untrusted registry", "CoreProvider", provider("cluster-api", map[string]any{"version": "v1.10.1-core",
			"fetchConfig": map[string]any{"oci": "evil.test/capi/core-cluster-api"}}), []Rule{RuleOCI}},
		{"another provider's artifact", "BootstrapProvider", provider("cluster-api", map[string]any{"version": "v1.10.1-core",
			"fetchConfig": map[string]any{"oci": ociRef}}), []Rule{RuleContent}},
		{"selector with identity", "CoreProvider", provider("cluster-api", map[string]any{"version": "v1.10.1-core",
			"fetchConfig": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{IdentityLabel: "core-cluster-api", "core-components": "cozy"}}}}), nil},
		{"selector without identity", "CoreProvider", provider("cluster-api", map[string]any{"version": "v1.10.1-core",
			"fetchConfig": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"core-components": "cozy"}}}}), []Rule{RuleSelector}},
		{"default upstream download", "CoreProvider", provider("cluster-api", map[string]any{"version": "v1.10.1"}), []Rule{RuleDownload}},
		{"url download", "InfrastructureProvider", provider("docker", map[string]any{"version": "v1.10.2",
			"fetchConfig": map[string]any{"url": "https://github.com/kubernetes-sigs/cluster-api/releases/v1.10.1/infrastructure-components-development.yaml"}}), []Rule{RuleDownload}},
		{"pinned url download", "InfrastructureProvider", provider("docker", map[string]any{"version": "v1.10.1",
			"fetchConfig": map[string]any{"url": "https://github.com/kubernetes-sigs/cluster-api/releases/v1.10.1/infrastructure-components-development.yaml"}}), nil},
		{"unknown provider, no fetchConfig", "InfrastructureProvider", provider("nobody", map[string]any{"version": "v1.0.0"}), []Rule{RuleDownload}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Decider{Policy: testPolicy(t), Releases: releases()}
			v := d.Decide(context.Background(), request(t, admissionv1.Create, providerKind(tt.kind), tt.obj, nil))
			if got := rules(v); !equalRules(got, tt.want) {
				t.Fatalf("rules = %v, want %v: %v", got, tt.want, v.Lines())
			}
			if !strings.HasPrefix(v.Object, tt.kind+" capi/") {
				t.Errorf("object = %q", v.Object)
			}
		})
	}
}

func TestDigestReasonNamed(t *testing.T) {
	d := &Decider{Policy: testPolicy(t), Releases: releases()}
	obj := provider("cluster-api", map[string]any{"version": "v1.10.1-core",
		"fetchConfig": map[string]any{"oci": prefix + "/core-cluster-api@sha256:" + strings.Repeat("a", 64)}})
	v := d.Decide(context.Background(), request(t, admissionv1.Create, providerKind("CoreProvider"), obj, nil))
	msg := strings.Join(v.Lines(), "\n")
	for _, want := range []string{"CoreProvider capi/cluster-api", "rule oci-source", "digest", "fix: name the release by its tag"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestUnverifiedIsNotCached(t *testing.T) {
	r := releases()
	r.err = errors.New("connection refused")
	d := &Decider{Policy: testPolicy(t), Releases: r}
	v := d.Decide(context.Background(), request(t, admissionv1.Create, cmKind, signedConfigMap(t), nil))
	if got := rules(v); !equalRules(got, []Rule{RuleUnverified}) || v.Key != "" {
		t.Fatalf("rules = %v key %q, want unverified and no key", got, v.Key)
	}
	r.err = nil
	v = d.Decide(context.Background(), request(t, admissionv1.Create, cmKind, signedConfigMap(t), nil))
	if !v.Allowed() || v.Key == "" {
		t.Fatalf("verdict %+v: want admitted with a key", v)
	}
}

func TestNoTrustedRegistry(t *testing.T) {
	d := &Decider{Policy: policy.Default(), Releases: releases()}
	v := d.Decide(context.Background(), request(t, admissionv1.Create, cmKind, signedConfigMap(t), nil))
	if got := rules(v); !equalRules(got, []Rule{RuleUnsigned}) || !strings.Contains(v.Problems[0].Fix, "admission.registries") {
		t.Fatalf("verdict %+v", v)
	}
}

func TestKeyFollowsContentAndPolicy(t *testing.T) {
	d := &Decider{Policy: testPolicy(t), Releases: releases(), Fingerprint: "p1"}
	ctx := context.Background()
	a := d.Decide(ctx, request(t, admissionv1.Create, cmKind, signedConfigMap(t), nil)).Key
	cm := signedConfigMap(t)
	cm.Labels["other"] = "x" // not read by the decision
	if b := d.Decide(ctx, request(t, admissionv1.Create, cmKind, cm, nil)).Key; b != a {
		t.Errorf("a label the decision does not read changed the key")
	}
	cm.Data[MetadataKey] += "#"
	if b := d.Decide(ctx, request(t, admissionv1.Create, cmKind, cm, nil)).Key; b == a {
		t.Errorf("changed metadata kept the key")
	}
	d.Fingerprint = "p2"
	if b := d.Decide(ctx, request(t, admissionv1.Create, cmKind, signedConfigMap(t), nil)).Key; b == a {
		t.Errorf("a changed policy kept the key")
	}
}

func TestOtherOperationsAndKinds(t *testing.T) {
	d := &Decider{Policy: testPolicy(t), Releases: releases()}
	cm := signedConfigMap(t)
	cm.Name = "v9.9.9"
	for _, req := range []*admissionv1.AdmissionRequest{
		request(t, admissionv1.Delete, cmKind, nil, cm),
		request(t, admissionv1.Create, metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, map[string]any{}, nil),
	} {
		if v := d.Decide(context.Background(), req); !v.Allowed() {
			t.Errorf("%s %s: %v", req.Operation, req.Kind.Kind, v.Lines())
		}
	}
	bad := request(t, admissionv1.Create, cmKind, nil, nil)
	bad.Object.Raw = []byte("{not json")
	if got := rules(d.Decide(context.Background(), bad)); !equalRules(got, []Rule{RuleObject}) {
		t.Errorf("unreadable object: rules %v", got)
	}
	if got := rules(d.Decide(context.Background(), nil)); !equalRules(got, []Rule{RuleObject}) {
		t.Errorf("no request: rules %v", got)
	}
}

func TestRespondModes(t *testing.T) {
	req := &admissionv1.AdmissionRequest{UID: "uid-7"}
	bad := Verdict{Object: "ConfigMap capi/v1", Problems: []Problem{{Rule: RuleContent, Message: "tampered", Fix: "rebuild"}}}
	for _, tt := range []struct {
		mode     Mode
		v        Verdict
		allowed  bool
		warnings int
	}{
		{Enforce, bad, false, 0},
		{Warn, bad, true, 1},
		{Audit, bad, true, 0},
		{Enforce, Verdict{Object: "x"}, true, 0},
	} {
		r := Respond(req, tt.v, tt.mode)
		if r.Response.UID != "uid-7" || r.Response.Allowed != tt.allowed || len(r.Response.Warnings) != tt.warnings || r.APIVersion != "admission.k8s.io/v1" {
			t.Errorf("%s: %+v", tt.mode, r.Response)
		}
		if !tt.allowed && !strings.Contains(r.Response.Result.Message, "ConfigMap capi/v1: rule content: tampered; fix: rebuild") {
			t.Errorf("%s: message %q", tt.mode, r.Response.Result.Message)
		}
	}
	if _, err := ParseMode("block"); err == nil {
		t.Error("ParseMode(block) did not fail")
	}
	if m, _ := ParseMode(""); m != Enforce {
		t.Errorf("default mode %s", m)
	}
}

// FuzzDecide: whatever the object bytes, a decision is made and nothing
// panics.
func FuzzDecide(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"v1.0.0","labels":{"vendor.pinseal.dev/provider":"core-x"},"annotations":{"provider.cluster.x-k8s.io/compressed":"true"}},"data":{"metadata":"m"},"binaryData":{"components":"H4sIAAAAAAAA/wAAAP//AQAA//8AAAAAAAAAAA=="}}`), false)
	f.Add([]byte(`{"spec":{"version":"v1","fetchConfig":{"oci":"a/b@sha256:"}}}`), true)
	f.Fuzz(func(t *testing.T, raw []byte, isProvider bool) {
		kind := cmKind
		if isProvider {
			kind = providerKind("CoreProvider")
		}
		d := &Decider{Policy: testPolicy(t), Releases: releases(), InflateLimit: 1 << 20}
		req := &admissionv1.AdmissionRequest{Kind: kind, Operation: admissionv1.Update,
			Object: runtime.RawExtension{Raw: raw}, OldObject: runtime.RawExtension{Raw: raw}}
		v := d.Decide(context.Background(), req)
		if v.Object == "" {
			t.Fatal("a verdict names no object")
		}
	})
}
