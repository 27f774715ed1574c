package manifest

import (
	"bytes"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/pkg/model"
)

// Span is a byte range [From, To) of a text.
type Span struct{ From, To int }

// ParsedDoc is one document of a text as ParseStringDocs parses it: where
// its head (what followed "--- " on the marker line) and its text lie in
// the text (empty spans when it has none), and what parsing it gives.
type ParsedDoc struct {
	Head, Text Span
	Object     *Object // nil when the document is not a mapping or does not parse
	Problems   []model.Problem
}

// ParseStringDocs is ParseString document by document, with each
// document's place in text: what ParseDoc gives on each document of
// SplitDocs, without copying text's long values (longscalar.go).
func ParseStringDocs(text, file string) []ParsedDoc {
	return parseStringDocsWith(text, file, LongScalarMin)
}

func parseStringDocsWith(text, file string, swapMin int) []ParsedDoc {
	swapped, vals := swapLongScalars(text, swapMin)
	data, parse := swapped, func(src []byte, n *yaml.Node) error { return parseSwapped(src, vals, n) }
	if vals == nil {
		data, parse = []byte(text), func(src []byte, n *yaml.Node) error { return parseYAML(src, n, swapMin) }
	}
	at := textOffsets(data, vals)
	span := func(b []byte) Span {
		if len(b) == 0 {
			return Span{}
		}
		from := cap(data) - cap(b) // b is a subslice of data
		return Span{at(from), at(from + len(b))}
	}
	var out []ParsedDoc
	for _, d := range SplitDocs(data) {
		o, ps := parseDocUsing(d, file, parse)
		out = append(out, ParsedDoc{Head: span(d.Head), Text: span(d.Text), Object: o, Problems: ps})
	}
	return out
}

// textOffsets maps an offset of data, a text with its long values vals
// swapped out (swapLongScalars), to the offset in the text: past each
// placeholder (the nonce, which occurs nowhere else, and its index), the
// difference between its value's length and its own. An offset is never
// inside a placeholder (documents start and end at line starts).
func textOffsets(data []byte, vals []string) func(int) int {
	type shift struct{ end, by int }
	var shifts []shift
	by, pos := 0, 0
	for k, v := range vals {
		i := bytes.Index(data[pos:], []byte(swapNonce))
		if i < 0 {
			break
		}
		n := len(swapNonce) + len(strconv.Itoa(k))
		pos += i + n
		by += len(v) - n
		shifts = append(shifts, shift{pos, by})
	}
	return func(off int) int {
		d := 0
		for _, s := range shifts {
			if s.end > off {
				break
			}
			d = s.by
		}
		return off + d
	}
}
