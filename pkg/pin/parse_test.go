package pin

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixture is a pin file under testdata/pins with the expectations written
// in its leading comments:
//
//	# want: <field path>     a *FieldError for exactly this field
//	# want-text: <text>      the error mentions text
//	# schema: pass           the JSON schema cannot see the problem
type fixture struct {
	path       string
	data       []byte
	wantFields []string
	wantTexts  []string
	schemaPass bool
}

func loadFixtures(t *testing.T, dir string) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "pins", dir, "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in testdata/pins/%s: %v", dir, err)
	}
	var out []fixture
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fx := fixture{path: p, data: data}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "#") {
				break
			}
			line = strings.TrimSpace(strings.TrimPrefix(line, "#"))
			switch {
			case strings.HasPrefix(line, "want: "):
				fx.wantFields = append(fx.wantFields, strings.TrimPrefix(line, "want: "))
			case strings.HasPrefix(line, "want-text: "):
				fx.wantTexts = append(fx.wantTexts, strings.TrimPrefix(line, "want-text: "))
			case line == "schema: pass":
				fx.schemaPass = true
			}
		}
		out = append(out, fx)
	}
	return out
}

func TestParseGoodFixtures(t *testing.T) {
	for _, fx := range loadFixtures(t, "good") {
		t.Run(filepath.Base(fx.path), func(t *testing.T) {
			f, err := Parse(fx.data, fx.path)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(f.Providers) == 0 {
				t.Fatal("no providers decoded")
			}
			for _, p := range f.Providers {
				if p.Kind == "" || p.Name == "" || p.Version == "" || p.Release == "" || len(p.Sources) == 0 {
					t.Errorf("provider decoded incompletely: %+v", p)
				}
			}
			if err := f.Validate(fx.path); err != nil {
				t.Errorf("Validate after Parse: %v", err)
			}
		})
	}
}

func TestParseBadFixtures(t *testing.T) {
	for _, fx := range loadFixtures(t, "bad") {
		t.Run(filepath.Base(fx.path), func(t *testing.T) {
			if len(fx.wantFields)+len(fx.wantTexts) == 0 {
				t.Fatal("fixture states no expectation (# want: …)")
			}
			f, err := Parse(fx.data, fx.path)
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", f)
			}
			if f != nil {
				t.Errorf("Parse returned a File with an error")
			}
			msg := err.Error()
			fes := FieldErrors(err)
			if len(fes) == 0 {
				t.Fatalf("no *FieldError in %v", err)
			}
			for _, fe := range fes {
				if fe.File != fx.path {
					t.Errorf("error names file %q, want %q", fe.File, fx.path)
				}
				if fe.Fix == "" {
					t.Errorf("error says no fix: %v", fe)
				}
				if !strings.HasPrefix(fe.Error(), fx.path) {
					t.Errorf("message does not start with the file: %v", fe)
				}
			}
			for _, want := range fx.wantFields {
				i := slices.IndexFunc(fes, func(fe *FieldError) bool { return fe.Field == want })
				if i < 0 {
					t.Errorf("no error for field %s in:\n%v", want, msg)
					continue
				}
				if !strings.Contains(fes[i].Error(), ": "+want+": ") {
					t.Errorf("message does not name the field %s: %v", want, fes[i])
				}
			}
			for _, want := range fx.wantTexts {
				if !strings.Contains(msg, want) {
					t.Errorf("error does not mention %q:\n%v", want, msg)
				}
			}
		})
	}
}

const (
	shaA = "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
	shaB = "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d"
)

func TestParseReportsLinesAndEveryProblem(t *testing.T) {
	data := []byte(`providers:
- kind: InfraProvider
  name: proxmox
  version: v0.7.7
  release: v0.7.7-infraprovider-proxmox
  sources:
  - url: ftp://example.com/x.yaml
    sha256: ` + strings.ToUpper(shaA) + `
    to: ../x.yaml
    mirror: https://example.com
`)
	_, err := Parse(data, "pkg/pin.yaml")
	if err == nil {
		t.Fatal("accepted")
	}
	want := map[string]int{ // field -> line
		"providers[0].kind":              2,
		"providers[0].sources[0].url":    7,
		"providers[0].sources[0].sha256": 8,
		"providers[0].sources[0].to":     9,
		"providers[0].sources[0].mirror": 10,
	}
	got := map[string]int{}
	for _, fe := range FieldErrors(err) {
		got[fe.Field] = fe.Line
	}
	for f, l := range want {
		if gl, ok := got[f]; !ok {
			t.Errorf("no error for %s", f)
		} else if gl != l {
			t.Errorf("%s: line %d, want %d", f, gl, l)
		}
	}
	msg := err.Error()
	for _, s := range []string{
		`pkg/pin.yaml:2: providers[0].kind: "InfraProvider" is not a cluster-api-operator provider kind; did you mean "InfrastructureProvider"?`,
		"write it in lowercase: " + shaA,
		`pkg/pin.yaml:10: providers[0].sources[0].mirror: is not a known field`,
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("message lacks %q:\n%s", s, msg)
		}
	}
}

func TestParseDecodes(t *testing.T) {
	data := []byte(`providers:
- kind: CoreProvider
  name: cluster-api
  version: "v1.10.1"
  release: v1.10.1-core
  sources:
  - url: https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/core-components.yaml
    sha256: ` + shaA + `
    to: files/core-components.yaml
  - url: file:upstream/metadata.yaml
    sha256: ` + shaB + `
    to: files/metadata.yaml
  patches: [patches/0001-a.diff, patches/0002-b.diff]
  blob: files/components.gz
`)
	f, err := Parse(data, "pin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := File{Providers: []Provider{{
		Kind: "CoreProvider", Name: "cluster-api", Version: "v1.10.1", Release: "v1.10.1-core",
		Sources: []Source{
			{URL: "https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/core-components.yaml", SHA256: shaA, To: "files/core-components.yaml"},
			{URL: "file:upstream/metadata.yaml", SHA256: shaB, To: "files/metadata.yaml"},
		},
		Patches: []string{"patches/0001-a.diff", "patches/0002-b.diff"},
		Blob:    "files/components.gz",
	}}}
	if !slices.EqualFunc(f.Providers, want.Providers, func(a, b Provider) bool {
		return a.Kind == b.Kind && a.Name == b.Name && a.Version == b.Version && a.Release == b.Release &&
			slices.Equal(a.Sources, b.Sources) && slices.Equal(a.Patches, b.Patches) && a.Blob == b.Blob
	}) {
		t.Errorf("decoded\n%+v\nwant\n%+v", *f, want)
	}
}

func TestParseTooLarge(t *testing.T) {
	data := bytes.Repeat([]byte("#\n"), MaxFileSize)
	_, err := Parse(data, "big/pin.yaml")
	var fe *FieldError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "big/pin.yaml") {
		t.Fatalf("got %v", err)
	}
}

func TestValidateBuiltFile(t *testing.T) {
	var nilFile *File
	if err := nilFile.Validate("x"); err == nil || !strings.Contains(err.Error(), "x: providers: is missing") {
		t.Errorf("nil file: %v", err)
	}
	f := &File{Providers: []Provider{{Kind: "CoreProvider", Name: "cluster-api", Version: "v1.10.1", Release: "v1.10.1-core",
		Sources: []Source{{URL: "https://example.com/c.yaml", SHA256: shaA, To: "files/c.yaml"}}}}}
	if err := f.Validate("x"); err != nil {
		t.Errorf("valid file: %v", err)
	}
	f.Providers[0].Version = "1.10.1"
	err := f.Validate("x")
	if err == nil || !strings.Contains(err.Error(), `add the leading v: "v1.10.1"`) {
		t.Errorf("version without v: %v", err)
	}
	if fes := FieldErrors(err); len(fes) != 1 || fes[0].Line != 0 {
		t.Errorf("want one error without line, got %+v", fes)
	}
}

func TestReleaseVersion(t *testing.T) {
	for _, tc := range []struct{ release, want string }{
		{"v1.10.1-core", "v1.10.1"},
		{"v0.6.12-bootstrap-talos", "v0.6.12"},
		{"v0.19.0-cozystack.0", "v0.19.0"},
		{"v0.7.7-infraprovider-proxmox", "v0.7.7"},
		{"v1.10.1-bootstrap", "v1.10.1"},
		{"v0.7.7", "v0.7.7"},
		{"v1.0.0-rc.1-core", "v1.0.0-rc.1"},
		{"v1.0.0-rc.1", "v1.0.0-rc.1"},
		{"v1.0.0-beta2-ipam", "v1.0.0-beta2"},
		{"v1.0.0-alpha.1.2-x", "v1.0.0-alpha.1.2"},
		{"v2.0.0-RC1", "v2.0.0-RC1"},
		{"v1.2.3+k3s1", "v1.2.3"},
		{"1.2.3-core", "1.2.3"},
		{"v1.2.3x", ""},
		{"v1.2", ""},
		{"bogus", ""},
		{"", ""},
	} {
		if got := ReleaseVersion(tc.release); got != tc.want {
			t.Errorf("ReleaseVersion(%q) = %q, want %q", tc.release, got, tc.want)
		}
	}
}

func TestMatchesRelease(t *testing.T) {
	for _, tc := range []struct {
		version, release string
		want             bool
	}{
		{"v0.19.0", "v0.19.0-cozystack.0", true},
		{"v1.10.1", "v1.10.1-core", true},
		{"v0.6.12", "v0.6.12-bootstrap-talos", true},
		{"v0.7.7", "v0.7.7", true},
		{"v1.0.0-rc.1", "v1.0.0-rc.1-core", true},
		{"v1.0.0-rc.1", "v1.0.0-rc.1", true},
		{"v0.19.0-cozystack.0", "v0.19.0-cozystack.0-infra", true},
		{"v1.0.0", "v1.0.0-rc.1-core", false},
		{"v1.0.0", "v1.0.0-beta", false},
		{"v0.7.7", "v0.7.70-x", false},
		{"v0.7.7", "v0.7.8-x", false},
		{"v0.7.7", "v0.7.7-", false},
		{"v0.7.7", "v0.7.7x", false},
		{"", "v0.7.7", false},
		{"v0.7.7", "", false},
	} {
		if got := MatchesRelease(tc.version, tc.release); got != tc.want {
			t.Errorf("MatchesRelease(%q, %q) = %v, want %v", tc.version, tc.release, got, tc.want)
		}
	}
}

func TestCheckPath(t *testing.T) {
	for _, tc := range []struct {
		p  string
		ok bool
	}{
		{"files/components.yaml", true},
		{"a", true},
		{"..a/b", true},
		{".helmignore", true},
		{"files/...", true},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"files/../x", false},
		{"files/..", false},
		{"./x", false},
		{"/etc/passwd", false},
		{"files//x", false},
		{"files/", false},
		{`files\x`, false},
		{`..\x`, false},
		{"C:x", false},
		{"a:b", false},
		{"a\x00b", false},
		{"a\nb", false},
	} {
		err := CheckPath(tc.p)
		if (err == nil) != tc.ok {
			t.Errorf("CheckPath(%q) = %v, want ok=%v", tc.p, err, tc.ok)
		}
		if pathRE().MatchString(tc.p) != tc.ok {
			t.Errorf("PathPattern on %q = %v, want %v", tc.p, !tc.ok, tc.ok)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		u  string
		ok bool
	}{
		{"https://github.com/o/r/releases/download/v1.0.0/c.yaml", true},
		{"http://127.0.0.1:8080/x.yaml", true},
		{"https://[::1]:8443/x.yaml", true},
		{"https://example.com", true},
		{"https://example.com?x=1#y", true},
		{"file:///srv/x.yaml", true},
		{"file:/srv/x.yaml", true},
		{"file:upstream/x.yaml", true},
		{"", false},
		{"ftp://example.com/x", false},
		{"HTTPS://example.com/x", false},
		{"https://", false},
		{"https:///x", false},
		{"https://:80/x", false},
		{"https://u:p@example.com/x", false},
		{"https://u@example.com/x", false},
		{"https://example.com/a@b", true},
		{"https://example.com/a b", false},
		{"https://example.com/a\tb", false},
		{"https://[::1/x", false},
		{"file:", false},
		{"file://host/x", false},
		{"file:///", false},
		{"example.com/x", false},
	} {
		if err := CheckURL(tc.u); (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", tc.u, err, tc.ok)
		}
	}
}

func TestCheckURLRedactsCredentials(t *testing.T) {
	err := CheckURL("https://user:s3cret@example.com/x.yaml")
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "user info") {
		t.Errorf("got %v", err)
	}
}

func TestSuggest(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"sha265", "sha256"},
		{"Kind", "kind"},
		{"URL", "url"},
		{"relase", "release"},
		{"mirror", ""},
	} {
		if got := suggest(tc.in, append(append([]string{}, providerFields...), sourceFields...)); got != tc.want {
			t.Errorf("suggest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestYAMLErrorLine(t *testing.T) {
	for _, tc := range []struct {
		in      string
		line    int
		wantMsg string
	}{
		{"yaml: line 7: mapping values are not allowed in this context", 7, "mapping values are not allowed in this context"},
		{"yaml: line 12: did not find expected key", 12, "did not find expected key"},
		{"yaml: control characters are not allowed", 0, "yaml: control characters are not allowed"},
		{"line 3: not from yaml", 0, "line 3: not from yaml"},
	} {
		line, msg := YAMLErrorLine(errors.New(tc.in))
		if line != tc.line || msg != tc.wantMsg {
			t.Errorf("YAMLErrorLine(%q) = %d, %q; want %d, %q", tc.in, line, msg, tc.line, tc.wantMsg)
		}
	}
}
