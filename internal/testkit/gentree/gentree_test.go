package gentree

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"sigs.k8s.io/yaml"

	"github.com/pinseal/pinseal/internal/metadata"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/pin"
)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// render renders a package chart as Helm does, with default values, and
// returns the manifests by template path.
func render(t *testing.T, dir string) map[string]string {
	t.Helper()
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatalf("load chart %s: %v", dir, err)
	}
	vals, err := chartutil.ToRenderValues(ch, map[string]any{}, chartutil.ReleaseOptions{Name: "bench", Namespace: "default"}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatalf("render %s: %v", dir, err)
	}
	return out
}

func findRendered(t *testing.T, out map[string]string, suffix string) map[string]any {
	t.Helper()
	for name, text := range out {
		if strings.HasSuffix(name, suffix) {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return obj
		}
	}
	t.Fatalf("no rendered %s in %v", suffix, out)
	return nil
}

func TestGenerateTreeIsConsistent(t *testing.T) {
	const size = 256 << 10
	root := filepath.Join(t.TempDir(), "tree")
	res, err := Generate(root, Options{Packages: 7, Size: size, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Packages) != 7 {
		t.Fatalf("got %d packages, want 7", len(res.Packages))
	}
	cores := 0
	labels := map[string]bool{}
	releases := map[string]bool{}
	var sumYAML int64
	for _, p := range res.Packages {
		dir := filepath.Join(root, filepath.FromSlash(p.Dir))
		if p.Kind == "CoreProvider" {
			cores++
		}
		if labels[p.Label] || releases[p.Release] {
			t.Errorf("%s: label %q or release %q not unique", p.Dir, p.Label, p.Release)
		}
		labels[p.Label], releases[p.Release] = true, true
		if !strings.HasPrefix(p.Release, p.Version+"-") {
			t.Errorf("%s: release %q does not start with version %q", p.Dir, p.Release, p.Version)
		}

		yml := readFile(t, filepath.Join(dir, p.YAML))
		gz := readFile(t, filepath.Join(dir, p.Blob))
		sumYAML += int64(len(yml))
		if len(yml) < size*9/10 || len(yml) > size*3/2 {
			t.Errorf("%s: components size %d, want about %d", p.Dir, len(yml), size)
		}

		// Every document of the components file parses to an object.
		for i, doc := range strings.Split(string(yml), "\n---\n") {
			var obj map[string]any
			if err := yaml.UnmarshalStrict([]byte(doc), &obj); err != nil {
				t.Fatalf("%s: document %d: %v", p.YAML, i, err)
			}
			if obj["kind"] == nil || obj["apiVersion"] == nil {
				t.Fatalf("%s: document %d has no kind/apiVersion", p.YAML, i)
			}
		}

		// The blob is one clean reproducible member holding the YAML.
		info := blob.Inspect(bytes.NewReader(gz), 0)
		if info.Err != nil || !info.Header.Reproducible() {
			t.Errorf("%s: blob: err %v, header problems %v", p.Dir, info.Err, info.Header.Problems())
		}
		if info.RawSHA256 != blob.Digest(sha256.Sum256(yml)) {
			t.Errorf("%s: blob does not inflate to %s", p.Dir, p.YAML)
		}

		// Pins match the vendored files.
		pf, err := pin.Parse(readFile(t, filepath.Join(dir, pin.FileName)), pin.FileName)
		if err != nil {
			t.Fatalf("%s: pin.yaml: %v", p.Dir, err)
		}
		if len(pf.Providers) != 1 || pf.Providers[0].Release != p.Release || pf.Providers[0].Version != p.Version {
			t.Fatalf("%s: pin.yaml providers %+v", p.Dir, pf.Providers)
		}
		for _, src := range pf.Providers[0].Sources {
			if got := sha256Hex(readFile(t, filepath.Join(dir, src.To))); got != src.SHA256 {
				t.Errorf("%s: pin of %s is %s, file hashes to %s", p.Dir, src.To, src.SHA256, got)
			}
		}

		// The Makefile carries the namespace and the version variable.
		mk := string(readFile(t, filepath.Join(dir, "Makefile")))
		if !strings.Contains(mk, "NAMESPACE="+DefaultNamespace+"\n") || !strings.Contains(mk, "_UPSTREAM_VERSION = "+p.Version+"\n") {
			t.Errorf("%s: Makefile lacks NAMESPACE or version variable:\n%s", p.Dir, mk)
		}

		// Helm renders a ConfigMap named after the release holding the
		// blob, and a provider whose spec.version and selector agree.
		out := render(t, dir)
		cm := findRendered(t, out, "templates/configmaps.yaml")
		md := cm["metadata"].(map[string]any)
		if md["name"] != p.Release {
			t.Errorf("%s: ConfigMap name %v, want %s", p.Dir, md["name"], p.Release)
		}
		if md["annotations"].(map[string]any)["provider.cluster.x-k8s.io/compressed"] != "true" {
			t.Errorf("%s: compressed annotation missing", p.Dir)
		}
		if md["labels"].(map[string]any)[p.Label] != "cozy" {
			t.Errorf("%s: ConfigMap labels %v lack %s", p.Dir, md["labels"], p.Label)
		}
		data, err := base64.StdEncoding.DecodeString(cm["binaryData"].(map[string]any)["components"].(string))
		if err != nil || !bytes.Equal(data, gz) {
			t.Errorf("%s: binaryData.components is not the blob (err %v)", p.Dir, err)
		}
		if got := cm["data"].(map[string]any)["metadata"]; got != string(readFile(t, filepath.Join(dir, metadataFile))) {
			t.Errorf("%s: data.metadata is not metadata.yaml: %q", p.Dir, got)
		}
		prov := findRendered(t, out, "templates/providers.yaml")
		spec := prov["spec"].(map[string]any)
		if prov["kind"] != p.Kind || spec["version"] != p.Release {
			t.Errorf("%s: provider %v version %v, want %s %s", p.Dir, prov["kind"], spec["version"], p.Kind, p.Release)
		}
		sel := spec["fetchConfig"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
		if len(sel) != 1 || sel[p.Label] != "cozy" {
			t.Errorf("%s: selector %v, want %s: cozy", p.Dir, sel, p.Label)
		}

		// The release's series is declared with contract v1beta1.
		meta := metadata.Parse(readFile(t, filepath.Join(dir, metadataFile)))
		if meta.Err != nil {
			t.Fatal(meta.Err)
		}
		want := strings.Join(strings.SplitN(strings.TrimPrefix(p.Version, "v"), ".", 3)[:2], ".")
		found := false
		for _, rs := range meta.ReleaseSeries {
			if rs.Contract == "v1beta1" && want == strconv.Itoa(rs.Major)+"."+strconv.Itoa(rs.Minor) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: metadata.yaml has no v1beta1 series %s: %+v", p.Dir, want, meta.ReleaseSeries)
		}
	}
	if cores != 1 || res.Packages[0].Kind != "CoreProvider" {
		t.Errorf("got %d core providers (first %s), want exactly one, first", cores, res.Packages[0].Kind)
	}
	if res.YAMLBytes != sumYAML {
		t.Errorf("Result.YAMLBytes %d, files sum to %d", res.YAMLBytes, sumYAML)
	}
}

// snapshot reads every file of a tree by relative path.
func snapshot(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[rel], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestGenerateIsDeterministicAndVaries(t *testing.T) {
	tmp := t.TempDir()
	opts := Options{Packages: 3, Size: 32 << 10, Seed: 7}
	for _, name := range []string{"a", "b"} {
		if _, err := Generate(filepath.Join(tmp, name), opts); err != nil {
			t.Fatal(err)
		}
	}
	opts.Seed = 8
	if _, err := Generate(filepath.Join(tmp, "c"), opts); err != nil {
		t.Fatal(err)
	}
	a, b, c := snapshot(t, filepath.Join(tmp, "a")), snapshot(t, filepath.Join(tmp, "b")), snapshot(t, filepath.Join(tmp, "c"))
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("trees differ in file count: %d vs %d", len(a), len(b))
	}
	blobs := map[string]string{}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
		if strings.HasSuffix(name, ".gz") {
			if other, dup := blobs[string(data)]; dup {
				t.Errorf("%s and %s have the same blob", name, other)
			}
			blobs[string(data)] = name
			if bytes.Equal(data, c[name]) {
				t.Errorf("%s is the same under another seed", name)
			}
		}
	}
}

func TestGenerateRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, Options{Packages: 1, Size: 1024}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("got %v, want a not-empty error", err)
	}
	if got := readFile(t, filepath.Join(dir, "keep")); string(got) != "x" {
		t.Fatal("existing file changed")
	}
	// An empty directory is fine, and nothing is left beside it.
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(empty, Options{Packages: 1, Size: 1024}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(empty))
	if len(entries) != 1 {
		t.Errorf("staging left behind: %v", entries)
	}
	if _, err := Generate(filepath.Join(t.TempDir(), "x"), Options{Packages: 0}); err == nil {
		t.Error("0 packages accepted")
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"1MB", 1 << 20, false},
		{"1mb", 1 << 20, false},
		{"512KiB", 512 << 10, false},
		{"2M", 2 << 20, false},
		{"0.5MB", 512 << 10, false},
		{"1048576", 1 << 20, false},
		{"100B", 100, false},
		{" 3 GB ", 3 << 30, false},
		{"", 0, true},
		{"MB", 0, true},
		{"-1MB", 0, true},
		{"1TB", 0, true},
		{"9999GB", 0, true},
	} {
		got, err := ParseSize(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, bad=%v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// Every package index, not just the few a tree test writes, declares
// contract v1beta1 for its own release series, has a unique release and
// label, and only index 0 is the core provider.
func TestSpecsAgreeForEveryIndex(t *testing.T) {
	releases, labels := map[string]int{}, map[string]int{}
	for i := 0; i < 2000; i++ {
		s := newSpec(i, Options{Namespace: DefaultNamespace, Size: 1})
		if (s.kind == "CoreProvider") != (i == 0) {
			t.Fatalf("index %d: kind %s", i, s.kind)
		}
		if j, dup := releases[s.release]; dup {
			t.Fatalf("index %d and %d share release %s", i, j, s.release)
		}
		if j, dup := labels[s.label]; dup {
			t.Fatalf("index %d and %d share label %s", i, j, s.label)
		}
		releases[s.release], labels[s.label] = i, i
		meta := metadata.Parse(s.metadata())
		if meta.Err != nil {
			t.Fatalf("index %d: metadata: %v", i, meta.Err)
		}
		found := false
		for _, rs := range meta.ReleaseSeries {
			if rs.Major == s.major && rs.Minor == s.minor {
				found = rs.Contract == "v1beta1"
			}
		}
		if !found {
			t.Fatalf("index %d: release %s has no v1beta1 series in %+v", i, s.release, meta.ReleaseSeries)
		}
	}
}

// TestGenerateRealShape: real-shaped packages ship their raw YAML in the
// chart (all but one in eight), spread their YAML sizes, carry second
// providers whose ConfigMaps render, and read a version from a Dockerfile;
// the monorepo adds charts that are not provider packages.
func TestGenerateRealShape(t *testing.T) {
	const size = 256 << 10
	root := filepath.Join(t.TempDir(), "tree")
	res, err := Generate(root, Options{Packages: 16, Size: size, Seed: 3, Shape: Real})
	if err != nil {
		t.Fatal(err)
	}
	shipped, seconds, dockerVersions := 0, 0, 0
	lo, hi := int64(1<<62), int64(0)
	for i, p := range res.Packages {
		dir := filepath.Join(root, filepath.FromSlash(p.Dir))
		ch, err := loader.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ch.Files {
			if f.Name == p.YAML {
				shipped++
			}
		}
		yml := readFile(t, filepath.Join(dir, p.YAML))
		lo, hi = min(lo, int64(len(yml))), max(hi, int64(len(yml)))
		out := render(t, dir)
		if p.Second != "" {
			seconds++
			cm := findRendered(t, out, "templates/configmaps-talos.yaml")
			if cm["metadata"].(map[string]any)["name"] != p.Second {
				t.Errorf("%s: second ConfigMap %v, want %s", p.Dir, cm["metadata"], p.Second)
			}
		}
		mk := string(readFile(t, filepath.Join(dir, "Makefile")))
		if strings.Contains(mk, "$(shell awk") {
			dockerVersions++
			df := readFile(t, filepath.Join(dir, "images", "cluster-api-"+strings.TrimSuffix(strings.TrimPrefix(p.YAML, "files/"), "-components.yaml")+"-provider-"+p.Name, "Dockerfile"))
			if !strings.Contains(string(df), "ARG VERSION="+p.Version+"\n") {
				t.Errorf("%s: Dockerfile lacks ARG VERSION=%s", p.Dir, p.Version)
			}
		}
		if i%8 == 3 && !strings.Contains(string(readFile(t, filepath.Join(dir, ".helmignore"))), "files/*-components.yaml") {
			t.Errorf("%s: want the one .helmignore in eight that lists the YAML", p.Dir)
		}
	}
	if shipped != 14 || seconds != 3 || dockerVersions != 5 {
		t.Errorf("raw YAML shipped by %d packages (want 14 of 16), %d second providers (want 3), %d versions from a Dockerfile (want 5)", shipped, seconds, dockerVersions)
	}
	if lo > size*6/10 || hi < size*9/10 {
		t.Errorf("YAML sizes %d–%d: want them spread over about 0.46–0.98 × %d", lo, hi, size)
	}

	mono := filepath.Join(t.TempDir(), "mono")
	res, err = Generate(mono, Options{Packages: 4, Size: 32 << 10, Seed: 3, Shape: Monorepo, Others: 20})
	if err != nil {
		t.Fatal(err)
	}
	charts := 0
	_ = filepath.WalkDir(mono, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "Chart.yaml" && !strings.Contains(path, "/charts/") {
			charts++
		}
		return nil
	})
	if res.Others != 20 || charts != 24 {
		t.Errorf("monorepo: %d others, %d top-level charts; want 20 and 24", res.Others, charts)
	}
}
