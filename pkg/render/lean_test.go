package render

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"io"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// leanChart is a chart whose templates are name: text.
func leanChart(templates map[string]string) Chart {
	files := []*loader.BufferedFile{{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: lean\nversion: 0.1.0\n")}}
	for name, text := range templates {
		files = append(files, &loader.BufferedFile{Name: "templates/" + name, Data: []byte(text)})
	}
	return Chart{Files: files, Namespace: "default", Limits: testLimits, Lean: true}
}

// TestRenderLean: a chart rendered for a Lean request comes back Empty,
// without its text, only when the loader would find nothing in it; a
// kept document or a problem in a dropped one sends the text as without
// Lean, and without Lean nothing changes.
func TestRenderLean(t *testing.T) {
	const deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n---\n# only a comment\n"
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  a: b\n"
	s := New(nil)
	defer s.Close()
	for _, tc := range []struct {
		name      string
		templates map[string]string
		lean      bool
		empty     bool
	}{
		{"nothing kept", map[string]string{"d.yaml": deploy, "c.yaml": cm, "NOTES.txt": "hello"}, true, true},
		{"nothing kept, not lean", map[string]string{"d.yaml": deploy}, false, false},
		{"nothing rendered", map[string]string{"d.yaml": "{{ if false }}x: y{{ end }}\n"}, true, true},
		{"a provider", map[string]string{"d.yaml": deploy, "p.yaml": "apiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: CoreProvider\nmetadata:\n  name: cluster-api\nspec:\n  version: v1.10.1\n"}, true, false},
		{"a components ConfigMap", map[string]string{"c.yaml": cm + "  components: x\n"}, true, false},
		{"a dropped document that does not parse", map[string]string{"d.yaml": deploy, "bad.yaml": "kind: [\n"}, true, false},
		{"a duplicate key", map[string]string{"d.yaml": "kind: A\nkind: B\n"}, true, false},
		{"a scalar document", map[string]string{"d.yaml": "just text\n"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := leanChart(tc.templates)
			c.Lean = tc.lean
			r, prob := s.Render(context.Background(), c)
			if prob != nil || r.Err != nil {
				t.Fatalf("render: %+v %v", prob, r.Err)
			}
			if r.Empty != tc.empty {
				t.Fatalf("Empty = %v, want %v (rendered %q, problems %v)", r.Empty, tc.empty, r.Rendered, r.DocProbs)
			}
			if r.Empty && (r.Rendered != nil || r.Parse != nil) {
				t.Fatalf("an Empty answer carries text: %q", r.Rendered)
			}
			if !r.Empty && len(r.Rendered) == 0 {
				t.Fatal("no text")
			}
		})
	}
	// A failing chart says so, Lean or not.
	r, prob := s.Render(context.Background(), leanChart(map[string]string{"d.yaml": `{{ required "x is required" .Values.x }}`}))
	if prob != nil || r.Err == nil || !strings.Contains(r.Err.Error(), "x is required") || r.Empty {
		t.Fatalf("failing chart: %+v %v %v", prob, r.Err, r.Empty)
	}
}

// TestRequestWire: requests cross the pipe with their files raw after
// the gob header; the child's buffer is reused for small requests and
// dropped after large ones, and every file reads back as sent (an empty
// one as nil, as gob gives it).
func TestRequestWire(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), keepRequestBuffer/16+1)
	reqs := []renderRequest{
		{Seq: 1, Release: "a", Files: []renderFile{{Name: "Chart.yaml", Data: []byte("name: a\n")}, {Name: "empty"}, {Name: "t", Data: []byte("x")}}},
		{Seq: 2, Release: "b", Files: []renderFile{{Name: "one", Data: []byte("yy")}}},
		{Seq: 3, Files: []renderFile{{Name: "big", Data: big}, {Name: "after", Data: []byte("z")}}},
		{Seq: 4, Parse: true},
		{Seq: 5, Files: []renderFile{{Name: "small", Data: []byte("small")}}},
	}
	pr, pw := io.Pipe()
	go func() {
		enc := gob.NewEncoder(pw)
		for _, req := range reqs {
			if err := sendRequest(pw, enc, req); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.Close()
	}()
	in := bufio.NewReader(pr)
	dec := gob.NewDecoder(in)
	var keep []byte
	for i, want := range reqs {
		var got renderRequest
		var err error
		if keep, err = recvRequest(in, dec, &got, keep); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if got.Seq != want.Seq || got.Release != want.Release || got.Parse != want.Parse || len(got.Files) != len(want.Files) {
			t.Fatalf("request %d: got %+v", i, got)
		}
		for j, f := range got.Files {
			w := want.Files[j]
			if f.Name != w.Name || !bytes.Equal(f.Data, w.Data) || (w.Data == nil) != (f.Data == nil) || cap(f.Data) != len(f.Data) {
				t.Fatalf("request %d file %d: got %q (%d bytes, cap %d), want %q (%d bytes)", i, j, f.Name, len(f.Data), cap(f.Data), w.Name, len(w.Data))
			}
		}
		if got.Seq == 3 && keep != nil {
			t.Fatalf("a %d-byte buffer kept", cap(keep))
		}
		if got.Seq == 2 && keep == nil {
			t.Fatal("a small buffer not kept")
		}
	}
	var end renderRequest
	if _, err := recvRequest(in, dec, &end, keep); err != io.EOF {
		t.Fatalf("after the last request: %v, want EOF", err)
	}
}
