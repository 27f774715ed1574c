package manifestgen

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
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

// TestGenerateCompressesLikeUpstream: gzip -9 takes a generated manifest
// to about 12 % of its size, and its base64 (as a Helm release stores
// it) to about 24 %, as real provider manifests (Cluster API's CRDs: 12.2
// and 22.7 %). A generator that repeats itself more makes every
// size-related benchmark and estimate look better than on real trees.
func TestGenerateCompressesLikeUpstream(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		s := testSpec
		s.Size, s.Seed = 1<<20, seed
		yml := Generate(s)
		ratio := func(data []byte) float64 {
			var buf bytes.Buffer
			w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			_, _ = w.Write(data)
			_ = w.Close()
			return float64(buf.Len()) / float64(len(yml))
		}
		plain, b64 := ratio(yml), ratio([]byte(base64.StdEncoding.EncodeToString(yml)))
		t.Logf("seed %d: %d bytes, gzip -9 %.1f %%, of its base64 %.1f %%", seed, len(yml), 100*plain, 100*b64)
		if plain < 0.10 || plain > 0.15 {
			t.Errorf("seed %d: gzip -9 gives %.1f %% of the YAML, want 10–15 %% (real manifests: about 12 %%)", seed, 100*plain)
		}
		if b64 < 0.20 || b64 > 0.28 {
			t.Errorf("seed %d: gzip -9 of the base64 gives %.1f %% of the YAML, want 20–28 %% (real: about 23 %%)", seed, 100*b64)
		}
	}
}
