package pin

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

const schemaPath = "../../api/pin.schema.json"

// compileSchema compiles api/pin.schema.json (checked against the draft
// 2020-12 meta-schema on the way) at the given JSON pointer.
func compileSchema(t *testing.T, pointer string) *jsonschema.Schema {
	t.Helper()
	abs, err := filepath.Abs(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(abs + pointer)
	if err != nil {
		t.Fatalf("compiling %s%s: %v", schemaPath, pointer, err)
	}
	return sch
}

// TestSchemaMatchesGo checks that the schema's keywords are the Go
// validator's: same patterns, kinds, fields, required fields and limits.
func TestSchemaMatchesGo(t *testing.T) {
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	type prop struct {
		Enum      []string `json:"enum"`
		Pattern   string   `json:"pattern"`
		MaxLength int      `json:"maxLength"`
		MinItems  int      `json:"minItems"`
		Ref       string   `json:"$ref"`
	}
	type object struct {
		Required             []string        `json:"required"`
		AdditionalProperties *bool           `json:"additionalProperties"`
		Properties           map[string]prop `json:"properties"`
		Pattern              string          `json:"pattern"`
	}
	var s struct {
		Schema string `json:"$schema"`
		object
		Defs map[string]object `json:"$defs"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %q, want draft 2020-12", s.Schema)
	}
	keys := func(m map[string]prop) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	sorted := func(x []string) []string { x = slices.Clone(x); slices.Sort(x); return x }
	closed := func(name string, o object, fields, required []string) {
		if o.AdditionalProperties == nil || *o.AdditionalProperties {
			t.Errorf("%s: additionalProperties is not false", name)
		}
		if !slices.Equal(keys(o.Properties), sorted(fields)) {
			t.Errorf("%s: properties %v, Go fields %v", name, keys(o.Properties), sorted(fields))
		}
		if !slices.Equal(sorted(o.Required), sorted(required)) {
			t.Errorf("%s: required %v, want %v", name, o.Required, required)
		}
	}
	closed("file", s.object, fileFields, []string{"providers"})
	p, src := s.Defs["provider"], s.Defs["source"]
	closed("provider", p, providerFields, []string{"kind", "name", "version", "release", "sources"})
	closed("source", src, sourceFields, []string{"url", "sha256", "to"})
	closed("relocation", s.Defs["relocation"], relocateFields, []string{"from", "to"})
	if s.object.Properties["providers"].MinItems != 1 || p.Properties["sources"].MinItems != 1 {
		t.Error("providers and sources must have minItems 1")
	}
	if !slices.Equal(p.Properties["kind"].Enum, Kinds) {
		t.Errorf("kind enum %v, Go Kinds %v", p.Properties["kind"].Enum, Kinds)
	}
	for _, c := range []struct {
		where, got, want string
	}{
		{"provider.name", p.Properties["name"].Pattern, NamePattern},
		{"provider.version", p.Properties["version"].Pattern, VersionPattern},
		{"provider.release", p.Properties["release"].Pattern, ReleasePattern},
		{"source.sha256", src.Properties["sha256"].Pattern, SHA256Pattern},
		{"source.url", src.Properties["url"].Pattern, URLPattern},
		{"path", s.Defs["path"].Pattern, PathPattern},
		{"prefix", s.Defs["prefix"].Pattern, PrefixPattern},
	} {
		if c.got != c.want {
			t.Errorf("%s pattern\n schema %s\n Go     %s", c.where, c.got, c.want)
		}
	}
	if p.Properties["name"].MaxLength != NameMaxLength || p.Properties["release"].MaxLength != ReleaseMaxLength {
		t.Error("maxLength of name or release differs from Go")
	}
	for _, ref := range []string{src.Properties["to"].Ref, p.Properties["blob"].Ref} {
		if ref != "#/$defs/path" {
			t.Errorf("path field refers to %q, want #/$defs/path", ref)
		}
	}
}

// TestSchemaAgreesWithParse runs every fixture through both the schema and
// Parse. Good ones pass both; bad ones fail both, except those marked
// "# schema: pass", whose problem only the Go validator can see.
func TestSchemaAgreesWithParse(t *testing.T) {
	sch := compileSchema(t, "")
	check := func(data []byte) error {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return err
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
		if err != nil {
			return err
		}
		return sch.Validate(inst)
	}
	for _, fx := range loadFixtures(t, "good") {
		if err := check(fx.data); err != nil {
			t.Errorf("%s: schema rejects a good file: %v", fx.path, err)
		}
	}
	for _, fx := range loadFixtures(t, "bad") {
		err := check(fx.data)
		switch {
		case fx.schemaPass && err != nil:
			t.Errorf("%s: marked schema: pass but the schema rejects it: %v", fx.path, err)
		case !fx.schemaPass && err == nil:
			t.Errorf("%s: the schema accepts a file Parse rejects", fx.path)
		}
	}
}

// TestSchemaStringRules runs the path and URL tables of the Go checks
// through the schema's definitions.
func TestSchemaStringRules(t *testing.T) {
	path := compileSchema(t, "#/$defs/path")
	urlSch := compileSchema(t, "#/$defs/source/properties/url")
	for _, p := range []string{"files/components.yaml", ".helmignore", "..a", "files/...", "", ".", "..", "../x",
		"a/../b", "./x", "/x", "a//b", "a/", `a\b`, "C:x", "a\x00b"} {
		goOK := CheckPath(p) == nil
		schOK := path.Validate(p) == nil
		if goOK != schOK {
			t.Errorf("path %q: Go ok=%v, schema ok=%v", p, goOK, schOK)
		}
	}
	for _, c := range []struct {
		u string
		// schemaOnly: the schema's pattern admits it, url.Parse in Go does not.
		schemaOnly bool
	}{
		{u: "https://github.com/o/r/releases/download/v1.0.0/c.yaml"},
		{u: "http://127.0.0.1:8080/x.yaml"},
		{u: "file:///srv/x.yaml"},
		{u: "file:rel/x.yaml"},
		{u: "ftp://example.com/x"},
		{u: "HTTPS://example.com/x"},
		{u: "https:///x"},
		{u: "https://:80/x"},
		{u: "https://u:p@example.com/x"},
		{u: "https://example.com/a b"},
		{u: "file://host/x"},
		{u: "file:"},
		{u: "https://[::1/x", schemaOnly: true},
	} {
		goOK := CheckURL(c.u) == nil
		schOK := urlSch.Validate(c.u) == nil
		if c.schemaOnly {
			if goOK || !schOK {
				t.Errorf("url %q: want schema ok and Go not, got Go=%v schema=%v", c.u, goOK, schOK)
			}
			continue
		}
		if goOK != schOK {
			t.Errorf("url %q: Go ok=%v, schema ok=%v", c.u, goOK, schOK)
		}
	}
}
