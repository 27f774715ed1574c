package check

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/atomicfile"
)

var update = flag.Bool("update", false, "rewrite the files generated from the catalog (make generate)")

// generated is one list the catalog writes into a file of the repository:
// the text between begin and end (exclusive) is gen's output.
type generated struct {
	file       string // relative to the repository root
	begin, end string
	gen        func() string
}

const root = "../../"

// generatedLists are every list outside Go that names the checks. The Go
// ones (release.Refusing, the `verifier check` help) read the catalog when
// they run.
var generatedLists = []generated{
	{
		file:  "docs/verifier.md",
		begin: "<!-- checks:begin (generated from the catalog by `make generate`; do not edit) -->\n",
		end:   "<!-- checks:end -->\n",
		gen: func() string {
			var b bytes.Buffer
			_ = WriteMarkdown(&b)
			return b.String()
		},
	},
	{
		file:  "policies/default.yaml",
		begin: "# checks:begin (generated from the catalog, pkg/check, by `make generate`; do not edit)\n",
		end:   "# checks:end\n",
		gen: func() string {
			var b strings.Builder
			b.WriteString("checks:\n")
			for _, c := range settable() {
				fmt.Fprintf(&b, "  %s: %s\n", c.ID, c.Severity)
			}
			return b.String()
		},
	},
	{
		file:  "policies/policy.schema.json",
		begin: "\"checkID\": {\n      \"enum\": [\n",
		end:   "\n      ]",
		gen: func() string {
			var ids []string
			for _, c := range settable() {
				ids = append(ids, fmt.Sprintf("        %q", c.ID))
			}
			return strings.Join(ids, ",\n")
		},
	},
	{
		file:  "api/report.schema.json",
		begin: "\"description\": \"Stable check ID from the catalog (",
		end:   ").\"",
		gen:   func() string { return strings.Join(IDs(), ", ") },
	},
}

// settable are the checks a policy sets the severity of: all but the one
// the policy itself reports.
func settable() []Check {
	var out []Check
	for _, c := range catalog {
		if c.Needs() != "policy" {
			out = append(out, c)
		}
	}
	return out
}

// TestGenerated: every list generatedLists names is the catalog's. With
// -update (make generate, go generate ./pkg/check) it rewrites them.
func TestGenerated(t *testing.T) {
	for _, g := range generatedLists {
		data, err := os.ReadFile(root + g.file)
		if err != nil {
			t.Fatal(err)
		}
		got, before, after, err := cut(string(data), g.begin, g.end)
		if err != nil {
			t.Fatalf("%s: %v", g.file, err)
		}
		want := g.gen()
		if got == want {
			continue
		}
		if *update {
			out := before + g.begin + want + g.end + after
			if err := atomicfile.WriteFile(root+g.file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote the catalog's list in %s", g.file)
			continue
		}
		t.Errorf("the list of checks in %s is not the catalog's (pkg/check/check.go); run `make generate` to write it. It should be:\n%s", g.file, want)
	}
}

// cut splits a document at the markers around a generated list.
func cut(s, begin, end string) (list, before, after string, err error) {
	before, rest, ok := strings.Cut(s, begin)
	if !ok {
		return "", "", "", errMarker(begin)
	}
	if strings.Contains(rest, begin) {
		return "", "", "", fmt.Errorf("%q twice: which list is generated?", strings.TrimSpace(begin))
	}
	list, after, ok = strings.Cut(rest, end)
	if !ok {
		return "", "", "", errMarker(end)
	}
	return list, before, after, nil
}

type errMarker string

func (e errMarker) Error() string {
	return "no " + strings.TrimSpace(string(e)) + " around the generated list of checks"
}

func TestCutMarkers(t *testing.T) {
	const b, e = "<b>\n", "<e>\n"
	for _, tc := range []struct {
		name, doc, want string
		ok              bool
	}{
		{"both", "a\n" + b + "| t |\n" + e + "b\n", "| t |\n", true},
		{"no begin", "a\n| t |\n" + e, "", false},
		{"no end", b + "| t |\n", "", false},
		{"begin twice", b + "x\n" + e + b + "y\n" + e, "", false},
	} {
		list, _, _, err := cut(tc.doc, b, e)
		if (err == nil) != tc.ok || list != tc.want {
			t.Errorf("%s: %q, %v", tc.name, list, err)
		}
	}
}

// TestCatalogJudged: every entry says what it does to a push and, when the
// tree alone answers it, has a function.
func TestCatalogJudged(t *testing.T) {
	for _, c := range catalog {
		if c.Push == PushUnjudged {
			t.Errorf("%s: set Push (PushRefuses or PushWarns; check.Gate says which)", c.ID)
		}
		if c.ID == "" || c.Title == "" || c.Description == "" || c.Severity == "" {
			t.Errorf("%+v: an entry needs ID, Title, Description and Severity", c)
		}
	}
}
