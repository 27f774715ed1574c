package changes

import (
	"slices"
	"strings"
	"testing"
)

// cleanOld is a components file of a provider with every kind of object a
// change is about: a Namespace, a CRD with two served versions and a
// conversion webhook, a ClusterRole, a Deployment with clusterctl
// variables.
const cleanOld = `# capmox components
apiVersion: v1
kind: Namespace
metadata:
  name: capmox-system
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: proxmoxclusters.infrastructure.cluster.x-k8s.io
spec:
  group: infrastructure.cluster.x-k8s.io
  conversion:
    strategy: Webhook
  versions:
  - name: v1alpha1
    served: true
    storage: false
  - name: v1alpha2
    served: true
    storage: true
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: capmox-manager-role
rules:
- apiGroups: [infrastructure.cluster.x-k8s.io]
  resources: [proxmoxclusters, proxmoxmachines]
  verbs: [get, list, watch, update]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: capmox-controller-manager
  namespace: capmox-system
spec:
  template:
    spec:
      containers:
      - name: manager
        image: ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.7
        args: ["--v=${CAPMOX_LOGLEVEL:=2}"]
        env:
        - name: PROXMOX_URL
          value: ${PROXMOX_URL}
`

// cleanNew differs from cleanOld in ways that change nothing for a
// cluster: a comment, a label, documents in another order, a verb the
// role already had by a wildcard, a new variable with a default.
var cleanNew = strings.NewReplacer(
	"# capmox components", "# capmox components, v0.7.8 build",
	"  name: capmox-controller-manager\n", "  name: capmox-controller-manager\n  labels:\n    app: capmox\n",
	`args: ["--v=${CAPMOX_LOGLEVEL:=2}"]`, `args: ["--v=${CAPMOX_LOGLEVEL:=2}", "--diag=${CAPMOX_DIAG:=false}"]`,
).Replace(cleanOld)

var cleanMeta = []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 7\n  contract: v1beta1\n")

func TestCompareEachKindAlone(t *testing.T) {
	served := []string{"v1beta1"}
	type pair struct {
		old, new         string
		oldMeta, newMeta []byte
		newVersion       string
	}
	rep := func(s string, kv ...string) string { return strings.NewReplacer(kv...).Replace(s) }
	// newContract moves the new release to series 0.8, which declares
	// contract v1beta2.
	newContract := func(p *pair) {
		p.newMeta = append(append([]byte{}, cleanMeta...), "- major: 0\n  minor: 8\n  contract: v1beta2\n"...)
		p.newVersion = "v0.8.0"
	}
	cases := []struct {
		name     string
		mutate   func(p *pair)
		served   []string
		kind     string // "" for the clean pair
		breaking bool
		detail   string
	}{
		{name: "clean pair"},
		{name: "served version gone, conversion webhook kept", kind: CRDVersionRemoved, detail: "v1alpha1 is no longer served",
			mutate: func(p *pair) {
				p.new = rep(p.new, "  - name: v1alpha1\n    served: true", "  - name: v1alpha1\n    served: false")
			}},
		{name: "served version gone without conversion", kind: CRDVersionRemoved, breaking: true, detail: "no conversion webhook",
			mutate: func(p *pair) {
				noHook := func(s string) string { return rep(s, "  conversion:\n    strategy: Webhook\n", "") }
				p.old = noHook(p.old)
				p.new = rep(noHook(p.new), "  - name: v1alpha1\n    served: true\n    storage: false\n", "")
			}},
		{name: "CRD gone", kind: CRDVersionRemoved, breaking: true, detail: "has no such CRD",
			mutate: func(p *pair) {
				p.new = rep(p.new, "kind: CustomResourceDefinition", "kind: NotACustomResourceDefinition")
			}},
		{name: "storage version", kind: CRDStorageChanged, detail: "v1alpha2 -> v1alpha1",
			mutate: func(p *pair) {
				p.new = rep(p.new, "served: true\n    storage: false", "served: true\n    storage: true", "served: true\n    storage: true\n---", "served: true\n    storage: false\n---")
			}},
		{name: "conversion webhook gone", kind: CRDConversionRemoved, detail: "conversion webhook is gone",
			mutate: func(p *pair) { p.new = rep(p.new, "strategy: Webhook", "strategy: None") }},
		{name: "contract the core serves", kind: ContractChanged, served: []string{"v1beta2", "v1beta1"}, detail: "0.8 declares contract v1beta2 (0.7 declared v1beta1)",
			mutate: newContract},
		{name: "contract the core does not serve", kind: ContractChanged, served: served, breaking: true, detail: "the core provider serves v1beta1, not v1beta2",
			mutate: newContract},
		{name: "contract with no core to judge it", kind: ContractChanged, detail: "declares contract v1beta2",
			mutate: newContract},
		{name: "image", kind: ImageChanged, detail: "container manager: ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.7 -> ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.8",
			mutate: func(p *pair) { p.new = rep(p.new, "proxmox:v0.7.7", "proxmox:v0.7.8") }},
		{name: "new init container", kind: ImageChanged, detail: "new init container setup runs busybox:1.36",
			mutate: func(p *pair) {
				p.new = rep(p.new, "      containers:\n", "      initContainers:\n      - name: setup\n        image: busybox:1.36\n      containers:\n")
			}},
		{name: "new verb", kind: RBACWidened, detail: "allows delete on proxmoxclusters.infrastructure.cluster.x-k8s.io; delete on proxmoxmachines.infrastructure.cluster.x-k8s.io",
			mutate: func(p *pair) {
				p.new = rep(p.new, "verbs: [get, list, watch, update]", "verbs: [get, list, watch, update, delete]")
			}},
		{name: "Secrets", kind: RBACWidened, detail: "allows get on secrets; Secrets included",
			mutate: func(p *pair) { p.new = rep(p.new, "resources: [configmaps]", "resources: [configmaps, secrets]") }},
		{name: "resourceNames dropped", kind: RBACWidened, detail: "allows get on configmaps",
			mutate: func(p *pair) {
				p.old = rep(p.old, "resources: [configmaps]", "resources: [configmaps]\n  resourceNames: [capmox-config]")
			}},
		{name: "new variable", kind: VariableAdded, detail: "new variable without a default",
			mutate: func(p *pair) {
				p.new = rep(p.new, "          value: ${PROXMOX_URL}\n", "          value: ${PROXMOX_URL}\n        - name: PROXMOX_TOKEN\n          value: ${ PROXMOX_TOKEN }\n")
			}},
		{name: "default gone", kind: VariableAdded, detail: "its default (2) is gone",
			mutate: func(p *pair) { p.new = rep(p.new, "${CAPMOX_LOGLEVEL:=2}", "${CAPMOX_LOGLEVEL}") }},
		{name: "namespace", kind: NamespaceChanged, detail: "1 object(s) move from namespace capmox-system to capmox-proxmox (Deployment/capmox-controller-manager)",
			mutate: func(p *pair) { p.new = rep(p.new, "  namespace: capmox-system", "  namespace: capmox-proxmox") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := pair{old: cleanOld, new: cleanNew, oldMeta: cleanMeta, newMeta: cleanMeta, newVersion: "v0.7.8"}
			if tc.mutate != nil {
				tc.mutate(&p)
			}
			got, err := Compare(Release{Version: "v0.7.7", Components: []byte(p.old), Metadata: p.oldMeta},
				Release{Version: p.newVersion, Components: []byte(p.new), Metadata: p.newMeta}, Options{Served: tc.served})
			if err != nil {
				t.Fatal(err)
			}
			if tc.kind == "" {
				if len(got) != 0 {
					t.Fatalf("clean pair: %+v", got)
				}
				return
			}
			for _, c := range got {
				if c.Kind != tc.kind {
					t.Errorf("a %s change turned on other kinds too: %+v", tc.kind, got)
				}
			}
			if !slices.ContainsFunc(got, func(c Change) bool { return strings.Contains(c.Detail, tc.detail) && c.Breaking == tc.breaking }) {
				t.Errorf("no %s change (breaking %v) saying %q: %+v", tc.kind, tc.breaking, tc.detail, got)
			}
			if b := Breaking(got); (len(b) > 0) != tc.breaking {
				t.Errorf("Breaking = %+v, want breaking %v", b, tc.breaking)
			}
		})
	}
}

func TestCompareBadComponents(t *testing.T) {
	_, err := Compare(Release{Components: []byte(cleanOld)}, Release{Components: []byte("kind: [unclosed\n")}, Options{})
	if err == nil || !strings.Contains(err.Error(), "new components") || !strings.Contains(err.Error(), "line") {
		t.Fatalf("err = %v, want one naming the new components and the line", err)
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 0, "a"; i < 8; i++ {
		name := string(rune('b' + i))
		bomb += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	if _, err := Compare(Release{Components: []byte(bomb)}, Release{Components: []byte(cleanNew)}, Options{}); err == nil || !strings.Contains(err.Error(), "old components") {
		t.Fatalf("alias bomb: err = %v", err)
	}
}

func TestVariables(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []Variable
	}{
		{"a: ${FOO}", []Variable{{Name: "FOO"}}},
		{"a: ${ FOO }", []Variable{{Name: "FOO"}}},
		{"a: ${FOO:=bar}", []Variable{{Name: "FOO", Default: "bar"}}},
		{"a: ${FOO:-bar}", []Variable{{Name: "FOO", Default: "bar"}}},
		{"a: ${FOO=bar}", []Variable{{Name: "FOO", Default: "bar"}}},
		{"a: ${FOO:=}", []Variable{{Name: "FOO"}}},                          // an empty default is none
		{"a: ${FOO:=${BAR}}", []Variable{{Name: "FOO", Default: "${BAR}"}}}, // BAR is not a variable of the file
		{"a: ${FOO}\nb: ${FOO:=x}", []Variable{{Name: "FOO"}}},              // the first occurrence says
		{"a: $${FOO} $FOO", nil},
		{"a: ${FOO,,}", []Variable{{Name: "FOO"}}},
		{"a: ${FOO", nil},
		{"a: ${}", nil},
	} {
		got := Variables([]byte(tc.text))
		if !slices.Equal(got, tc.want) {
			t.Errorf("Variables(%q) = %+v, want %+v", tc.text, got, tc.want)
		}
	}
}

func FuzzCompare(f *testing.F) {
	f.Add([]byte(cleanOld), []byte(cleanNew))
	f.Add([]byte(cleanOld), []byte(strings.Replace(cleanNew, "storage: true", "storage: false", 1)))
	f.Add([]byte("kind: Role\nmetadata: {name: r}\nrules: [{apiGroups: ['*'], resources: ['*'], verbs: ['*']}]\n"), []byte("${A:=${B:=${C}}} $${D} ${ E }"))
	f.Fuzz(func(t *testing.T, old, new []byte) {
		cs, err := Compare(Release{Version: "v0.7.7", Components: old, Metadata: cleanMeta}, Release{Version: "v0.7.8", Components: new, Metadata: cleanMeta}, Options{Served: []string{"v1beta1"}})
		if err != nil {
			return
		}
		for _, c := range cs {
			if !slices.Contains(Kinds, c.Kind) || c.Object == "" || c.Detail == "" {
				t.Fatalf("change %+v", c)
			}
		}
		Variables(new)
	})
}

// TestCRDBooleansAsKubernetesReadsThem: served: yes is served (YAML 1.1,
// as Kubernetes decodes it), so turning it off removes a served version.
func TestCRDBooleansAsKubernetesReadsThem(t *testing.T) {
	before := strings.Replace(cleanOld, "  - name: v1alpha1\n    served: true", "  - name: v1alpha1\n    served: yes", 1)
	after := strings.Replace(cleanOld, "  - name: v1alpha1\n    served: true", "  - name: v1alpha1\n    served: no", 1)
	got, err := Compare(Release{Components: []byte(before)}, Release{Components: []byte(after)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != CRDVersionRemoved {
		t.Fatalf("changes %+v, want one crd-version-removed", got)
	}
}
