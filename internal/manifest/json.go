package manifest

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// JSON is the document under n as JSON: byte for byte what json.Marshal
// makes of n decoded into an any (nil when either fails), which is what
// the API server's JSON decoding of a manifest reads. Mappings of string
// keys, sequences and the common scalars are written as they stand;
// a scalar of another kind goes through Decode and Marshal alone, and a
// document with an alias, a merge key, a tag on a collection or a key that
// is not a string through Decode and Marshal whole.
func JSON(n *yaml.Node) []byte { return AppendJSON(nil, n) }

// AppendJSON is JSON appended to dst (a new slice when it takes the long
// way, nil when that fails), for a caller that reuses its buffer.
func AppendJSON(dst []byte, n *yaml.Node) []byte {
	w := jsonWriter{buf: dst}
	switch w.node(n) {
	case jsonDone:
		return w.buf
	case jsonFailed:
		return nil
	}
	return jsonByDecode(n)
}

// jsonByDecode is JSON the long way: Decode into an any, then Marshal.
func jsonByDecode(n *yaml.Node) []byte {
	var v any
	if n.Decode(&v) != nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

type jsonResult int

const (
	jsonDone   jsonResult = iota
	jsonFailed            // Decode or Marshal fails on the document
	jsonUnsure            // the direct way cannot tell: take the long way
)

type jsonWriter struct {
	buf []byte
}

func (w *jsonWriter) node(n *yaml.Node) jsonResult {
	switch n.Kind {
	case yaml.ScalarNode:
		return w.scalar(n)
	case yaml.MappingNode:
		if n.Style&yaml.TaggedStyle != 0 {
			return jsonUnsure
		}
		keys := make([]int, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Style&yaml.TaggedStyle != 0 || k.ShortTag() != "!!str" {
				return jsonUnsure
			}
			keys = append(keys, i)
		}
		slices.SortFunc(keys, func(a, b int) int { return strings.Compare(n.Content[a].Value, n.Content[b].Value) })
		w.buf = append(w.buf, '{')
		for j, i := range keys {
			if j > 0 {
				if n.Content[keys[j-1]].Value == n.Content[i].Value {
					return jsonUnsure // a duplicate key: Decode says what
				}
				w.buf = append(w.buf, ',')
			}
			w.buf = appendJSONString(w.buf, n.Content[i].Value)
			w.buf = append(w.buf, ':')
			if r := w.node(n.Content[i+1]); r != jsonDone {
				return r
			}
		}
		w.buf = append(w.buf, '}')
		return jsonDone
	case yaml.SequenceNode:
		if n.Style&yaml.TaggedStyle != 0 {
			return jsonUnsure
		}
		w.buf = append(w.buf, '[')
		for i, c := range n.Content {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			if r := w.node(c); r != jsonDone {
				return r
			}
		}
		w.buf = append(w.buf, ']')
		return jsonDone
	}
	return jsonUnsure // aliases, documents
}

// scalar writes the scalar n as Decode into an any and Marshal would:
// strings, null, true and false and decimal integers directly, others
// through Decode and Marshal (the same as within the whole document: a
// scalar's decoding depends only on its node).
func (w *jsonWriter) scalar(n *yaml.Node) jsonResult {
	if n.Style&yaml.TaggedStyle == 0 {
		switch n.ShortTag() {
		case "!!str":
			w.buf = appendJSONString(w.buf, n.Value)
			return jsonDone
		case "!!null":
			w.buf = append(w.buf, "null"...)
			return jsonDone
		case "!!bool":
			if n.Value == "true" || n.Value == "false" {
				w.buf = append(w.buf, n.Value...)
				return jsonDone
			}
		case "!!int":
			if plainInt(n.Value) {
				w.buf = append(w.buf, n.Value...)
				return jsonDone
			}
		}
	}
	var v any
	if n.Decode(&v) != nil {
		return jsonFailed
	}
	b, err := json.Marshal(v)
	if err != nil {
		return jsonFailed
	}
	w.buf = append(w.buf, b...)
	return jsonDone
}

// plainInt: s is a decimal integer as strconv.Itoa writes it, and fits an
// int64 (so Decode gives it back as an int that Marshal writes as s).
func plainInt(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > 18 || (d[0] == '0' && (len(d) > 1 || len(s) > 1)) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// jsonSafe are the ASCII characters encoding/json writes as they are.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s quoted as encoding/json quotes strings: the
// HTML characters <, > and & escaped, control characters escaped, invalid
// UTF-8 replaced by U+FFFD and U+2028 and U+2029 escaped.
func appendJSONString[S ~string | ~[]byte](dst []byte, s S) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, `\b`...)
			case '\f':
				dst = append(dst, `\f`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			case '\t':
				dst = append(dst, `\t`...)
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		var rb [utf8.UTFMax]byte
		r, size := utf8.DecodeRune(rb[:copy(rb[:], s[i:])])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
