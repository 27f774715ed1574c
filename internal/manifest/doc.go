// Package manifest parses Kubernetes YAML manifests into objects with their lines.
//
// It is the loader's YAML layer: multi-document text split at document
// markers, each document parsed with bounds (depth, long base64 values
// swapped out before the parse), duplicate keys and non-mappings turned
// into package-load problems naming file and line, a line scanner that
// counts a components YAML's objects without parsing it, and a reader that
// writes a generated document's JSON straight from its bytes, declining
// what it cannot read exactly (docjson.go). It never panics on
// input.
package manifest
