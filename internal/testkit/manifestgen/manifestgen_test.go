package manifestgen

import (
	"bytes"
	"testing"

	"sigs.k8s.io/yaml"
)

var testSpec = Spec{
	Provider: "infrastructure-proxmox", Prefix: "capmox", Group: "infrastructure.cluster.x-k8s.io",
	Kinds: []string{"ProxmoxCluster", "ProxmoxMachine"}, Image: "ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.7",
	Size: 200 << 10, Seed: 7,
}

func TestGenerateDeterministicAndSized(t *testing.T) {
	a := Generate(testSpec)
	b := Generate(testSpec)
	if !bytes.Equal(a, b) {
		t.Fatal("same spec, different output")
	}
	if len(a) < testSpec.Size*9/10 || len(a) > testSpec.Size*2 {
		t.Errorf("size %d, want about %d", len(a), testSpec.Size)
	}
	other := testSpec
	other.Seed = 8
	if bytes.Equal(a, Generate(other)) {
		t.Error("different seeds, same output")
	}
}

func TestGenerateIsValidYAML(t *testing.T) {
	docs := bytes.Split(Generate(testSpec), []byte("\n---\n"))
	if len(docs) < 10 {
		t.Fatalf("only %d documents", len(docs))
	}
	kinds := map[string]int{}
	for i, d := range docs {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(d, &obj); err != nil {
			t.Fatalf("document %d: %v\n%.300s", i, err, d)
		}
		if obj.Kind == "" || obj.Metadata.Name == "" {
			t.Fatalf("document %d has no kind or name:\n%.300s", i, d)
		}
		kinds[obj.Kind]++
	}
	for _, k := range []string{"Namespace", "CustomResourceDefinition", "Deployment", "ClusterRole", "Service"} {
		if kinds[k] == 0 {
			t.Errorf("no %s in the manifest", k)
		}
	}
}
