package manifest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
)

func TestLoadObjects(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		objs  []string // Kind/name@line
		probs []string // substring@line
	}{
		{"empty", "", nil, nil},
		{"comments and markers only", "# Source: x\n---\n---\n# nothing\n...\n", nil, nil},
		{"one", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", []string{"ConfigMap/a@4"}, nil},
		{"multi with leading marker", "---\n# Source: c/templates/x.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\nkind: Secret\nmetadata:\n  name: b\n",
			[]string{"ConfigMap/a@6", "Secret/b@10"}, nil},
		{"content after the marker", "--- kind: A\nmetadata: {name: x}\n--- {kind: B, metadata: {name: y}}\n",
			[]string{"A/x@2", "B/y@3"}, nil},
		{"no name", "kind: List\nitems: []\n", []string{"List/@1"}, nil},
		{"null doc", "null\n---\n~\n", nil, nil},
		{"CRLF", "kind: A\r\nmetadata:\r\n  name: x\r\n---\r\nkind: B\r\n", []string{"A/x@3", "B/@5"}, nil},
		{"parse error keeps the others", "kind: A\n---\nkind: B\n  bad: x\n---\nkind: C\n",
			[]string{"A/@1", "C/@6"}, []string{"does not parse@4"}},
		{"unclosed flow", "kind: A\nmetadata: {name: [x\n", nil, []string{"does not parse@"}},
		{"duplicate key", "kind: A\nmetadata:\n  name: x\n  labels:\n    a: b\n    a: c\n", nil, []string{`duplicate key "a" at line 6 (first at line 5)@6`}},
		{"duplicate top key", "kind: A\nkind: B\n", nil, []string{`duplicate key "kind"@2`}},
		{"scalar doc", "just a string\n", nil, []string{"is a scalar@1"}},
		{"list doc", "- a\n- b\n", nil, []string{"is a list@1"}},
		{"aliases are not expanded", "kind: A\nmetadata: &m\n  name: x\nspec: *m\n", []string{"A/x@3"}, nil},
		{"self alias", "a: &a [*a]\nkind: A\n", []string{"A/@2"}, nil},
		{"tabs", "kind: A\n\tmetadata: x\n", nil, []string{"does not parse@"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, probs := Parse([]byte(tc.in), "x.yaml")
			var got []string
			for _, o := range objs {
				got = append(got, o.Kind+"/"+o.Name+"@"+itoa(o.Line))
			}
			if strings.Join(got, " ") != strings.Join(tc.objs, " ") {
				t.Errorf("objects = %v, want %v", got, tc.objs)
			}
			if len(probs) != len(tc.probs) {
				t.Fatalf("problems = %+v, want %v", probs, tc.probs)
			}
			for i, want := range tc.probs {
				sub, line, _ := strings.Cut(want, "@")
				p := probs[i]
				if !strings.Contains(p.Message, sub) || (line != "" && itoa(p.Line) != line) || p.File != "x.yaml" || p.Check != model.CheckPackageLoad {
					t.Errorf("problem %d = %+v, want %q at line %s", i, p, sub, line)
				}
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestStringScalar(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`v: "true"`, true}, {`v: 'no'`, true}, {`v: cozy`, true}, {`v: "1.10"`, true},
		{`v: true`, false}, {`v: yes`, false}, {`v: off`, false}, {`v: 1.10`, false}, {`v: 3`, false},
		{`v: ~`, false}, {`v: [a]`, false}, {"v: |\n  text\n", true},
	} {
		objs, _ := Parse([]byte("kind: X\n"+tc.in+"\n"), "x")
		if len(objs) != 1 {
			t.Fatalf("%s: no object", tc.in)
		}
		_, ok, why := StringScalar(Lookup(objs[0].Root, "v"))
		if ok != tc.ok || (!ok && why == "") {
			t.Errorf("%s: ok = %v (%s), want %v", tc.in, ok, why, tc.ok)
		}
	}
}
