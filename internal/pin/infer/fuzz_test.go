package infer

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pinseal/pinseal/pkg/pin"
)

// FuzzMakefile: the Makefile, Dockerfile and shell script readers never panic or hang,
// and what they report is well formed. Seeds: testdata/fuzz/FuzzMakefile.
func FuzzMakefile(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{
			"inc.mk": &fstest.MapFile{Data: []byte("INC_VERSION = v1.0.0\nINC_URL = https://example.com/$(INC_VERSION)/c.yaml\n")},
			// The fuzzed file may include itself.
			"Makefile": &fstest.MapFile{Data: data},
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		mk := readMakefile(fsys, "Makefile", data)
		file, versions, unpinned := mk.pins()
		for _, v := range append(append([]pin.Var(nil), versions...), unpinned...) {
			if v.File != "Makefile" && v.File != "inc.mk" {
				t.Fatalf("var from %q", v.File)
			}
			if v.File == "Makefile" && (v.Line < 1 || v.Line > lines) {
				t.Fatalf("line %d of %d: %+v", v.Line, lines, v)
			}
			if v.Known && strings.Contains(v.Value, "$") {
				t.Fatalf("known value with a reference: %+v", v)
			}
		}
		for _, u := range unpinned {
			if u.Known && !isHTTPURL(u.Value) {
				t.Fatalf("unpinned %+v is not a URL", u)
			}
		}
		if file != nil {
			for _, p := range file.Providers {
				for _, s := range p.Sources {
					if !pin.ValidSHA256(s.SHA256) {
						t.Fatalf("source with a bad digest: %+v", s)
					}
					if s.To != "" && pin.CheckPath(s.To) != nil {
						t.Fatalf("source writes outside: %+v", s)
					}
				}
			}
		}

		dv, du := readDockerfile("Dockerfile", data)
		for _, v := range append(dv, du...) {
			if v.Line < 1 || v.Line > lines {
				t.Fatalf("Dockerfile line %d of %d: %+v", v.Line, lines, v)
			}
			if v.Known && strings.Contains(v.Value, "$") {
				t.Fatalf("known Dockerfile value with a reference: %+v", v)
			}
		}
		for _, f := range ScriptFetches("x.sh", data) {
			if f.File != "x.sh" || f.Line < 1 || f.Line > lines || f.Value == "" || f.Command == "" {
				t.Fatalf("script fetch %+v of %d lines", f, lines)
			}
		}
		for _, d := range findDownloads(string(data)) {
			if d.To != "" && pin.CheckPath(d.To) != nil {
				t.Fatalf("download writes outside: %+v", d)
			}
		}
	})
}
