package pin

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/yaml"
)

// FuzzParse: Parse never panics; what it accepts validates, survives a
// round trip through YAML unchanged, and every rejection is a *FieldError
// naming the file. Seeds: testdata/fuzz/FuzzParse (the pin fixtures).
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz/pin.yaml"
		file, err := Parse(data, name)
		if err != nil {
			if file != nil {
				t.Fatal("a File with an error")
			}
			fes := FieldErrors(err)
			if len(fes) == 0 {
				t.Fatalf("error without a *FieldError: %v", err)
			}
			for _, fe := range fes {
				if fe.File != name || fe.Problem == "" {
					t.Fatalf("incomplete error: %#v", fe)
				}
			}
			return
		}
		if err := file.Validate(name); err != nil {
			t.Fatalf("Parse accepted what Validate rejects: %v", err)
		}
		out, err := yaml.Marshal(file)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out, name)
		if err != nil {
			t.Fatalf("re-parsing the marshalled file: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(normalize(file), normalize(again)) {
			t.Fatalf("round trip changed the file:\n%+v\n%+v", file, again)
		}
	})
}

// normalize treats a nil and an empty patch list alike.
func normalize(f *File) *File {
	c := *f
	c.Providers = append([]Provider(nil), f.Providers...)
	for i := range c.Providers {
		if len(c.Providers[i].Patches) == 0 {
			c.Providers[i].Patches = nil
		}
	}
	return &c
}

// FuzzMakefile: the Makefile and Dockerfile readers never panic or hang,
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
		for _, v := range append(append([]Var(nil), versions...), unpinned...) {
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
					if !ValidSHA256(s.SHA256) {
						t.Fatalf("source with a bad digest: %+v", s)
					}
					if s.To != "" && CheckPath(s.To) != nil {
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
		for _, d := range findDownloads(string(data)) {
			if d.To != "" && CheckPath(d.To) != nil {
				t.Fatalf("download writes outside: %+v", d)
			}
		}
	})
}
