package load

import (
	"regexp"
	"testing"
	"unicode/utf8"
)

// keyLineRE is the rule keyLine implements, as the regular expression it
// replaced (compiled per object, it cost more than the search itself).
func keyLineRE(key, val string, indented bool) *regexp.Regexp {
	lead := `^\s*`
	if indented {
		lead = `^\s+`
	}
	return regexp.MustCompile(lead + regexp.QuoteMeta(key) + `:\s*["']?` + regexp.QuoteMeta(val) + `["']?\s*(#.*)?$`)
}

var keyLineSeeds = []struct {
	ln, key, val string
	indented     bool
}{
	{"kind: CoreProvider", "kind", "CoreProvider", false},
	{"  kind: 'CoreProvider' # the core", "kind", "CoreProvider", false},
	{"kind: \"CoreProvider\"\r", "kind", "CoreProvider", false},
	{"kind: CoreProviders", "kind", "CoreProvider", false},
	{"kind:CoreProvider", "kind", "CoreProvider", false},
	{"kind: CoreProvider\"\"", "kind", "CoreProvider", false},
	{"kind: CoreProvider#x", "kind", "CoreProvider", false},
	{"  name: cluster-api", "name", "cluster-api", true},
	{"name: cluster-api", "name", "cluster-api", true},
	{"\tname:   \"cluster-api' # x", "name", "cluster-api", true},
	{"  name: cluster-api-x", "name", "cluster-api", true},
	{"  name: 'x", "name", "'x", true},
	{"  name: x", "name", "'x", true},
	{"  namespace: x", "name", "x", true},
	{"", "kind", "A", false},
	{" kind : A", "kind", "A", false},
}

func TestKeyLine(t *testing.T) {
	for _, s := range keyLineSeeds {
		want := keyLineRE(s.key, s.val, s.indented).MatchString(s.ln)
		if got := keyLine(s.ln, s.key, s.val, s.indented); got != want {
			t.Errorf("keyLine(%q, %q, %q, %v) = %v, the expression says %v", s.ln, s.key, s.val, s.indented, got, want)
		}
	}
}

// FuzzKeyLine: keyLine says what the regular expression says, for any line
// and value.
func FuzzKeyLine(f *testing.F) {
	for _, s := range keyLineSeeds {
		f.Add(s.ln, s.val, s.indented)
	}
	f.Fuzz(func(t *testing.T, ln, val string, indented bool) {
		if !utf8.ValidString(val) {
			return // not a Kubernetes kind or name (and not an expression)
		}
		for _, key := range []string{"kind", "name"} {
			want := keyLineRE(key, val, indented).MatchString(ln)
			if got := keyLine(ln, key, val, indented); got != want {
				t.Fatalf("keyLine(%q, %q, %q, %v) = %v, the expression says %v", ln, key, val, indented, got, want)
			}
		}
	})
}
