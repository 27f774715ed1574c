package manifest

import (
	"encoding/base64"
	"reflect"
	"runtime"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// parseBoth parses every document of text plainly and with long values
// swapped out (from min bytes), and fails when the results differ in any
// way: objects, their whole node trees (lines, columns, styles, tags),
// problems.
func parseBoth(t *testing.T, text []byte, min int) (swapped int) {
	t.Helper()
	for _, d := range SplitDocs(text) {
		po, pp := parseDocWith(d, "f.yaml", 0)
		fo, fp := parseDocWith(d, "f.yaml", min)
		if !reflect.DeepEqual(po, fo) || !reflect.DeepEqual(pp, fp) {
			t.Fatalf("document at line %d parses differently with long values swapped out:\nplain   %+v %+v\nswapped %+v %+v", d.line, po, pp, fo, fp)
		}
		if _, vals := swapLongScalars(d.bytes(), min); vals != nil {
			swapped++
		}
	}
	return swapped
}

func TestLongScalarsSameTree(t *testing.T) {
	blob := "H4sI" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("kind: ConfigMap\n", 400)))
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v1.0.0\nbinaryData:\n  components: " + blob + "\ndata:\n  metadata: |\n    x: y\n"
	for _, tc := range []struct {
		name string
		text string
		fast bool // the fast path is taken (else it must fall back)
	}{
		{"components blob", cm, true},
		{"two blobs", cm + "  other: " + blob + "\n", true},
		{"blob at end of text, no newline", strings.TrimSuffix("binaryData:\n  components: "+blob, "\n"), true},
		{"plain scalar continued on the next line", "binaryData:\n  components: " + blob + "\n    more\n", false},
		{"continued after a blank line", "binaryData:\n  components: " + blob + "\n\n    more\n", false},
		{"inside a literal block", "data:\n  x: |\n    components: " + blob + "\n", false},
		{"inside a double-quoted scalar", "data:\n  x: \"a\n    components: " + blob + "\n    b\"\n", false},
		{"inside a flow mapping", "data: {\n  components: " + blob + "\n}\n", true},
		{"duplicate key beside it", "binaryData:\n  components: " + blob + "\n  components: " + blob + "\n", true},
		{"forged placeholder", "binaryData:\n  components: " + blob + "\n  x: " + swapNonce + "0\n", false},
		{"key is a value's continuation", "a: b\n  components: " + blob + "\n", false},
		{"tab in a later line", "binaryData:\n  components: " + blob + "\n\tx: y\n", false},
		{"broken document", "binaryData:\n  components: " + blob + "\n x: [\n", false},
		{"digits only (a number)", "binaryData:\n  components: " + strings.Repeat("1", 5000) + "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseBoth(t, []byte(tc.text), LongScalarMin)
			if tc.fast != (got > 0 && fastTaken(tc.text)) {
				t.Fatalf("fast path taken: %v, want %v", !tc.fast, tc.fast)
			}
		})
	}
}

// fastTaken reports whether every document of text with a swap parses on
// the fast path.
func fastTaken(text string) bool {
	for _, d := range SplitDocs([]byte(text)) {
		sw, vals := swapLongScalars(d.bytes(), LongScalarMin)
		if vals == nil {
			continue
		}
		var n yaml.Node
		if !fastParse(sw, vals, len(vals), &n) {
			return false
		}
	}
	return true
}

// FuzzLongScalars: on any text, parsing with long values swapped out gives
// exactly what the plain parse gives (a tiny threshold, so the fuzzer
// reaches the swap with short inputs).
func FuzzLongScalars(f *testing.F) {
	for _, s := range []string{
		"binaryData:\n  components: H4sIAAAAAAAA\n",
		"a:\n  b: Abcdefgh\n    c\n",
		"a: |\n  b: Abcdefgh\n",
		"a: {\n  b: Abcdefghi\n}\n",
		"a: \"x\n  b: Abcdefghi\n  \"\n",
		"a: b\n  c: Abcdefghij\n",
		"a:\n  b: Truexxxxxx\n  c: Nullxxxxxx\n  d: Falsexxxxx\n",
		"a: &x\n  b: Abcdefghij\nc: *x\n",
		"a:\n  b: Abcdefghij\n  b: Abcdefghij\n",
		"a:\n  b: Abcdefghij #c\n",
		"- b: Abcdefghij\n",
		"a:\n  b: Abcdefghij\n\n   \n   c\n",
		"? a\n: Abcdefghij\n",
		"a:\n  b: Abcdefghij\r\n",
		"a:\n  b: Abcdefghij\n  :c\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parseBoth(t, data, 8)
	})
}

// TestAllBase64: the eight-at-a-time check says what a byte-by-byte look
// at the alphabet says, whatever the length and wherever the odd byte.
func TestAllBase64(t *testing.T) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
	for n := 0; n <= 40; n++ {
		good := make([]byte, n)
		for i := range good {
			good[i] = alphabet[(i*7+n)%len(alphabet)]
		}
		if !allBase64(good) {
			t.Fatalf("allBase64(%q) = false", good)
		}
		for i := range n {
			for _, bad := range []byte{' ', '\n', '-', '_', ':', '"', 0, 0x80, 0xff} {
				b := append([]byte(nil), good...)
				b[i] = bad
				if allBase64(b) {
					t.Fatalf("allBase64(%q) = true (byte %d is %q)", b, i, bad)
				}
			}
		}
	}
}

// parseStringBoth parses text plainly and as ParseString does (long
// values swapped out of the whole text from min bytes), and fails when the
// results differ in any way.
func parseStringBoth(t *testing.T, text string, min int) {
	t.Helper()
	plain := func(src []byte, n *yaml.Node) error { return yaml.Unmarshal(src, n) }
	po, pp := parseDocs([]byte(text), "f.yaml", plain)
	so, sp := parseStringWith(text, "f.yaml", min)
	if !reflect.DeepEqual(po, so) || !reflect.DeepEqual(pp, sp) {
		t.Fatalf("text parses differently as a string with long values swapped out:\nplain  %+v %+v\nstring %+v %+v", po, pp, so, sp)
	}
}

// TestParseStringSameTree: ParseString gives what the plain parse gives,
// whether a document takes the fast path or falls back, and whichever
// documents of a text hold the long values.
func TestParseStringSameTree(t *testing.T) {
	blob := "H4sI" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("kind: ConfigMap\n", 400)))
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v1.0.0\nbinaryData:\n  components: " + blob + "\ndata:\n  metadata: |\n    x: y\n"
	for _, text := range []string{
		cm,
		cm + "---\n" + cm,
		"kind: A\n---\n" + cm + "---\nkind: B\n",
		cm + "---\nbinaryData:\n  components: " + blob + "\n    more\n---\n" + cm,
		cm + "---\ndata:\n  x: |\n    components: " + blob + "\n",
		"binaryData:\n  components: " + blob + "\n x: [\n---\n" + cm,
		cm + "---\n--- \nbinaryData:\n  components: " + blob + "\n  components: " + blob + "\n",
		"--- binaryData: {components: " + blob + "}\n" + cm,
		cm + "  x: " + swapNonce + "0\n",
		strings.TrimSuffix(cm, "\n"),
	} {
		parseStringBoth(t, text, LongScalarMin)
	}
}

// TestParseStringDoesNotCopyBlob: a rendered ConfigMap's blob is not
// copied by its parse (the node holds a substring of the text): the parse
// allocates far less than the blob's size.
func TestParseStringDoesNotCopyBlob(t *testing.T) {
	blob := "H4sI" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("kind: ConfigMap\n", 1<<15)))
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v1.0.0\nbinaryData:\n  components: " + blob + "\n"
	var objs []*Object
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	objs, _ = ParseString(cm, "f.yaml")
	runtime.ReadMemStats(&after)
	if v := LookupPath(objs[0].Root, "binaryData", "components"); v == nil || v.Value != blob {
		t.Fatal("binaryData.components is not the blob")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(blob))/4 {
		t.Fatalf("parsing a %d-byte blob allocated %d bytes: it was copied", len(blob), got)
	}
}

// FuzzParseString: on any text, ParseString (with a tiny threshold) gives
// exactly what the plain parse gives.
func FuzzParseString(f *testing.F) {
	for _, s := range []string{
		"binaryData:\n  components: H4sIAAAAAAAA\n",
		"a:\n  b: Abcdefgh\n    c\n---\na:\n  b: Abcdefgh\n",
		"a: |\n  b: Abcdefgh\n---\nc: Abcdefghij\n",
		"--- a: Abcdefghij\n",
		"a: \"x\n---\n  b: Abcdefghi\n  \"\n",
		"a:\n  b: Abcdefghij\n  b: Abcdefghij\n...\nc: Abcdefghij\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		parseStringBoth(t, text, 8)
		docsBoth(t, text, 8)
	})
}

// docsBoth checks ParseStringDocs (with min) against SplitDocs and the
// plain per-document parse: the same documents, at the same places of
// text, with the same objects and problems.
func docsBoth(t *testing.T, text string, min int) {
	t.Helper()
	data := []byte(text)
	want := SplitDocs(data)
	got := parseStringDocsWith(text, "f.yaml", min)
	if len(got) != len(want) {
		t.Fatalf("%d documents, want %d", len(got), len(want))
	}
	for i, d := range want {
		o, ps := parseDocWith(d, "f.yaml", 0)
		g := got[i]
		if text[g.Head.From:g.Head.To] != string(d.Head) || text[g.Text.From:g.Text.To] != string(d.Text) {
			t.Fatalf("document %d at %v %v: %q %q, want %q %q", i, g.Head, g.Text, text[g.Head.From:g.Head.To], text[g.Text.From:g.Text.To], d.Head, d.Text)
		}
		if len(d.Text) > 0 && g.Text.From != cap(data)-cap(d.Text) || len(d.Head) > 0 && g.Head.From != cap(data)-cap(d.Head) {
			t.Fatalf("document %d at %v %v: not where SplitDocs finds it", i, g.Head, g.Text)
		}
		if !reflect.DeepEqual(g.Object, o) || !reflect.DeepEqual(g.Problems, ps) {
			t.Fatalf("document %d parses differently:\ngot  %+v %+v\nwant %+v %+v", i, g.Object, g.Problems, o, ps)
		}
	}
}

// TestParseStringDocs: document by document, ParseStringDocs gives the
// plain parse and the documents' places, whichever hold long values.
func TestParseStringDocs(t *testing.T) {
	blob := "H4sI" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("kind: ConfigMap\n", 400)))
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v1.0.0\nbinaryData:\n  components: " + blob + "\ndata:\n  metadata: |\n    x: y\n"
	for _, text := range []string{
		cm,
		"kind: A\n---\n" + cm + "---\nkind: B\n",
		cm + "---\nbinaryData:\n  components: " + blob + "\n    more\n---\n" + cm,
		cm + "---\n--- \nbinaryData:\n  components: " + blob + "\n  components: " + blob + "\n---\nkind: C\n",
		"--- binaryData: {components: " + blob + "}\n" + cm,
		"--- x: " + blob + "\n---\n" + cm + "...\n" + cm,
		cm + "  x: " + swapNonce + "0\n",
		"kind: A\n---\nkind: B\n",
		"",
	} {
		docsBoth(t, text, LongScalarMin)
	}
}
