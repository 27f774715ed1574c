package manifest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
)

// docJSONTaken are documents AppendDocJSON must read, one construct each, and
// write as JSON writes ParseDoc's tree.
var docJSONTaken = []struct{ name, doc string }{
	{"minimal", "kind: A\n"},
	{"identity", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a.b.io\n  namespace: ns\n"},
	{"head after marker", "# a comment\n\nkind: A # trailing\n"},
	{"unsorted keys", "kind: A\nz: 1\nb: 2\na:\n  y: 1\n  x: 2\n  \"\": 3\n  ä: 4\n  Z: 5\n"},
	{"nested", "kind: A\nspec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          a:\n            type: string\n    served: true\n"},
	{"indented sequence", "kind: A\nlist:\n  - a\n  - b\n  -\n  - c: 1\n    d: 2\n"},
	{"indentless sequence", "kind: A\nlist:\n- a\n- b\nnext: 1\n"},
	{"indentless in entry", "kind: A\nl:\n- a:\n  - x\n  - y\n  b: 1\n- c\n"},
	{"empty values", "kind: A\na:\nb: # comment\n# between\nc:\n"},
	{"empty entries", "kind: A\nl:\n-\n- # c\n-\n"},
	{"comments", "# head\nkind: A # x\n# between\n  # indented\nspec: # c\n  # inner\n  a: 1 # one\n\n\n  b: 2\n"},
	{"scalars", "kind: A\nv: [1, -2, 0x1F, 0o17, 1_000, 007, 1.5, +.5, 6.02e+23, true, False, NULL, ~, 2001-12-14, yes, no, on, 1e400]\n"},
	{"plain resolved", "kind: A\na: 12\nb: -1.5e3\nc: true\nd: null\ne: ~\nf: 2001-12-14t21:59:43.10-05:00\ng: 0x1f\nh: .5\ni: +12\nj: 1e400x\nk: 123456789012345678901\n"},
	{"plain chars", "kind: A\na: a:b\nb: http://x/y?z=1#frag\nc: a # comment\nd: -x\ne: x-\nf: '' \ng: <b>&amp;</b> \"q\" \\ back\nh: x [no] {flow} here\ni: a#b\nj: x, y\n"},
	{"folded plain", "kind: A\ndescription: This is a long\n  description over\n     several lines\n\n  with a blank line\n\n\n  and two.\nnext: 1\n"},
	{"folded plain in entry", "kind: A\nl:\n- one\n  two\n- three\n   four\n"},
	{"entry continued", "kind: A\nl:\n  - a\n   - b\n"},
	{"plain continuation looks odd", "kind: A\nd: a\n  - b\n  \"c\" 'd' [e] {f} |g >h &i *j !k %l @m\n"},
	{"plain on next line", "kind: A\nd:\n  some text\n  more\n"},
	{"plain ends at comment line", "kind: A\nd: a\n  b\n  # c\ne: 1\n"},
	{"plain with trailing blanks", "kind: A\nd: a   \n  b   \n\n\ne: 1\n"},
	{"double quoted", `kind: A
a: ""
b: "x\"y\\z\'"
c: "\0\a\b\t\n\v\f\r\e\ \N\_\L\P\x41\u00e9\U0001F600\xff"
d: "<tag> & 'q'"
"e": 1
"f\u0067": 2
'h': 3
'i''j': 4
`},
	{"double quoted folded", "kind: A\nd: \"one\n  two  \n\n    three\\\n    four\\\n\n  five \\\n  six\"\ne: 1\n"},
	{"single quoted", "kind: A\na: ''\nb: 'it''s'\nc: 'multi\n  line\n\n  para'\nd: '\\n not an escape'\n"},
	{"quoted then comment", "kind: A\na: \"x\" # c\nb: 'y'   \n"},
	{"literal", "kind: A\nd: |\n  line one\n    indented\n\n  last\ne: 1\n"},
	{"literal keep", "kind: A\nd: |+\n  a\n\n\ne: 1\n"},
	{"literal strip", "kind: A\nd: |-\n  a\n\n\ne: 1\n"},
	{"literal indicator", "kind: A\nd: |2\n    four\n   three\n  two\ne: |1-\n  x\n"},
	{"literal both orders", "kind: A\nd: |-2\n   a\ne: |2+\n   b\n\nf: 1\n"},
	{"literal empty", "kind: A\nd: |\ne: |+\n\n\nf: >-\ng: 1\n"},
	{"literal leading blanks", "kind: A\nd: |\n\n  \n  a\n"},
	{"literal with tab and hash", "kind: A\nd: |\n  a\tb\n  # not a comment\n  ---\n# a comment\ne: 1\n"},
	{"literal at end without newline", "kind: A\nd: |\n  a"},
	{"literal keep at end", "kind: A\nd: |+\n  a\n\n"},
	{"folded", "kind: A\nd: >\n  one\n  two\n\n  three\n    more\n  four\n\n\n  five\ne: 1\n"},
	{"folded more indented", "kind: A\nd: >-\n  a\n   b\n  c\n\n   d\n  e\n"},
	{"block in entry", "kind: A\nl:\n- |\n  a\n- k: >\n    b\n  j: 1\n"},
	{"block scalar comment", "kind: A\nd: | # c\n  a\n"},
	{"flow", "kind: A\na: []\nb: {}\nc: [ ]\nd: { }\ne: [a, 'b', \"c\", 1, true, x/y, 1.5]\nf: [a,b] # c\ng: [\"x\\ty\"]\n"},
	{"nested kind and name", "kind: A\nmetadata:\n  labels:\n    name: x\n  name:\n    nested: y\n"},
	{"name null", "kind: A\nmetadata:\n  name:\n  namespace: ~\n"},
	{"name quoted", "kind: \"A\"\nmetadata:\n  \"name\": '1'\n"},
	{"name on next line", "kind: A\nmetadata:\n  name:\n    x\n"},
	{"kind a list", "kind:\n- A\n"},
	{"metadata scalar", "kind: A\nmetadata: x\n"},
	{"key with spaces and colons", "kind: A\na b:c: 1\nx.y/z: 2\n$ref: 3\n"},
	{"deep enough", "kind: A\n" + deepMap(0, maxDocJSONDepth-1)},
	{"long line", "kind: A\nd: " + strings.Repeat("ab ", 20000) + "\n"},
	{"unicode", "kind: A\nd: \"é ü – 😀 \u00a0\"\ne: é\n"},
	{"no final newline", "kind: A\nd: x"},
}

// docJSONDeclined are documents AppendDocJSON leaves to ParseDoc, with why.
var docJSONDeclined = []struct{ doc, why string }{
	{"kind: A\r\n", declineText},
	{"\ufeffkind: A\n", declineText},
	{"kind: \x85A\n", declineText},
	{"kind: A\u2028\n", declineText},
	{"kind: A\x01\n", declineText},
	{"kind: A\nb: 12345678\x7f\n", declineText},
	{"kind: A\nb: 1234567\x1f\n", declineText},
	{"kind: A\nb: 1234567\u0080\n", declineText},
	{"kind: A\nb: \xef\xbf\xbe\n", declineText},
	{"kind: \xffA\n", declineText},
	{"kind: A\n---\nkind: B\n", declineText},
	{"kind: A\n...\n", declineText},
	{"", declineRoot},
	{"# only a comment\n", declineRoot},
	{"- a\n", declineRoot},
	{"  kind: A\n", declineRoot},
	{"%YAML 1.2\nkind: A\n", declineKey},
	{"kind: A\nnot a key\n", declineKey},
	{"kind: A\n? complex\n: key\n", declineKey},
	{"kind: A\nb: 1\n- c\n", declineKey},
	{"kind: A\n[a]: b\n", declineKey},
	{"kind: A\n\"multi\n line\": b\n", declineKey},
	{"kind: A\nb:\n  c: 1\n d: 2\n", declineIndent},
	{"kind: A\nb:\n    c: 1\n  d: 2\n", declineIndent},
	{"kind: A\nb: 1\n  c: 2\n", declineColon},
	{"kind: A\nb: 1 # c\n  c\n", declineIndent},
	{"kind: A\nl:\n  - a\n  b: 1\n", declineIndent},
	{"kind: A\nd: |\n    a\n  b: 1\n", declineIndent},
	{"kind: A\n" + deepMap(0, maxDocJSONDepth), declineDepth},
	{"kind: A\nl: " + strings.Repeat("[", 3) + "\n", declineFlow},
	{"kind: A\nkind: B\n", declineDup},
	{"kind: A\na:\n  b: 1\n  c: 2\n  b: 3\n", declineDup},
	{"kind: A\n\"a\": 1\na: 2\n", declineDup},
	{"kind: A\n1: a\n", declineKeyKind},
	{"kind: A\ntrue: a\n", declineKeyKind},
	{"kind: A\nnull: a\n", declineKeyKind},
	{"kind: A\n~: a\n", declineKeyKind},
	{"kind: A\n<<: {a: 1}\n", declineKeyKind},
	{"kind: A\na : 1\n", declineKeyKind},
	{"kind: A\n" + strings.Repeat("k", maxDocJSONKey+1) + ": 1\n", declineKeyKind},
	{"kind: A\nb:\t1\n", declineTab},
	{"kind: A\n\tb: 1\n", declineTab},
	{"kind: A\nb: a\tb\n", declineTab},
	{"kind: A\nb: \"a\tb\"\n", declineQuoted},
	{"kind: A\nb: |\n\ta\n", declineTab},
	{"kind: A\nb: &x 1\n", declineNode},
	{"kind: A\nb: *x\n", declineNode},
	{"kind: A\nb: !!str 1\n", declineNode},
	{"kind: A\nb: !custom x\n", declineNode},
	{"kind: A\nb: @x\n", declineNode},
	{"kind: A\nb: `x\n", declineNode},
	{"kind: A\nb: ? x\n", declineNode},
	{"kind: A\nb: <<\n", declineNode},
	{"kind: A\nb:\n  |\n  x\n", declineNode},
	{"kind: A\nb: a: c\n", declineColon},
	{"kind: A\nb: a:\n", declineColon},
	{"kind: A\nb: a\n  c: d\n", declineColon},
	{"kind: A\nb: \"x\n", declineQuoted},
	{"kind: A\nb: \"\\q\"\n", declineQuoted},
	{"kind: A\nb: \"\\ud800\"\n", declineQuoted},
	{"kind: A\nb: \"\\x4\"\n", declineQuoted},
	{"kind: A\nb: \"x\ny\"\n", declineQuoted},
	{"kind: A\nb: \"x\" y\n", declineTrailing},
	{"kind: A\nb: \"x\": y\n", declineTrailing},
	{"kind: A\nb: []#x\n", declineTrailing},
	{"kind: A\nb: |0\n  x\n", declineBlock},
	{"kind: A\nb: |++\n  x\n", declineBlock},
	{"kind: A\nb: |#c\n  x\n", declineBlock},
	{"kind: A\nb: | x\n", declineBlock},
	{"kind: A\nb: [a, [b]]\n", declineFlow},
	{"kind: A\nb: {a: 1}\n", declineFlow},
	{"kind: A\nb: [a b]\n", declineFlow},
	{"kind: A\nb: [a,]\n", declineFlow},
	{"kind: A\nb: [-]\n", declineFlow},
	{"kind: A\nb: [a:b]\n", declineFlow},
	{"kind: A\nb: [a\n", declineFlow},
	{"kind: A\nb: .inf\n", declineScalar},
	{"kind: A\nb: [-.Inf]\n", declineScalar},
	{"kind: A\nl:\n- - a\n", declineNested},
	{"kind: A\nb: - a\n", declineNested},
}

// docJSONOdd are corner cases (comments, blank lines, indicators,
// resolution) AppendDocJSON must read as ParseDoc does or decline.
var docJSONOdd = []string{
	"kind: A\nl:\n- # c\n  a: 1\n",
	"kind: A\nl:\n  # c\n  - a\n  # d\n  - b\n# e\nm: 1\n",
	"kind: A\nl:\n  - |\n    a\n  - |1\n    b\n  - >2-\n     c\n",
	"kind: A\nm:\n  k: |\n   a\n  j: >+\n\n   b\n\n",
	"kind: A\nl:\n- a: |\n    x\n  b: 1\n",
	"kind: A\nl:\n-   a: 1\n    b: 2\n",
	"kind: A\nl:\n  -\n    a: 1\n",
	"kind: A\na: \"x  \\\n  y\"\n",
	"kind: A\na: 'x  \n\n  y  '\n",
	"kind: A\na: x\n\n\n  # c\n",
	"kind: A\na: x\n  #c\nb: 1\n",
	"kind: A\na:\n  # c\n  x\n",
	"kind: A\na: >\n\n  x\n",
	"kind: A\na: |\n  x\n \n  y\n",
	"kind: A\na: |\n  x\n   \n  y\n",
	"kind: A\na: >\n  x\n   \n  y\n",
	"kind: A\na: >\n  x\n\n\n",
	"kind: A\na: |-\n\n",
	"kind: A\na: |+\n",
	"kind: A\na: |\n    \n  x\n",
	"kind: A\nmetadata:\n  name: x\n  name2: y\nmetadata2: {}\n",
	"kind: A # c\nmetadata: # c\n  name: x # c\n",
	"apiVersion: v1\nkind: A\nmetadata:\n  namespace: n\n  name: \"x\\ty\"\n",
	"kind: A\na: 'x'   # c\n",
	"kind: A\na: \"\"\n",
	"kind: A\n'': 1\n",
	"kind: A\na: - \n",
	"kind: A\na: -1\n",
	"kind: A\na: ---\n",
	"kind: A\na: ...x\n",
	"kind: A\n-a: 1\n",
	"kind: A\na-: 1\n",
	"kind: A\na: 0.\n",
	"kind: A\na: 1:2\n",
	"kind: A\na: 1_0\n",
	"kind: A\na: 0b1\n",
	"kind: A\na: +0\n",
	"kind: A\na: -0.0\n",
	"kind: A\na: 2001-12-14 21:59:43.10 -5\n",
	"kind: A\na: 1e5\n",
	"kind: A\na: 0o\n",
	"kind: A\na: [1e5, 0x, 2001-01-01]\n",
}

// deepMap is n nested mappings at column indent.
func deepMap(indent, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%sk:\n", strings.Repeat(" ", indent+i))
	}
	fmt.Fprintf(&b, "%sv: 1\n", strings.Repeat(" ", indent+n))
	return b.String()
}

// sameDocJSON checks AppendDocJSON against ParseDoc and JSON on every document
// of data: declined, or the same JSON and head. It returns how many
// documents were taken and declined.
func sameDocJSON(t *testing.T, name string, data []byte) (taken, declined int) {
	t.Helper()
	for _, d := range SplitDocs(data) {
		h, js, ok := AppendDocJSON([]byte("x"), d)
		if !ok {
			if string(js) != "x" {
				t.Errorf("%s:%d: declined but wrote %q", name, d.Line(), js)
			}
			declined++
			continue
		}
		taken++
		o, probs := ParseDoc(d, name)
		if o == nil {
			t.Errorf("%s:%d: AppendDocJSON read a document ParseDoc does not (%v)", name, d.Line(), probs)
			continue
		}
		want := append([]byte("x"), AppendJSON(nil, o.Root)...)
		if !bytes.Equal(js, want) {
			i := 0
			for i < len(js) && i < len(want) && js[i] == want[i] {
				i++
			}
			t.Errorf("%s:%d: AppendDocJSON differs from JSON at byte %d:\n got %q\nwant %q", name, d.Line(), i,
				js[max(0, i-40):min(len(js), i+40)], want[max(0, i-40):min(len(want), i+40)])
		}
		if wh := (DocHead{o.APIVersion, o.Kind, o.Name, o.Namespace, o.Line}); h != wh {
			t.Errorf("%s:%d: head %+v, ParseDoc %+v", name, d.Line(), h, wh)
		}
	}
	return taken, declined
}

func TestDocJSONTakes(t *testing.T) {
	for _, c := range docJSONTaken {
		t.Run(c.name, func(t *testing.T) {
			if _, _, why := appendDocJSON(nil, []byte(c.doc)); why != "" {
				t.Fatalf("declined: %s", why)
			}
			// Also as the second document of a text, after a marker.
			for _, text := range []string{c.doc, "kind: Z\n---\n" + c.doc, "--- " + c.doc} {
				if taken, _ := sameDocJSON(t, c.name, []byte(text)); taken == 0 {
					t.Errorf("%q: nothing taken", text)
				}
			}
		})
	}
}

func TestDocJSONDeclines(t *testing.T) {
	for _, c := range docJSONDeclined {
		_, js, why := appendDocJSON([]byte("x"), []byte(c.doc))
		if why != c.why {
			t.Errorf("%.60q: declined for %q, want %q", c.doc, why, c.why)
		}
		if string(js) != "x" {
			t.Errorf("%.60q: declined but wrote %q", c.doc, js)
		}
		sameDocJSON(t, "declined", []byte(c.doc))
	}
}

func TestDocJSONOdd(t *testing.T) {
	taken := 0
	for _, doc := range docJSONOdd {
		n, _ := sameDocJSON(t, "odd", []byte(doc))
		taken += n
	}
	if taken < len(docJSONOdd)/2 {
		t.Fatalf("%d of %d odd documents taken", taken, len(docJSONOdd))
	}
}

// TestDocJSONTrees: AppendDocJSON reads every CRD of the fixture trees and of a
// cozystack-shaped bench tree, as JSON writes ParseDoc's tree, and
// agrees with it on every other document.
func TestDocJSONTrees(t *testing.T) {
	var taken, crds int
	check := func(path string, data []byte) {
		n, _ := sameDocJSON(t, path, data)
		taken += n
		for _, d := range SplitDocs(data) {
			if o, _ := ParseDoc(d, path); o != nil && o.Kind == "CustomResourceDefinition" {
				crds++
				if _, _, why := appendDocJSON(nil, d.bytes()); why != "" {
					t.Errorf("%s:%d: CRD %s declined: %s", path, o.Line, o.Name, why)
				}
			}
		}
	}
	for _, root := range []string{filepath.Join("..", "..", "testdata"), filepath.Join("..", "..", "examples")} {
		eachYAML(t, root, check)
	}
	bench := filepath.Join(t.TempDir(), "bench")
	if _, err := gentree.Generate(bench, gentree.Options{Packages: 4, Shape: gentree.Cozystack, Size: 256 << 10, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	eachYAML(t, bench, check)
	if crds < 20 || taken < crds {
		t.Fatalf("%d CRDs, %d documents taken", crds, taken)
	}
}

// TestDocJSONLinear: a long line, many lines and deep nesting cost time
// in proportion to their size (a quadratic reader would take minutes).
func TestDocJSONLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("kind: A\n")
	b.WriteString("long: " + strings.Repeat("x", 4<<20) + "\n")
	b.WriteString("folded: a\n" + strings.Repeat("  b\n\n", 200000))
	b.WriteString("blanks: |+\n  x\n" + strings.Repeat("\n", 200000))
	for i := range 2000 {
		fmt.Fprintf(&b, "k%06d:\n%s", 2000-i, deepMap(1, maxDocJSONDepth-2))
	}
	doc := []byte(b.String())
	h, js, why := appendDocJSON(nil, doc)
	if why != "" || h.Kind != "A" || len(js) < 4<<20 {
		t.Fatalf("declined (%s) or short: %d bytes", why, len(js))
	}
}

// FuzzDocJSON holds AppendDocJSON to ParseDoc and JSON on any text: it declines
// or writes what they write.
func FuzzDocJSON(f *testing.F) {
	for _, c := range docJSONTaken {
		f.Add([]byte(c.doc))
	}
	for _, c := range docJSONDeclined {
		f.Add([]byte(c.doc))
	}
	for _, doc := range docJSONOdd {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		sameDocJSON(t, "fuzz", data)
		if got, want := docText(data), docTextByRune(data); got != want {
			t.Fatalf("docText(%q) = %v, want %v", data, got, want)
		}
	})
}

// docTextByRune is docText a character at a time.
func docTextByRune(src []byte) bool {
	if !utf8.Valid(src) {
		return false
	}
	for _, l := range strings.Split(string(src), "\n") {
		for _, m := range []string{"---", "..."} {
			if l == m || strings.HasPrefix(l, m+" ") || strings.HasPrefix(l, m+"\t") {
				return false
			}
		}
		for _, c := range l {
			ok := c == '\t' || c >= 0x20 && c < 0x7f || c >= 0xa0 && c <= 0xfffd && c != 0x2028 && c != 0x2029 && c != 0xfeff || c >= 0x10000
			if !ok {
				return false
			}
		}
	}
	return true
}

func ExampleAppendDocJSON() {
	text := []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.io\nspec:\n  group: example.io\n  names: {}\n---\nkind: A\nx: &anchor 1\n")
	for _, d := range SplitDocs(text) {
		head, js, ok := AppendDocJSON(nil, d)
		if !ok {
			fmt.Printf("line %d: declined, parse it with ParseDoc\n", d.Line())
			continue
		}
		fmt.Printf("%s %s at line %d: %s\n", head.Kind, head.Name, head.Line, js)
	}
	// Output:
	// CustomResourceDefinition widgets.example.io at line 4: {"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.io"},"spec":{"group":"example.io","names":{}}}
	// line 9: declined, parse it with ParseDoc
}

// TestDocJSONGenerated compares AppendDocJSON with ParseDoc on documents
// drawn from the YAML it reads and its neighbours: nested mappings and
// sequences at varying indentation, every kind of scalar with odd
// content, comments and blank lines anywhere. DOCJSON_GENERATED=n draws n.
func TestDocJSONGenerated(t *testing.T) {
	n := 3000
	if s := os.Getenv("DOCJSON_GENERATED"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	rng := rand.New(rand.NewPCG(7, 32))
	var taken int
	for range n {
		g := docGen{rng: rng}
		g.b.WriteString("kind: A\n")
		g.mapping(0, 0, false)
		doc := g.b.String()
		if k, _ := sameDocJSON(t, "generated", []byte(doc)); k > 0 {
			taken++
		} else if t.Failed() {
			t.Fatalf("document:\n%s", doc)
		}
		if t.Failed() {
			t.Fatalf("document:\n%s", doc)
		}
	}
	if taken < n/4 {
		t.Fatalf("%d of %d generated documents taken", taken, n)
	}
}

type docGen struct {
	rng *rand.Rand
	b   strings.Builder
	n   int
}

func (g *docGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

// odd: draw something AppendDocJSON declines or yaml.v3 rejects.
func (g *docGen) odd() bool { return g.rng.IntN(40) == 0 }

// junk is a comment or blank line, sometimes.
func (g *docGen) junk(indent int) {
	switch g.rng.IntN(12) {
	case 0:
		g.b.WriteString("\n")
	case 1:
		g.b.WriteString(strings.Repeat(" ", g.rng.IntN(indent+4)) + "# c: - | \"\t\n")
	case 2:
		g.b.WriteString(strings.Repeat(" ", g.rng.IntN(indent+4)) + "\n")
	}
}

// mapping writes a mapping at column indent, its first key already
// there when compact (after "- ").
func (g *docGen) mapping(indent, depth int, compact bool) {
	for i := range 1 + g.rng.IntN(4) {
		g.junk(indent)
		g.n++
		key := "k" + strconv.Itoa(g.n)
		if g.rng.IntN(8) == 0 {
			key = g.pick("a", "name", "\"q\"", "'s'", "x-y", "a b", "é", "\"k\\u00e9\"", "'it''s'", "1", "true")
		}
		if i > 0 || !compact {
			g.b.WriteString(strings.Repeat(" ", indent))
		}
		g.b.WriteString(key + ":")
		g.value(indent, depth, true)
	}
}

func (g *docGen) sequence(indent, depth int) {
	for range 1 + g.rng.IntN(3) {
		g.junk(indent)
		g.b.WriteString(strings.Repeat(" ", indent) + "-")
		if g.rng.IntN(3) == 0 && depth < 6 {
			// A compact mapping.
			sp := 1 + g.rng.IntN(3)
			g.b.WriteString(strings.Repeat(" ", sp))
			g.mapping(indent+1+sp, depth+1, true)
			continue
		}
		g.value(indent, depth, false)
	}
}

// value writes what follows "key:" or "-" and its line break.
func (g *docGen) value(indent, depth int, inMap bool) {
	nested := depth < 6 && g.rng.IntN(3) == 0
	if nested {
		g.b.WriteString(g.pick("", " ", " # c", "  #c"))
		g.b.WriteString("\n")
		g.junk(indent)
		in := indent + []int{1, 2, 2, 4}[g.rng.IntN(4)]
		if g.odd() {
			in = max(indent-1, 0)
		}
		if g.rng.IntN(2) == 0 {
			if inMap && g.rng.IntN(2) == 0 {
				in = indent // a sequence at its key's indentation
			}
			g.sequence(in, depth+1)
		} else {
			g.mapping(in, depth+1, false)
		}
		return
	}
	cont := strings.Repeat(" ", indent+1+g.rng.IntN(3))
	switch g.rng.IntN(9) {
	case 0:
		g.b.WriteString("\n")
	case 1, 2:
		v := g.pick("x", "1", "-1", "0x1f", "1.5", ".5", "~", "null", "True", "yes", "2001-01-01", "a:b", "a#b", "a #b", "12e3", "007", "+1", "a  b", "x\"y'", "-x", "a-", "é ü")
		if g.odd() {
			v = g.pick("-.inf", "'", "<<", "&a", "*a", "!t", "%", "@", "[a]", "- x", "? x", ":x", "a:", "a\tb")
		}
		g.b.WriteString(" " + v + "\n")
	case 3:
		// Folded plain.
		g.b.WriteString(" " + g.pick("one", "1", "a b") + "\n")
		for range g.rng.IntN(4) {
			if g.rng.IntN(3) == 0 {
				g.b.WriteString(g.pick("\n", "  \n", strings.Repeat(" ", indent)+"# c\n"))
			}
			line := g.pick("two", "- three", "[c]", "d  ", "'e'")
			if g.odd() {
				line = g.pick("#four", "x: y", "a #b")
			}
			if g.odd() {
				cont = strings.Repeat(" ", indent)
			}
			g.b.WriteString(cont + line + "\n")
		}
	case 4:
		// Double-quoted, maybe over lines.
		g.b.WriteString(" \"" + g.pick("a", "\\\"", "\\\\", "\\n", "\\t", "\\x41", "\\u00e9", "\\U0001F600", "\\0", "<&>", "  ", "\\N\\_\\L\\P", "'"))
		if g.odd() {
			g.b.WriteString(g.pick("\\/", "\\", "\\ud800", "\t"))
		}
		for range g.rng.IntN(3) {
			g.b.WriteString(g.pick("", " ", "\\", "  \\") + "\n" + g.pick("", "", "\n", "  \n") + cont + g.pick("b", " c", "\\ d", "e  "))
		}
		end := ""
		if g.odd() {
			end = g.pick(": x", " y")
		}
		g.b.WriteString("\"" + g.pick("", " ", " # c") + end + "\n")
	case 5:
		// Single-quoted.
		g.b.WriteString(" '" + g.pick("a", "''", "\\n", "b  "))
		for range g.rng.IntN(3) {
			g.b.WriteString(g.pick("", " ") + "\n" + g.pick("", "\n") + cont + g.pick("b", " c", "''"))
		}
		g.b.WriteString("'" + g.pick("", " ", " # c") + "\n")
	case 6, 7:
		// Block scalar.
		g.b.WriteString(" " + g.pick("|", ">") + g.pick("", "-", "+", "1", "2", "-2", "2+") + g.pick("", " # c", " ") + "\n")
		bi := strings.Repeat(" ", indent+1+g.rng.IntN(3))
		for range g.rng.IntN(5) {
			pre, text := g.pick(bi, bi, bi+" ", bi+"  "), g.pick("text", "more text", "", "", "# not", "\tt", "- x", "k: v", "a \"b\" 'c'")
			if text == "" {
				pre = g.pick(pre, "", " ", bi+"    ")
			}
			if g.odd() {
				pre = g.pick("", " ", strings.Repeat(" ", indent))
			}
			g.b.WriteString(pre + text + "\n")
		}
	case 8:
		f := g.pick("[]", "{}", "[ ]", "[a, b]", "['x', \"y\"]", "[1, 2.5, true]", "[ 0x1, ~ ]", "['a''b', \"c\\u00e9\"]")
		if g.odd() {
			f = g.pick("[a,]", "[a b]", "{a: 1}", "[[a]]", "[a] x")
		}
		g.b.WriteString(" " + f + g.pick("", " # c") + "\n")
	}
}
