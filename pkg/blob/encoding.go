package blob

import (
	"bytes"
	"crypto/sha256"
)

// Encoding is how a gzip blob relates to the YAML it should hold.
type Encoding int

const (
	// Reproducible: one valid gzip member with a reproducible header
	// (Header.Reproducible) that inflates to exactly the YAML. It may
	// differ from CompressBytes byte for byte (GNU gzip -9 -n deflates
	// differently) and is still what a rebuild keeps.
	Reproducible Encoding = iota
	// DirtyHeader: one valid gzip member that inflates to exactly the YAML
	// under a header that embeds a file name, a time, a comment or an
	// extra field (gzip without -n): the content is right, the bytes are
	// not reproducible.
	DirtyHeader
	// NotOf: not one valid gzip member of exactly the YAML (corrupt,
	// several members, or other content).
	NotOf
)

// EncodingOf says how gz relates to yaml, inflating at most len(yaml)+1
// bytes.
func EncodingOf(gz, yaml []byte) Encoding {
	sum := Digest(sha256.Sum256(yaml))
	info := InspectExpect(bytes.NewReader(gz), int64(len(yaml))+1, nil, &Expect{Data: yaml, SHA256: sum})
	switch {
	case info.Err != nil || info.HeaderErr != nil || info.RawSize != int64(len(yaml)) || info.RawSHA256 != sum:
		return NotOf
	case !info.Header.Reproducible():
		return DirtyHeader
	}
	return Reproducible
}

// ForYAML is the blob of yaml that a rebuild leaves in a tree, and so the
// one a release carries, given gz, the blob the tree holds now:
//
//   - gz itself when it is a Reproducible encoding of yaml (`builder
//     build` keeps it, so the tree's blob and the release agree);
//   - CompressBytes(yaml) when gz holds exactly yaml under a DirtyHeader
//     (what `builder build` writes in its place): the result does not
//     depend on the name or time the tree's header embeds;
//   - gz unchanged when it is NotOf yaml. That is drift or corruption,
//     which the blob-yaml and blob-corrupt checks report; re-encoding
//     would hide it.
//
// The Encoding returned is gz's.
func ForYAML(gz, yaml []byte) ([]byte, Encoding, error) {
	e := EncodingOf(gz, yaml)
	if e != DirtyHeader {
		return gz, e, nil
	}
	b, err := CompressBytes(yaml)
	if err != nil {
		return nil, e, err
	}
	return b, e, nil
}
