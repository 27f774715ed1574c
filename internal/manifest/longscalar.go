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
		if fastParse(swapped, vals, n) {
			return nil
		}
		*n = yaml.Node{}
	}
	return yaml.Unmarshal(src, n)
}

// fastParse parses swapped and restores vals; false when the result is
// not the plain parse's (n is then to be discarded).
func fastParse(swapped []byte, vals []string, n *yaml.Node) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if yaml.Unmarshal(swapped, n) != nil {
		return false
	}
	return restoreLongScalars(n, vals)
}

// swapLongScalars returns text with every qualifying value replaced by a
// placeholder, and the values in placeholder order; nil values when none
// qualifies or text holds the nonce.
func swapLongScalars(text []byte, min int) ([]byte, []string) {
	if min < 1 || len(text) < min {
		return nil, nil
	}
	var out []byte
	var vals []string
	copied := 0
	for i := 0; i < len(text); {
		lineEnd, next := len(text), len(text)
		if e := bytes.IndexByte(text[i:], '\n'); e >= 0 {
			lineEnd, next = i+e, i+e+1
		}
		if lineEnd-i >= min {
			if vs, ok := LongValue(text[i:lineEnd], min); ok {
				if out == nil {
					if bytes.Contains(text, []byte(swapNonce)) {
						return nil, nil
					}
					out = make([]byte, 0, len(text)/4)
				}
				out = append(out, text[copied:i+vs]...)
				out = append(out, swapNonce...)
				out = strconv.AppendInt(out, int64(len(vals)), 10)
				vals = append(vals, string(text[i+vs:lineEnd]))
				copied = lineEnd
			}
		}
		i = next
	}
	if vals == nil {
		return nil, nil
	}
	return append(out, text[copied:]...), vals
}

// longValue reports whether line l is `<spaces><key>: <value>` with a
// qualifying value of at least min bytes, and where the value starts.
func LongValue(l []byte, min int) (int, bool) {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	k := i
	for i < len(l) && isKeyByte(l[i]) {
		i++
	}
	if i == k || !isLetter(l[k]) || i+2 >= len(l) || l[i] != ':' || l[i+1] != ' ' {
		return 0, false
	}
	vs := i + 2
	if len(l)-vs < min || !isLetter(l[vs]) {
		return 0, false
	}
	if !allBase64(l[vs:]) {
		return 0, false
	}
	return vs, true
}

// allBase64 reports whether b holds only base64 characters: eight bytes a
// step, one branch each (a blob's line is hundreds of KiB).
func allBase64(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := b[i : i+8 : i+8]
		if base64Table[w[0]]&base64Table[w[1]]&base64Table[w[2]]&base64Table[w[3]]&
			base64Table[w[4]]&base64Table[w[5]]&base64Table[w[6]]&base64Table[w[7]] == 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if base64Table[b[i]] == 0 {
			return false
		}
	}
	return true
}

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
// reports whether each was the whole value of one plain !!str scalar,
// exactly once, with the nonce nowhere else.
func restoreLongScalars(root *yaml.Node, vals []string) bool {
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
	return count == len(vals)
}
