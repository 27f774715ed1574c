package manifest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// A components ConfigMap holds its blob as one base64 line of hundreds of
// KiB, and yaml.v3 scans a plain scalar a byte at a time through its
// reader, character class tables and token buffer: on a rendered chart,
// most of the parse. The fast path below parses the document with each
// such value swapped for a short placeholder and puts the value back into
// the node the placeholder became. It is used only when that gives the
// very tree the plain parse gives, which holds by construction:
//
//   - a line qualifies only as `<spaces><key>: <value>` where key is a
//     plain word and value runs to the end of the line in base64 characters
//     (A-Z a-z 0-9 + / =) starting with a letter, at least longScalarMin
//     long. Such a value is a plain scalar that resolves to !!str (no
//     number, bool, null, timestamp or merge key starts with a letter and
//     is that long; a letter-led plain scalar is only ever one of those
//     few words), and none of its characters is special to the YAML
//     scanner in any context. The placeholder (letters and digits, letter
//     first) tokenizes the same way, so the rest of the document parses
//     the same;
//   - the placeholder holds a per-process random nonce, and a text that
//     already contains the nonce is parsed plainly: a chart cannot forge
//     one;
//   - after the parse, every placeholder must be the whole value of
//     exactly one plain !!str scalar node, each exactly once, and no other
//     node, key or comment may contain the nonce. A line that only looked
//     like `key: value` (inside a block scalar, a quoted scalar, a plain
//     scalar continued on the next line) leaves the placeholder inside a
//     longer value: the check fails and the document is parsed plainly;
//   - a parse error or panic on the swapped text falls back to the plain
//     parse, so error messages are always the plain parse's.
//
// FuzzLongScalars compares both parses on arbitrary input with a small
// longScalarMin.

// longScalarMin is the shortest line value swapped (a components blob is
// tens of KiB or more; short values cost yaml.v3 little).
const LongScalarMin = 4096

// swapNonce starts every placeholder; random per process.
var swapNonce = func() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "pinsealswap" + hex.EncodeToString(b) + "n"
}()

// parseYAML parses one YAML document into n, swapping long base64 values
// out of the scan when that is safe (see above) and lines of at least min
// bytes qualify.
func parseYAML(src []byte, n *yaml.Node, min int) error {
	if swapped, vals := swapLongScalars(src, min); vals != nil {
		if fastParse(swapped, vals, len(vals), n) {
			return nil
		}
		*n = yaml.Node{}
	}
	return yaml.Unmarshal(src, n)
}

// parseSwapped parses one document of a text whose long values were
// swapped out as a whole (ParseString): src holds the placeholders of
// some of vals. When the fast path does not give the plain parse, the
// document's own text is put back and parsed plainly.
func parseSwapped(src []byte, vals []string, n *yaml.Node) error {
	want := bytes.Count(src, []byte(swapNonce))
	if want == 0 {
		return yaml.Unmarshal(src, n)
	}
	if fastParse(src, vals, want, n) {
		return nil
	}
	*n = yaml.Node{}
	return yaml.Unmarshal(unswapLongScalars(src, vals), n)
}

// fastParse parses swapped, which holds want placeholders, and restores
// vals; false when the result is not the plain parse's (n is then to be
// discarded).
func fastParse(swapped []byte, vals []string, want int, n *yaml.Node) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if yaml.Unmarshal(swapped, n) != nil {
		return false
	}
	return restoreLongScalars(n, vals, want)
}

// byteText is a text as either type, so that a string (a rendered
// manifest) is swapped without copying it to bytes first, and its long
// values are substrings of it.
type byteText interface{ string | []byte }

func indexNL[T byteText](t T) int {
	switch v := any(t).(type) {
	case string:
		return strings.IndexByte(v, '\n')
	case []byte:
		return bytes.IndexByte(v, '\n')
	}
	return -1
}

func containsNonce[T byteText](t T) bool {
	switch v := any(t).(type) {
	case string:
		return strings.Contains(v, swapNonce)
	case []byte:
		return bytes.Contains(v, []byte(swapNonce))
	}
	return false
}

// swapLongScalars returns text with every qualifying value replaced by a
// placeholder, and the values in placeholder order; nil values when none
// qualifies or the text outside them holds the nonce. The values of a
// string text are substrings of it. A value is scanned once (its line's
// end is where its base64 run ends), and only the text around the values
// is searched for the nonce: inside a value it is never read as one.
func swapLongScalars[T byteText](text T, min int) ([]byte, []string) {
	if min < 1 || len(text) < min {
		return nil, nil
	}
	var out []byte
	var vals []string
	copied := 0
	for i := 0; i < len(text); {
		vs, end, ok := longValueAt(text, i, min)
		if !ok {
			e := indexNL(text[end:])
			if e < 0 {
				break
			}
			i = end + e + 1
			continue
		}
		seg := text[copied : i+vs]
		if containsNonce(seg) {
			return nil, nil
		}
		if out == nil {
			// What is left once this value is out (more may go).
			out = make([]byte, 0, len(text)-(end-i-vs)+len(swapNonce)+8)
		}
		out = append(out, seg...)
		out = append(out, swapNonce...)
		out = strconv.AppendInt(out, int64(len(vals)), 10)
		vals = append(vals, string(text[i+vs:end]))
		copied = end
		i = end + 1
	}
	if vals == nil || containsNonce(text[copied:]) {
		return nil, nil
	}
	return append(out, text[copied:]...), vals
}

// longValueAt reports whether the line at text[i:] is `<spaces><key>:
// <value>` with a qualifying value of at least min bytes (LongValue), where
// the value starts (relative to i) and where the line ends. When it is
// not, end is a position in the line from which to look for its end.
func longValueAt[T byteText](text T, i, min int) (vs, end int, ok bool) {
	j := i
	for j < len(text) && text[j] == ' ' {
		j++
	}
	k := j
	for j < len(text) && isKeyByte(text[j]) {
		j++
	}
	if j == k || !isLetter(text[k]) || j+2 >= len(text) || text[j] != ':' || text[j+1] != ' ' || !isLetter(text[j+2]) {
		return 0, j, false
	}
	v := j + 2
	end = v + base64Run(text[v:])
	if end < len(text) && text[end] != '\n' || end-v < min {
		return 0, end, false
	}
	return v - i, end, true
}

// unswapLongScalars puts vals back in place of their placeholders in
// swapped (a text swapLongScalars made, or a part of one): the text that
// was swapped.
func unswapLongScalars(swapped []byte, vals []string) []byte {
	out := make([]byte, 0, len(swapped))
	for {
		i := bytes.Index(swapped, []byte(swapNonce))
		if i < 0 {
			return append(out, swapped...)
		}
		out = append(out, swapped[:i]...)
		j := i + len(swapNonce)
		k := j
		for k < len(swapped) && swapped[k] >= '0' && swapped[k] <= '9' {
			k++
		}
		idx, err := strconv.Atoi(string(swapped[j:k]))
		if err != nil || idx < 0 || idx >= len(vals) {
			// Not a placeholder of ours (the text held none to start with).
			out = append(out, swapped[i:k]...)
		} else {
			out = append(out, vals[idx]...)
		}
		swapped = swapped[k:]
	}
}

// LongValue reports whether line l is `<spaces><key>: <value>` with a
// qualifying value of at least min bytes, and where the value starts.
func LongValue(l []byte, min int) (int, bool) {
	if bytes.IndexByte(l, '\n') >= 0 {
		return 0, false
	}
	vs, _, ok := longValueAt(l, 0, min)
	return vs, ok
}

// base64Run is the length of the run of base64 characters b starts with:
// eight bytes a step, one branch each (a blob's line is hundreds of KiB).
func base64Run[T byteText](b T) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		_ = b[i+7]
		if base64Table[b[i]]&base64Table[b[i+1]]&base64Table[b[i+2]]&base64Table[b[i+3]]&
			base64Table[b[i+4]]&base64Table[b[i+5]]&base64Table[b[i+6]]&base64Table[b[i+7]] == 0 {
			break
		}
	}
	for i < len(b) && base64Table[b[i]] != 0 {
		i++
	}
	return i
}

// allBase64 reports whether b holds only base64 characters.
func allBase64(b []byte) bool { return base64Run(b) == len(b) }

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isKeyByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// base64Table is 1 for the bytes of the standard base64 alphabet and its
// padding, 0 for every other byte.
var base64Table = func() (t [256]byte) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") {
		t[c] = 1
	}
	return t
}()

// restoreLongScalars puts vals back where their placeholders went and
// reports whether each placeholder was the whole value of one plain !!str
// scalar, each at most once and want of them in all, with the nonce
// nowhere else.
func restoreLongScalars(root *yaml.Node, vals []string, want int) bool {
	found := make([]bool, len(vals))
	count := 0
	stack := []*yaml.Node{root}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x == nil {
			continue
		}
		if strings.Contains(x.HeadComment, swapNonce) || strings.Contains(x.LineComment, swapNonce) ||
			strings.Contains(x.FootComment, swapNonce) || strings.Contains(x.Anchor, swapNonce) || strings.Contains(x.Tag, swapNonce) {
			return false
		}
		if strings.Contains(x.Value, swapNonce) {
			idx, err := strconv.Atoi(strings.TrimPrefix(x.Value, swapNonce))
			if x.Kind != yaml.ScalarNode || x.Style != 0 || x.Tag != "!!str" || err != nil ||
				idx < 0 || idx >= len(vals) || found[idx] || x.Value != swapNonce+strconv.Itoa(idx) {
				return false
			}
			found[idx] = true
			count++
			x.Value = vals[idx]
		}
		stack = append(stack, x.Content...) // aliases have none: each node once
	}
	return count == want
}
