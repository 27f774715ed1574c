package bump

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/patch"
	"github.com/pinseal/pinseal/pkg/pin"
)

func TestReplaceTokens(t *testing.T) {
	for _, tc := range []struct{ s, old, new, want string }{
		{"CAPMOX_VERSION=v0.7.7", "v0.7.7", "v0.7.8", "CAPMOX_VERSION=v0.7.8"},
		{"https://x/releases/download/v0.7.7/a.yaml", "v0.7.7", "v0.7.8", "https://x/releases/download/v0.7.8/a.yaml"},
		{"image: x:v0.7.70", "v0.7.7", "v0.7.8", "image: x:v0.7.70"},
		{"xv0.7.7", "v0.7.7", "v0.7.8", "xv0.7.7"},
		{"v0.7.7-infraprovider-proxmox", "v0.7.7", "v0.7.8", "v0.7.7-infraprovider-proxmox"},
		{"name: v0.1.9-cozystack.0\n", "v0.1.9-cozystack.0", "v0.1.10-cozystack.0", "name: v0.1.10-cozystack.0\n"},
		{"name: v0.1.9-cozystack.01", "v0.1.9-cozystack.0", "v0.1.10-cozystack.0", "name: v0.1.9-cozystack.01"},
		{`"v1.10.1-core"`, "v1.10.1-core", "v1.11.0-core", `"v1.11.0-core"`},
		{"see v0.7.7. and v0.7.7", "v0.7.7", "v0.7.8", "see v0.7.8. and v0.7.8"},
	} {
		if got := replaceTokens(tc.s, tc.old, tc.new); got != tc.want {
			t.Errorf("replaceTokens(%q, %q) = %q, want %q", tc.s, tc.old, got, tc.want)
		}
	}
}

const pinYAML = `# pins
providers:
- kind: InfrastructureProvider   # the provider
  name: proxmox
  version: "v0.7.7"   # quoted
  release: 'v0.7.7-infraprovider-proxmox'
  sources:
  - url: https://github.com/a/b/releases/download/v0.7.7/infrastructure-components.yaml
    sha256: a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1
    to: files/infrastructure-components.yaml
  blob: files/components.gz
`

func TestEditPinFileKeepsFormatting(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pin.yaml"), []byte(pinYAML), 0o644)
	f, err := pin.Parse([]byte(pinYAML), "pin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	from := f.Providers[0]
	to := from
	to.Version, to.Release = "v0.7.8", "v0.7.8-infraprovider-proxmox"
	to.Sources = []pin.Source{{URL: strings.ReplaceAll(from.Sources[0].URL, "v0.7.7", "v0.7.8"), SHA256: strings.Repeat("b2", 32), To: from.Sources[0].To}}
	e := &editSet{dir: dir, files: map[string]*textFile{}}
	if err := e.editPinFile(0, &from, &to); err != nil {
		t.Fatal(err)
	}
	got := string(e.files["pin.yaml"].bytes())
	want := strings.NewReplacer(`"v0.7.7"`, `"v0.7.8"`, `'v0.7.7-infraprovider-proxmox'`, `'v0.7.8-infraprovider-proxmox'`,
		"download/v0.7.7/", "download/v0.7.8/", strings.Repeat("a1", 32), strings.Repeat("b2", 32)).Replace(pinYAML)
	if got != want {
		t.Errorf("edited pin.yaml:\n%s\nwant:\n%s", got, want)
	}
}

func TestEditPinFileRefusesEscapes(t *testing.T) {
	dir := t.TempDir()
	y := strings.Replace(pinYAML, `version: "v0.7.7"`, `version: "v0.7.\x37"`, 1)
	y = strings.Replace(y, `"v0.7.\x37"`, `"v0.7.\u0037"`, 1)
	os.WriteFile(filepath.Join(dir, "pin.yaml"), []byte(y), 0o644)
	f, err := pin.Parse([]byte(y), "pin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	from := f.Providers[0]
	to := from
	to.Version = "v0.7.8"
	e := &editSet{dir: dir, files: map[string]*textFile{}}
	if err := e.editPinFile(0, &from, &to); err == nil || !strings.Contains(err.Error(), "plain scalar") {
		t.Errorf("err = %v, want a refusal to rewrite an escaped value", err)
	}
}

func TestEditVersionVars(t *testing.T) {
	dir := t.TempDir()
	mk := "# Keep in lockstep: CABPT_UPSTREAM_VERSION = v0.6.12\nCABPT_UPSTREAM_VERSION = v0.6.12 # pinned\nOTHER_VERSION = v0.6.12x\nexport CAPI_VERSION ?= v0.6.12\nGO_VERSION = 1.22\n"
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
	os.MkdirAll(filepath.Join(dir, "images", "capk"), 0o755)
	os.WriteFile(filepath.Join(dir, "images", "capk", "Dockerfile"), []byte("ARG VERSION=v0.6.12\nRUN echo v0.6.12\n"), 0o644)
	e := &editSet{dir: dir, files: map[string]*textFile{}}
	if err := e.editVersionVars(nil, "v0.6.12", "v0.6.13"); err != nil {
		t.Fatal(err)
	}
	wantMk := "# Keep in lockstep: CABPT_UPSTREAM_VERSION = v0.6.12\nCABPT_UPSTREAM_VERSION = v0.6.13 # pinned\nOTHER_VERSION = v0.6.12x\nexport CAPI_VERSION ?= v0.6.13\nGO_VERSION = 1.22\n"
	if got := string(e.files["Makefile"].bytes()); got != wantMk {
		t.Errorf("Makefile:\n%s\nwant:\n%s", got, wantMk)
	}
	if got := string(e.files["images/capk/Dockerfile"].bytes()); got != "ARG VERSION=v0.6.13\nRUN echo v0.6.12\n" {
		t.Errorf("Dockerfile:\n%s", got)
	}
}

// TestUnifiedDiffApplies: the diff bump prints applies (internal/patch) to the
// old text and gives the new one.
func TestUnifiedDiffApplies(t *testing.T) {
	for _, tc := range [][2]string{
		{"a\nb\nc\n", "a\nB\nc\n"},
		{"", "new\n"},
		{"old\n", ""},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\n2x\n3\n4\n5\n6\n7\n8\n9\n10\n11x\n12\n"},
		{"a\nb", "a\nc"},
		{strings.Repeat("x\n", 5000) + "v1\n" + strings.Repeat("y\n", 5000), strings.Repeat("x\n", 5000) + "v2\n" + strings.Repeat("y\n", 5000)},
		{"a\na\na\n", "a\na\n"},
	} {
		checkDiffApplies(t, tc[0], tc[1])
	}
}

func checkDiffApplies(t *testing.T, a, b string) {
	t.Helper()
	d := unifiedDiff("f.txt", []byte(a), []byte(b))
	if a == b {
		if d != "" {
			t.Fatalf("diff of equal texts: %q", d)
		}
		return
	}
	p, err := patch.Parse("x.diff", []byte(d))
	if err != nil {
		t.Fatalf("diff %q does not parse: %v", d, err)
	}
	got, _, err := p.Files[0].Apply([]byte(a))
	if err != nil {
		t.Fatalf("diff %q does not apply to %q: %v", d, a, err)
	}
	if string(got) != b {
		t.Fatalf("diff %q applied to %q gives %q, want %q", d, a, got, b)
	}
}

func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("x", "y\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 500 || len(b) > 500 || strings.ContainsAny(a+b, "\r") {
			return
		}
		checkDiffApplies(t, a, b)
	})
}

func TestParseChecksums(t *testing.T) {
	h1, h2, h3 := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	got, err := ParseChecksums([]byte(h1 + "  infrastructure-components.yaml\n" + strings.ToUpper(h2) + " *dist/metadata.yaml\nSHA256 (cluster-template.yaml) = " + h3 + "\nMD5 (x) = 00\n# comment\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"infrastructure-components.yaml": h1, "metadata.yaml": h2, "cluster-template.yaml": h3}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if _, err := ParseChecksums([]byte("<html>not found</html>")); err == nil {
		t.Error("an HTML page parsed as a checksums file")
	}
}

func FuzzParseChecksums(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 64) + "  x.yaml\n"))
	f.Add([]byte("SHA256 (x) = " + strings.Repeat("b", 64)))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseChecksums(data)
		if err != nil {
			return
		}
		for k, v := range m {
			if !pin.ValidSHA256(v) || k == "" || strings.Contains(k, "/") {
				t.Fatalf("entry %q=%q", k, v)
			}
		}
	})
}
