package manifest

import "bytes"

// Line is the 1-based line of the document's first line in the whole text.
func (d Doc) Line() int { return d.line }

// Bytes are the document's bytes as ParseDoc parses them: what followed
// its "--- " marker, then its lines.
func (d Doc) Bytes() []byte { return d.bytes() }

// MayBeKind tells whether the document has a line "kind: KIND" at column
// 0, the way generated manifests write it: a hint (a document that does
// not may still parse to an object of that kind), never a parse.
func (d Doc) MayBeKind(kind string) bool {
	for _, b := range [][]byte{d.Head, d.Text} {
		for len(b) > 0 {
			i := bytes.Index(b, []byte("kind: "))
			if i < 0 {
				break
			}
			rest := b[i+len("kind: "):]
			if (i == 0 || b[i-1] == '\n') && bytes.HasPrefix(rest, []byte(kind)) &&
				(len(rest) == len(kind) || rest[len(kind)] == '\n' || rest[len(kind)] == '\r' || rest[len(kind)] == ' ') {
				return true
			}
			b = rest
		}
	}
	return false
}
