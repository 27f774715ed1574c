package cluster

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

var examples = filepath.Join("..", "..", "..", "examples", "packages")

// The example tree, loaded once: the checks only read it.
var (
	treeOnce    sync.Once
	exampleTree *model.Tree
	treeErr     error
)

// snapshot is the cluster the example tree's core package makes once
// installed: its ConfigMap as Helm wrote it, the provider as the operator
// left it, and the components' Deployments and CRDs.
func snapshot(t *testing.T) (*Snapshot, *model.Tree) {
	t.Helper()
	treeOnce.Do(func() { exampleTree, treeErr = verify.Load(context.Background(), examples, verify.Options{}) })
	if treeErr != nil {
		t.Fatal(treeErr)
	}
	tree := exampleTree
	snap := &Snapshot{Context: "kind-test", CRDs: map[string]*CRD{}}
	for _, pkg := range tree.Packages {
		for _, p := range pkg.Providers {
			if p.Kind != "CoreProvider" {
				continue
			}
			cm := pkg.ConfigMaps[0]
			gz, err := os.ReadFile(filepath.Join(pkg.Dir, pkg.Layout.BlobFile(cm)))
			if err != nil {
				t.Fatal(err)
			}
			ccm := &ConfigMap{Namespace: pkg.Namespace, Name: cm.Name, Labels: cm.Labels, Annotations: cm.Annotations,
				Components: gz, ComponentsInBinary: true, Metadata: cm.MetadataRaw,
				Writers: []Writer{{Manager: "helm", Operation: "Update", Content: true, Labels: true}}}
			snap.Providers = append(snap.Providers, &Provider{Kind: p.Kind, Namespace: pkg.Namespace, Name: p.Name,
				Version: p.Version, Selector: p.Selector, InstalledVersion: p.Version, Matches: []*ConfigMap{ccm},
				Conditions: []Condition{{Type: "Ready", Status: "True"}}})
			raw, _, err := content(ccm, 0)
			if err != nil {
				t.Fatal(err)
			}
			inst, err := parseInstalled(raw)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range inst.Deployments {
				d.Namespace = pkg.Namespace
				snap.Deployments = append(snap.Deployments, d)
			}
			for _, c := range inst.CRDs {
				snap.CRDs[c.Name] = c
			}
		}
	}
	if len(snap.Providers) != 1 || len(snap.Deployments) == 0 || len(snap.CRDs) == 0 {
		t.Fatalf("example core: %d providers, %d Deployments, %d CRDs", len(snap.Providers), len(snap.Deployments), len(snap.CRDs))
	}
	return snap, tree
}

func run(snap *Snapshot, tree *model.Tree) []report.Finding {
	return Findings(&Input{Snap: snap, Tree: tree, OCI: map[*Provider]*OCIResult{}})
}

func gzipped(t *testing.T, cm *ConfigMap, extra string) []byte {
	t.Helper()
	raw, _, err := content(cm, 0)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := blob.CompressBytes(append(append([]byte(nil), raw...), extra...))
	if err != nil {
		t.Fatal(err)
	}
	return gz
}

// TestChecks: the clean snapshot has no finding; each change gives
// exactly one, of its check, saying what changed.
func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noTree bool
		change func(t *testing.T, s *Snapshot)
		check  string
		want   []string
	}{
		{"installed behind", false, func(t *testing.T, s *Snapshot) { s.Providers[0].InstalledVersion = "v1.10.0-core" },
			CheckInstalled, []string{`"v1.10.0-core" is installed`, "CoreProvider cozy-cluster-api/cluster-api"}},
		{"condition false", false, func(t *testing.T, s *Snapshot) {
			s.Providers[0].Conditions[0] = Condition{Type: "Ready", Status: "False", Reason: "ComponentsFetchFailed", Message: "config map not found", Since: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		}, CheckInstalled, []string{"Ready is False since 2026-01-02T03:04:05Z: ComponentsFetchFailed: config map not found"}},
		{"other release than the tree", false, func(t *testing.T, s *Snapshot) {
			s.Providers[0].Version, s.Providers[0].InstalledVersion = "v1.9.0-core", "v1.9.0-core"
			s.Providers[0].Matches[0].Name = "v1.9.0-core"
		}, CheckInstalled, []string{`the tree's CoreProvider/cluster-api (capi-providers-core) requests "v1.10.1-core"`}},
		{"no ConfigMap", false, func(t *testing.T, s *Snapshot) { s.Providers[0].Matches = nil },
			CheckConfigMap, []string{"matches no ConfigMap", "capi-providers-core/templates/configmaps.yaml"}},
		{"two ConfigMaps", false, func(t *testing.T, s *Snapshot) {
			p := s.Providers[0]
			other := *p.Matches[0]
			other.Name = "v1.9.0-core"
			p.Matches = append(p.Matches, &other)
		}, CheckConfigMap, []string{"matches 2 ConfigMaps", "v1.10.1-core, v1.9.0-core"}},
		{"stale", false, func(t *testing.T, s *Snapshot) {
			cm := s.Providers[0].Matches[0]
			cm.Components = gzipped(t, cm, "# other\n")
		}, CheckConfigMap, []string{"is stale", "components sha256:"}},
		{"edited in place", false, func(t *testing.T, s *Snapshot) {
			cm := s.Providers[0].Matches[0]
			cm.Components = gzipped(t, cm, "# edited\n")
			cm.Writers = []Writer{{Manager: "helm", Operation: "Update", Labels: true}, {Manager: "kubectl-edit", Operation: "Update", Content: true}}
		}, CheckConfigMap, []string{"edited in place", `"kubectl-edit"`, "against the tree: components"}},
		{"edited in place, no tree", true, func(t *testing.T, s *Snapshot) {
			cm := s.Providers[0].Matches[0]
			cm.Writers = []Writer{{Manager: "helm", Operation: "Update", Labels: true}, {Manager: "kubectl-patch", Operation: "Update", Content: true}}
		}, CheckConfigMap, []string{"edited in place", `"kubectl-patch"`}},
		{"metadata changed", false, func(t *testing.T, s *Snapshot) {
			s.Providers[0].Matches[0].Metadata = []byte("releaseSeries: []\n")
		}, CheckConfigMap, []string{"is stale", "metadata sha256:"}},
		{"image edited", true, func(t *testing.T, s *Snapshot) {
			s.Deployments[0].Containers[0].Image = "example.com/capi:hotfix"
		}, CheckWorkload, []string{"runs image example.com/capi:hotfix", "edited by hand"}},
		{"replicas edited", true, func(t *testing.T, s *Snapshot) {
			n := int64(5)
			s.Deployments[0].Replicas = &n
		}, CheckWorkload, []string{"has 5 replicas"}},
		{"Deployment gone", true, func(t *testing.T, s *Snapshot) { s.Deployments = nil },
			CheckWorkload, []string{"is not in the cluster"}},
		{"CRD version missing", true, func(t *testing.T, s *Snapshot) {
			c := s.CRDs["clusters.cluster.x-k8s.io"]
			c.Versions = []CRDVersion{{Name: "v1alpha4", Served: true, Storage: true}}
		}, CheckCRD, []string{"has no version v1beta1", "the cluster has v1alpha4"}},
		{"CRD version not served", true, func(t *testing.T, s *Snapshot) {
			s.CRDs["clusters.cluster.x-k8s.io"].Versions[0].Served = false
		}, CheckCRD, []string{"does not serve version v1beta1"}},
		{"forbidden", true, func(t *testing.T, s *Snapshot) {
			s.Providers[0].Matches = nil
			s.Forbidden = []Forbidden{{Verb: "list", Resource: "configmaps", Namespace: "cozy-cluster-api", Check: CheckConfigMap, Message: "forbidden"}}
		}, CheckConfigMap, []string{"permission missing: list configmaps in namespace cozy-cluster-api", `apiGroup "" (core)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap, tree := snapshot(t)
			if tc.noTree {
				tree = nil
			}
			if fs := run(snap, tree); len(fs) != 0 {
				t.Fatalf("clean: %v", fs)
			}
			tc.change(t, snap)
			fs := run(snap, tree)
			if len(fs) != 1 || fs[0].Check != tc.check {
				t.Fatalf("want one %s finding, got %+v", tc.check, fs)
			}
			for _, w := range tc.want {
				if !strings.Contains(fs[0].Message+" "+fs[0].Package, w) {
					t.Errorf("finding does not say %q: %s", w, fs[0].Message)
				}
			}
			provider := "CoreProvider/cluster-api"
			if tc.name == "forbidden" {
				provider = "" // a permission is about the resource, not a provider
			}
			if !strings.HasPrefix(fs[0].Package, "kind-test") || fs[0].Provider != provider {
				t.Errorf("finding names %q %q, want the context and the provider", fs[0].Package, fs[0].Provider)
			}
		})
	}
}

// TestOCICopy: the operator's copy against the artifact at its tag.
func TestOCICopy(t *testing.T) {
	yaml, meta := []byte("kind: Namespace\n"), []byte("releaseSeries: []\n")
	p := &Provider{Kind: "InfrastructureProvider", Namespace: "ns", Name: "proxmox", Version: "v1.0.0", InstalledVersion: "v1.0.0",
		FetchOCI: "reg.example/capi/infrastructure-proxmox"}
	p.Stored = []*ConfigMap{{Namespace: "ns", Name: "infrastructure-proxmox-v1.0.0", Labels: operator.StoreLabels("infrastructure", "proxmox", "v1.0.0"),
		Components: yaml, Metadata: meta}}
	a := &model.Artifact{Digest: "sha256:" + strings.Repeat("1", 64), YAMLSHA256: sha(yaml).String(), MetadataSHA256: sha(meta).String(), YAMLTitle: "components.yaml"}
	in := &Input{Snap: &Snapshot{Context: "c", Providers: []*Provider{p}}, OCI: map[*Provider]*OCIResult{p: {Ref: "reg.example/capi/infrastructure-proxmox:v1.0.0", Artifact: a}}}
	if fs := Findings(in); len(fs) != 0 {
		t.Fatalf("clean: %+v", fs)
	}
	a.YAMLSHA256 = sha([]byte("kind: Namespace\n# moved\n")).String()
	fs := Findings(in)
	if len(fs) != 1 || fs[0].Check != CheckOCI || !strings.Contains(fs[0].Message, "the tag was moved after the operator's copy") {
		t.Fatalf("moved tag: %+v", fs)
	}
	in.OCI[p] = &OCIResult{Ref: "reg.example/x:v1.0.0", Refused: "registry reg.example is not one the scan may contact"}
	if fs := Findings(in); len(fs) != 1 || !strings.Contains(fs[0].Message, "was not contacted") {
		t.Fatalf("refused: %+v", fs)
	}
}

// TestOwnsFields reads managedFields' field sets as a ConfigMap is decoded.
func TestOwnsFields(t *testing.T) {
	for raw, want := range map[string][2]bool{
		`{"f:binaryData":{"f:components":{}}}`:                              {true, false},
		`{"f:data":{"f:metadata":{}},"f:metadata":{"f:labels":{"f:a":{}}}}`: {true, true},
		`{"f:metadata":{"f:annotations":{}}}`:                               {false, false},
		`{"f:data":{"f:other":{}}}`:                                         {false, false},
	} {
		var cj configMapJSON
		if err := json.Unmarshal([]byte(`{"metadata":{"name":"c","managedFields":[{"manager":"m","fieldsV1":`+raw+`}]}}`), &cj); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		w := cj.configMap().Writers[0]
		if [2]bool{w.Content, w.Labels} != want {
			t.Errorf("%s: content %v labels %v, want %v", raw, w.Content, w.Labels, want)
		}
	}
}

// TestGuard: the client does not follow the API server to another host
// and stops reading a response past its bound.
func TestGuard(t *testing.T) {
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 2048)))
	}))
	defer big.Close()
	host := strings.TrimPrefix(big.URL, "http://")
	g := &guard{next: http.DefaultTransport, host: host, limit: 1024}
	c := &http.Client{Transport: g}
	resp, err := c.Get(big.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
		t.Errorf("2 KiB body under a 1 KiB bound: %v", err)
	}
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, big.URL, http.StatusFound)
	}))
	defer redirect.Close()
	g.host = strings.TrimPrefix(redirect.URL, "http://")
	if _, err := c.Get(redirect.URL); err == nil || !strings.Contains(err.Error(), "redirect to another host refused") {
		t.Errorf("redirect to %s: %v", big.URL, err)
	}
}
