package infer

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pinseal/pinseal/pkg/pin"
)

func TestFindDownloads(t *testing.T) {
	const u = "https://example.com/v1.0.0/c.yaml"
	for _, tc := range []struct {
		cmd  string
		want []download
	}{
		{"curl -sSL -o files/c.yaml " + u, []download{{u, "files/c.yaml"}}},
		{"curl -sSLo files/c.yaml " + u, []download{{u, "files/c.yaml"}}},
		{"curl -ofiles/c.yaml " + u, []download{{u, "files/c.yaml"}}},
		{"curl --output files/c.yaml " + u, []download{{u, "files/c.yaml"}}},
		{"curl --output=files/c.yaml '" + u + "'", []download{{u, "files/c.yaml"}}},
		{"curl -fsSL \"" + u + "\" > files/c.yaml", []download{{u, "files/c.yaml"}}},
		{"curl -fsSL " + u + " >files/c.yaml", []download{{u, "files/c.yaml"}}},
		{"curl -fsSL " + u + " | gzip > files/c.gz", []download{{u, ""}}},
		{"cd files && curl -LO " + u, []download{{u, "c.yaml"}}},
		{"/usr/bin/curl -H 'Accept: x' -o ./files/c.yaml " + u, []download{{u, "files/c.yaml"}}},
		{"curl -o /tmp/c.yaml " + u, []download{{u, ""}}},
		{"curl -o ../c.yaml " + u, []download{{u, ""}}},
		{"curl -o $(TMP)/c.yaml " + u, []download{{u, ""}}},
		{"wget -qO files/c.yaml " + u, []download{{u, "files/c.yaml"}}},
		{"wget -qO- " + u + " > files/c.yaml", []download{{u, "files/c.yaml"}}},
		{"wget --output-document=files/c.yaml " + u, []download{{u, "files/c.yaml"}}},
		{"wget -P files " + u, []download{{u, "files/c.yaml"}}},
		{"wget " + u, []download{{u, "c.yaml"}}},
		{"curl -sSL " + u + " " + u + "2", []download{{u, ""}, {u + "2", ""}}},
		{"curl -sSL https://h/$(shell cat v)/c.yaml -o files/c.yaml", []download{{"https://h/$(shell cat v)/c.yaml", "files/c.yaml"}}},
		{"echo " + u, nil},
		{"helm pull " + u, nil},
		{"curl --help", nil},
		{"true; curl " + u + " -o a.yaml && curl " + u + "2 -o b.yaml", []download{{u, "a.yaml"}, {u + "2", "b.yaml"}}},
	} {
		got := findDownloads(tc.cmd)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("findDownloads(%q)\n got  %+v\n want %+v", tc.cmd, got, tc.want)
		}
	}
}

func TestMakeExpand(t *testing.T) {
	mk := readMakefile(fstest.MapFS{}, "Makefile", []byte(strings.Join([]string{
		"A = a",
		"B = $(A)-${A}-$A",
		"C := $(B)",
		"A = z",               // B is recursive: sees z; C was expanded before
		"D = $(shell echo x)", // function
		"E = $(A:.o=.c)",      // substitution reference
		"F = $(NOPE)",         // undefined
		"G = $(G)",            // self-reference
		"H = $(I)",
		"I = $(H)", // cycle
		"J = $$(pwd)",
		"K = $(X_$(A))",
		"X_z = computed",
		"L = x$(",
		"M = $(D)/suffix",
		"N ?= first",
		"N ?= second",
		"O = o",
		"O += p",
		"P := $(F)",
		"Q = a # comment",
		`R = a \# not a comment`,
		"S = one \\",
		"    two",
	}, "\n")))
	for _, tc := range []struct {
		name  string
		want  string
		known bool
	}{
		{"A", "z", true},
		{"B", "z-z-z", true},
		{"C", "a-a-a", true},
		{"D", "$(shell echo x)", false},
		{"E", "$(A:.o=.c)", false},
		{"F", "$(NOPE)", false},
		{"G", "$(G)", false},
		{"H", "$(I)", false},
		{"J", "$(pwd)", true},
		{"K", "computed", true},
		{"L", "x$(", false},
		{"M", "$(D)/suffix", false},
		{"N", "first", true},
		{"O", "o p", true},
		{"P", "$(F)", false},
		{"Q", "a", true},
		{"R", `a \# not a comment`, true},
		{"S", "one two", true},
		{"CURDIR", ".", true},
	} {
		got, known := mk.value(tc.name)
		if got != tc.want || known != tc.known {
			t.Errorf("%s = %q (known %v), want %q (known %v)", tc.name, got, known, tc.want, tc.known)
		}
	}
}

// An expansion that doubles at every level stays bounded.
func TestMakeExpandBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("V0 = xxxxxxxxxxxxxxxx\n")
	for i := 1; i <= 40; i++ {
		b.WriteString("V" + itoa(i) + " = $(V" + itoa(i-1) + ")$(V" + itoa(i-1) + ")\n")
	}
	b.WriteString("BOMB_VERSION = $(V40)\n")
	b.WriteString("BROKEN_VERSION = $(W40)\n") // the same over an undefined base
	for i := 1; i <= 40; i++ {
		b.WriteString("W" + itoa(i) + " = $(W" + itoa(i-1) + ")$(W" + itoa(i-1) + ")\n")
	}
	mk := readMakefile(fstest.MapFS{}, "Makefile", []byte(b.String()))
	for _, name := range []string{"BOMB_VERSION", "BROKEN_VERSION"} {
		v, known := mk.value(name)
		if known || len(v) > 2*maxExpansion {
			t.Errorf("%s: known=%v len=%d", name, known, len(v))
		}
	}
	_, versions, _ := mk.pins()
	if len(versions) != 2 || versions[0].Known || versions[1].Known {
		t.Errorf("versions %+v", versions)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestMakeRulesAndRecipes(t *testing.T) {
	src := strings.Join([]string{
		"X_URL = https://example.com/x.yaml",
		"all: build ; curl -o files/y.yaml https://example.com/y.yaml",
		"build:",
		"\t@echo building",
		"\t# curl https://example.com/commented.yaml",
		"\t-wget -O files/z.yaml https://example.com/z.yaml",
		"",
		"\tcurl -o files/x.yaml $(X_URL)",
		"Y = 1",
		"\tcurl https://example.com/not-a-recipe.yaml", // after an assignment: not in a rule
		"z: ; @true",
	}, "\n")
	mk := readMakefile(fstest.MapFS{}, "Makefile", []byte(src))
	_, _, unpinned := mk.pins()
	var got []string
	for _, u := range unpinned {
		got = append(got, u.Value+"@"+itoa(u.Line))
	}
	want := []string{
		"https://example.com/x.yaml@1",
		"https://example.com/y.yaml@2",
		"https://example.com/z.yaml@6",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("unpinned %v, want %v", got, want)
	}
}

func TestMakeSHAPairing(t *testing.T) {
	src := strings.Join([]string{
		"CAPMOX_URL = https://example.com/capmox.yaml",
		"CAPMOX_SHA256 = " + strings.ToUpper(shaA), // uppercase is normalized
		"META_URL = https://example.com/meta.yaml",
		"META_DIGEST = sha256:" + shaB,
		"KUBE_COMPONENTS_URL = https://example.com/kube.yaml",
		"KUBE_COMPONENTS_URL_SHA256SUM = " + shaC,
		"GIT_SHA = 6dbc11c4d0cbfbdcd618566538c10b0d4a07516b", // a commit, not a SHA-256
		"OTHER_URL = https://example.com/other.yaml",
		"OTHER_SHA = not-hex",
	}, "\n")
	mk := readMakefile(fstest.MapFS{}, "Makefile", []byte(src))
	f, _, unpinned := mk.pins()
	if f == nil || len(f.Providers) != 1 {
		t.Fatalf("file %+v", f)
	}
	want := []pin.Source{
		{URL: "https://example.com/capmox.yaml", SHA256: shaA},
		{URL: "https://example.com/meta.yaml", SHA256: shaB},
		{URL: "https://example.com/kube.yaml", SHA256: shaC},
	}
	if !reflect.DeepEqual(f.Providers[0].Sources, want) {
		t.Errorf("sources %+v", f.Providers[0].Sources)
	}
	if len(unpinned) != 1 || unpinned[0].Name != "OTHER_URL" {
		t.Errorf("unpinned %+v", unpinned)
	}
}

func TestDockerfile(t *testing.T) {
	src := strings.Join([]string{
		"ARG VERSION=v1.2.3",
		"ARG VERSION",                 // redeclared without a default: no new value
		"arg lower_version='v0.0.1'",  // instructions are case-insensitive
		"ARG A_VERSION=1 B_VERSION=2", // several per line
		"ENV BASE=https://example.com",
		"ENV LEGACY_VERSION v9", // ENV is not a version pin
		"RUN curl -o /x $BASE/${VERSION}/x.tar.gz \\",
		"  # a comment line inside the instruction",
		"  && tar xf /x",
		"ADD --chown=1:1 https://example.com/y.tar.gz /y",
		"ADD --checksum=sha256:" + shaA + " https://example.com/z.tar.gz /z",
		"RUN curl -o /w https://example.com/w.tar.gz && echo \"" + shaB + "  /w\" | sha256sum -c",
		"RUN curl -o /v https://example.com/$(uname -m)/v.tar.gz",
	}, "\n")
	versions, unpinned := readDockerfile("Dockerfile", []byte(src))
	wantV := []pin.Var{
		{Name: "VERSION", Value: "v1.2.3", Known: true, File: "Dockerfile", Line: 1},
		{Name: "lower_version", Value: "v0.0.1", Known: true, File: "Dockerfile", Line: 3},
		{Name: "A_VERSION", Value: "1", Known: true, File: "Dockerfile", Line: 4},
		{Name: "B_VERSION", Value: "2", Known: true, File: "Dockerfile", Line: 4},
	}
	if !reflect.DeepEqual(versions, wantV) {
		t.Errorf("versions\n %+v\nwant\n %+v", versions, wantV)
	}
	wantU := []pin.Var{
		{Value: "https://example.com/v1.2.3/x.tar.gz", Known: true, File: "Dockerfile", Line: 7},
		{Value: "https://example.com/y.tar.gz", Known: true, File: "Dockerfile", Line: 10},
		{Value: "https://example.com/$(uname -m)/v.tar.gz", File: "Dockerfile", Line: 13},
	}
	if !reflect.DeepEqual(unpinned, wantU) {
		t.Errorf("unpinned\n %+v\nwant\n %+v", unpinned, wantU)
	}
}

// TestMakeSHAPairingVendoredAt: a pinned URL variable that no recipe line
// downloads goes to files/<its file name> when the package holds that
// file (a recipe that only runs builder build), and nowhere otherwise.
func TestMakeSHAPairingVendoredAt(t *testing.T) {
	src := strings.Join([]string{
		"X_VERSION = v1.0.0",
		"X_COMPONENTS_URL = https://example.com/$(X_VERSION)/ipam-components.yaml",
		"X_COMPONENTS_SHA256 = " + shaA,
		"X_METADATA_URL = https://example.com/$(X_VERSION)/metadata.yaml?raw=1",
		"X_METADATA_SHA256 = " + shaB,
		"",
		"components:",
		"\t$(BUILDER) build .",
	}, "\n")
	for _, tc := range []struct {
		name  string
		fsys  fstest.MapFS
		wantC string
		wantM string
	}{
		{"both vendored", fstest.MapFS{"files/ipam-components.yaml": {}, "files/metadata.yaml": {}}, "files/ipam-components.yaml", "files/metadata.yaml"},
		{"one vendored", fstest.MapFS{"files/metadata.yaml": {}}, "", "files/metadata.yaml"},
		{"a directory is no file", fstest.MapFS{"files/ipam-components.yaml/x": {}}, "", ""},
		{"nothing vendored", fstest.MapFS{}, "", ""},
	} {
		mk := readMakefile(tc.fsys, "Makefile", []byte(src))
		f, _, _ := mk.pins()
		if f == nil || len(f.Providers) != 1 || len(f.Providers[0].Sources) != 2 {
			t.Fatalf("%s: file %+v", tc.name, f)
		}
		if got := f.Providers[0].Sources; got[0].To != tc.wantC || got[1].To != tc.wantM {
			t.Errorf("%s: to = %q, %q; want %q, %q", tc.name, got[0].To, got[1].To, tc.wantC, tc.wantM)
		}
	}
}
