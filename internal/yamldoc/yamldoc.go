// Package yamldoc reads the document structure of a YAML stream line by
// line, without parsing it.
package yamldoc

import "bytes"

// Marker returns "---" or "..." when line is a document marker (one of
// them at column 0, then the end of the line or a blank), else "".
func Marker(line []byte) string {
	if len(line) < 3 || (line[0] != '-' && line[0] != '.') {
		return ""
	}
	for _, m := range []string{"---", "..."} {
		if bytes.HasPrefix(line, []byte(m)) {
			rest := line[3:]
			if len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r' {
				return m
			}
		}
	}
	return ""
}
