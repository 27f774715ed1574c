package pin

import (
	"reflect"
	"testing"

	yaml "go.yaml.in/yaml/v3"
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
