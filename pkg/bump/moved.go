package bump

import "github.com/pinseal/pinseal/pkg/pin"

// MovedSources are the sources a bump of t to version `to` downloads:
// each URL with the pinned version replaced as a whole token, the way
// Bump moves them. A source whose URL does not change keeps its pin; a
// moved one has no SHA256 (its new digest is the caller's to give).
func (t *Target) MovedSources(to string) []pin.Source {
	out := make([]pin.Source, len(t.Sources))
	for i, s := range t.Sources {
		out[i] = s
		if u := replaceTokens(s.URL, t.Version, to); u != s.URL {
			out[i].URL, out[i].SHA256 = u, ""
		}
	}
	return out
}
