package load

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/pkg/model"
)

// mapJudge is a CRDJudge that remembers in memory and counts.
type mapJudge struct {
	t                *testing.T
	mu               sync.Mutex
	m                map[[32]byte]model.AppliedObject
	judged, recalled int
}

func (j *mapJudge) Recall(sum [32]byte) (model.AppliedObject, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	o, ok := j.m[sum]
	if ok {
		j.recalled++
	}
	return o, ok
}

func (j *mapJudge) Judge(sum [32]byte, o model.AppliedObject, crd []byte) *model.CRDVerdict {
	var v map[string]any
	if json.Unmarshal(crd, &v) != nil || v["kind"] != "CustomResourceDefinition" {
		j.t.Errorf("%s: CRD JSON %q", o.Name, crd)
	}
	name, _ := v["metadata"].(map[string]any)["name"].(string)
	o.CRD = &model.CRDVerdict{Decoded: true, Kinds: []string{name}}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.judged++
	j.m[sum] = o
	return o.CRD
}

// TestApplied: each release's objects are listed once, from the vendored
// YAML when the blob inflates to exactly it, else from the blob; CRDs
// are judged from their JSON, and a CRD the judge remembers is listed as
// it was when parsed.
func TestApplied(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "packages", "capi-providers-core")
	judge := &mapJudge{t: t, m: map[[32]byte]model.AppliedObject{}}
	p, err := Package(context.Background(), dir, Options{CRDs: judge})
	if err != nil {
		t.Fatal(err)
	}
	count := func(p *model.Package) (objs, crds int, file string, inBlob bool) {
		for _, o := range p.Applied {
			objs++
			file, inBlob = o.File, o.InBlob
			if o.Kind == "CustomResourceDefinition" {
				if o.CRD == nil || len(o.CRD.Kinds) != 1 || o.CRD.Kinds[0] != o.Name {
					t.Errorf("%s: verdict %+v", o.Name, o.CRD)
				}
				crds++
			}
			if o.Release != "v1.10.1-core" || len(o.Providers) != 1 || o.Line == 0 {
				t.Errorf("object %+v", o)
			}
		}
		return
	}
	objs, crds, file, inBlob := count(p)
	if crds != 6 || objs < 12 || file != "files/core-components.yaml" || inBlob || judge.judged != 6 {
		t.Fatalf("%d objects, %d CRDs (%d judged) from %s (in blob %v), want 6 CRDs of the YAML", objs, crds, judge.judged, file, inBlob)
	}
	again, err := Package(context.Background(), dir, Options{CRDs: judge})
	if err != nil {
		t.Fatal(err)
	}
	if judge.recalled != 6 || judge.judged != 6 || !reflect.DeepEqual(again.Applied, p.Applied) {
		t.Fatalf("loaded again: %d CRDs recalled, %d judged in all; the same objects: %v", judge.recalled, judge.judged, reflect.DeepEqual(again.Applied, p.Applied))
	}
	unjudged, err := Package(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(unjudged.Applied) != len(p.Applied) {
		t.Fatalf("with no judge, %d objects, want %d", len(unjudged.Applied), len(p.Applied))
	}
	for i, o := range unjudged.Applied {
		o.CRD = p.Applied[i].CRD
		if !reflect.DeepEqual(o, p.Applied[i]) {
			t.Fatalf("with no judge, object %d is %+v, want %+v", i, o, p.Applied[i])
		}
	}

	// The YAML edited: the blob (what the cluster gets) is read instead.
	cp := t.TempDir()
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cp, "files", "core-components.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := Package(context.Background(), cp, Options{CRDs: judge})
	if err != nil {
		t.Fatal(err)
	}
	objs2, crds2, file, inBlob := count(q)
	if objs2 != objs || crds2 != 6 || file != "files/components.gz" || !inBlob {
		t.Fatalf("%d objects, %d CRDs from %s (in blob %v), want %d objects of the blob", objs2, crds2, file, inBlob, objs)
	}
}

// TestAppliedRecalled: on the fixture tree, the examples and a
// cozystack-shaped bench tree, the objects listed from what the judge
// remembers (their CRDs not parsed) are the objects listed from the parse,
// and a load with no judge lists the same objects, unjudged.
func TestAppliedRecalled(t *testing.T) {
	bench := filepath.Join(t.TempDir(), "bench")
	if _, err := gentree.Generate(bench, gentree.Options{Packages: 4, Shape: gentree.Cozystack, Size: 256 << 10, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{fixture.Root(), filepath.Join("..", "..", "examples", "packages"), bench} {
		judge := &mapJudge{t: t, m: map[[32]byte]model.AppliedObject{}}
		load := func(j CRDJudge) [][]model.AppliedObject {
			tree, err := Tree(context.Background(), root, Options{CRDs: j, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			var out [][]model.AppliedObject
			for _, p := range tree.Packages {
				out = append(out, p.Applied)
			}
			return out
		}
		parsed := load(judge)
		judged := judge.judged
		recalled := load(judge)
		if judged == 0 || judge.recalled != judged || judge.judged != judged {
			t.Fatalf("%s: %d CRDs judged, then %d recalled and %d judged again", root, judged, judge.recalled, judge.judged-judged)
		}
		if !reflect.DeepEqual(recalled, parsed) {
			t.Fatalf("%s: the objects recalled differ from the objects parsed", root)
		}
		for _, objs := range parsed {
			for i := range objs {
				objs[i].CRD = nil
			}
		}
		if unjudged := load(nil); !reflect.DeepEqual(unjudged, parsed) {
			t.Fatalf("%s: the objects of a load with no judge differ", root)
		}
	}
}

// jsonJudge is a CRDJudge that keeps the JSON it is given.
type jsonJudge struct {
	mu   sync.Mutex
	objs []model.AppliedObject
	js   [][]byte
}

func (j *jsonJudge) Recall([32]byte) (model.AppliedObject, bool) { return model.AppliedObject{}, false }

func (j *jsonJudge) Judge(_ [32]byte, o model.AppliedObject, crd []byte) *model.CRDVerdict {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.objs, j.js = append(j.objs, o), append(j.js, bytes.Clone(crd))
	return &model.CRDVerdict{Decoded: true}
}

// TestAppliedObjectCRDJSON: a document that may be a CRD is listed and
// judged the same whether its JSON is written from its bytes or, when
// manifest.AppendDocJSON declines it, from its parsed tree: the judge gets
// the JSON of the tree, and the object its identity and lines.
func TestAppliedObjectCRDJSON(t *testing.T) {
	const crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: as.x.io\n"
	text := "kind: ConfigMap\n---\n" +
		crd + "spec:\n  group: x.io\n  versions:\n  - name: v1\n    served: true\n    description: folded\n      text\n" + // read from its bytes
		"---\n" + crd + "spec: &s\n  group: x.io\nother: *s\n" + // an anchor: parsed
		"---\n" + crd + "spec: {a: 1}\n" + // a flow mapping: parsed
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  x: |\n    kind: CustomResourceDefinition\n" + // not a CRD
		"---\n" + crd + "metadata: {}\n" + // a duplicate key: not listed
		"---\nkind:\n  x: 1\nkind: CustomResourceDefinition\n" // a duplicate key: not listed
	docs := manifest.SplitDocs([]byte(text))
	var read int
	for _, d := range docs {
		if _, _, ok := manifest.AppendDocJSON(nil, d); ok {
			read++
		}
	}
	if read != 3 {
		t.Fatalf("AppendDocJSON reads %d documents, want 3 (the test no longer tests both ways)", read)
	}
	judge := &jsonJudge{}
	l := &scanner{opts: Options{CRDs: judge}}
	var got, want []model.AppliedObject
	var wantJS [][]byte
	for _, d := range docs {
		if a, ok := l.appliedObject(d, "f.yaml"); ok {
			a.CRD = nil
			got = append(got, a)
		}
		o, _ := manifest.ParseDoc(d, "f.yaml")
		if o == nil || o.Kind == "" {
			continue
		}
		a := model.AppliedObject{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, Namespace: o.Namespace}
		a.Line = o.Line
		want = append(want, a)
		if o.Kind == "CustomResourceDefinition" {
			wantJS = append(wantJS, manifest.JSON(o.Root))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n%+v\nwant\n%+v", got, want)
	}
	if len(judge.js) != 3 || !reflect.DeepEqual(judge.js, wantJS) {
		t.Fatalf("judged %d CRDs:\n%s\nwant the JSON of their trees:\n%s", len(judge.js), bytes.Join(judge.js, []byte("\n")), bytes.Join(wantJS, []byte("\n")))
	}
	for i, o := range judge.objs {
		if o.Name != "as.x.io" || o.Line != 3 {
			t.Errorf("CRD %d judged as %+v, want its name and its line within the document", i, o)
		}
	}
}
