package images

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestScanWorkloads(t *testing.T) {
	in := `# a CRD whose schema has an image property is not a workload
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  containers:
  - image: not/a-workload:latest
--- # Source: chart/templates/deploy.yaml
apiVersion: apps/v1
kind: Deployment # the controller
metadata:
  name: ctrl
spec:
  template:
    spec:
      initContainers:
      - name: init
        image: "example.com/init:v1"
      containers:
      - name: manager
        image: example.com/ctrl:main
      - name: sidecar
        image: 'example.com:5000/proxy'
---
{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds"},"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"example.com/agent@sha256:abcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcd"}]}}}}
...
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  template:
    spec:
      containers:
      - name: db
        image:
          broken: mapping
      - name: no-image
`
	got, err := Scan(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, f := range got {
		s = append(s, fmt.Sprintf("%d %s/%s %s %s %s", f.Line, f.Kind, f.Name, f.Field, f.Container, f.Ref))
	}
	want := []string{
		"19 Deployment/ctrl initContainers init example.com/init:v1",
		"22 Deployment/ctrl containers manager example.com/ctrl:main",
		"24 Deployment/ctrl containers sidecar example.com:5000/proxy",
		"26 DaemonSet/ds containers agent example.com/agent@sha256:abcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcd",
	}
	if strings.Join(s, "\n") != strings.Join(want, "\n") {
		t.Errorf("Scan =\n%s\nwant\n%s", strings.Join(s, "\n"), strings.Join(want, "\n"))
	}
}

// A workload document that does not parse is an error naming its line;
// the images of the other documents are still found.
func TestScanBadDocument(t *testing.T) {
	in := "kind: Pod\nmetadata: {name: a}\nspec:\n  containers: [\n---\nkind: Pod\nmetadata:\n  name: b\nspec:\n  containers:\n  - name: c\n    image: x:v1\n"
	got, err := Scan(strings.NewReader(in))
	if err == nil || !strings.Contains(err.Error(), "document at line 1") {
		t.Errorf("err = %v, want one naming line 1", err)
	}
	if len(got) != 1 || got[0].Ref != "x:v1" || got[0].Line != 12 {
		t.Errorf("got %+v", got)
	}
}

// A line longer than the read buffer (a base64 Secret) does not shift lines.
func TestScanLongLine(t *testing.T) {
	in := "kind: Secret\ndata:\n  x: " + strings.Repeat("A", 200<<10) + "\n---\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: x:v1\n"
	got, err := Scan(strings.NewReader(in))
	if err != nil || len(got) != 1 || got[0].Line != 11 {
		t.Errorf("got %+v, %v", got, err)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]Ref{
		"nginx":                              {Repository: "nginx"},
		"nginx:1.27":                         {Repository: "nginx", Tag: "1.27"},
		"registry:5000/a/b":                  {Repository: "registry:5000/a/b"},
		"registry:5000/a/b:v1@sha256:ab":     {Repository: "registry:5000/a/b", Tag: "v1", Digest: "sha256:ab"},
		"ghcr.io/x/y@sha256:cd":              {Repository: "ghcr.io/x/y", Digest: "sha256:cd"},
		"registry.k8s.io/cluster-api/c:main": {Repository: "registry.k8s.io/cluster-api/c", Tag: "main"},
	} {
		if got := Parse(in); got != want {
			t.Errorf("Parse(%q) = %+v, want %+v", in, got, want)
		}
	}
}

// TestScanBoundsDocument: a workload document over maxDoc (a flow list of
// one-character items, gigabytes as nodes at 16 MiB) is an error, not
// parsed; the workload documents around it are still read.
func TestScanBoundsDocument(t *testing.T) {
	small := "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: example.com/a:v1\n"
	big := "kind: Deployment\nspec:\n  x: [" + strings.Repeat("1,", maxDoc/2) + "1]\n"
	found, err := Scan(strings.NewReader(small + "---\n" + big + "---\n" + small))
	if err == nil || !strings.Contains(err.Error(), "was not read for images") {
		t.Errorf("err = %v, want the document over the bound named", err)
	}
	if len(found) != 2 {
		t.Errorf("found %d images, want the 2 of the documents within the bound: %+v", len(found), found)
	}
}

// TestScanDocumentMemory: the worst document within the bound (one-
// character flow items just under maxDoc) is parsed in under 64 MiB of
// allocation, the memory an untrusted request may cost the service.
func TestScanDocumentMemory(t *testing.T) {
	head := "kind: Deployment\nspec:\n  x: ["
	doc := head + strings.Repeat("1,", (maxDoc-len(head)-8)/2) + "1]\n"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := Scan(strings.NewReader(doc)); err != nil {
		t.Fatalf("a document within the bound: %v", err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("parsing a %d KiB document allocated %d MiB, want under 64", len(doc)>>10, got>>20)
	}
}

// TestScanKindWrittenOtherwise: a workload whose kind YAML resolves to a
// workload's name, though its line does not read as one (the value on the
// next line, tagged, anchored, escaped), is parsed and its image found; a
// kind written plainly that runs no container is still not parsed.
func TestScanKindWrittenOtherwise(t *testing.T) {
	body := "\nmetadata:\n  name: w\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: example.com/%s:v1\n"
	for name, kind := range map[string]string{
		"next line": "kind:\n  Deployment",
		"tagged":    "kind: !!str Deployment",
		"anchored":  "kind: &k DaemonSet",
		"escaped":   `kind: "Deploy\x6dent"`,
		"tab":       "kind: Deployment\t# the controller",
		// No line the scan reads as the kind: the document is parsed.
		"escaped key": `"\x6bind": Deployment`,
		"complex key": "? kind\n: Deployment",
	} {
		in := "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: apps/v1\n" + kind + fmt.Sprintf(body, strings.ReplaceAll(name, " ", "-"))
		found, err := ScanBytes([]byte(in))
		if err != nil || len(found) != 1 || found[0].Ref != "example.com/"+strings.ReplaceAll(name, " ", "-")+":v1" {
			t.Errorf("%s: found %+v, error %v", name, found, err)
		}
	}
	in := "apiVersion: v1\nkind: ConfigMap\ndata:\n  x: |\n    containers:\n    - image: not/an-image:v1\n" +
		"---\nkind: CustomResourceDefinition\nspec:\n  containers:\n  - image: not/an-image:v1\n"
	if found, err := ScanBytes([]byte(in)); err != nil || len(found) != 0 {
		t.Errorf("plain kinds that run no container: found %+v, error %v", found, err)
	}
	// A document with no kind line that does not parse is no workload
	// (the API server refuses it); one too large to parse is reported.
	if found, err := ScanBytes([]byte("kind: ConfigMap\n---\nfoo: [\n---\n" + deploy)); err != nil || len(found) != 1 {
		t.Errorf("a broken document without a kind: found %+v, error %v", found, err)
	}
	big := `"\x6bind": Deployment` + "\nmetadata: {name: w}\ndata:\n" + strings.Repeat("  k: "+strings.Repeat("x", 100)+"\n", maxDoc/100)
	if _, err := ScanBytes([]byte(big)); len(Oversized(err)) != 1 {
		t.Errorf("an oversize document without a kind line: error %v, want it reported unread", err)
	}
}
