package hinttest

import (
	"slices"
	"testing"
)

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"raise the inflate limit", nil},
		{"raise the inflate limit (--max-inflate)", []string{"--max-inflate"}},
		{"--plain-http for a plain HTTP registry", []string{"--plain-http"}},
		{"add it to the policy's keys (or --key)", []string{"--key"}},
		{"push it: `builder push pkg --to r/capi --key cosign.key --plain-http`", nil},
		{"or `cosign sign --key cosign.key REF`", nil},
		{"allow it: `verifier check --allow-registry r` (with --plain-http)", []string{"--allow-registry", "--plain-http"}},
		{"run `verifier check` again", nil},
		{"a diff line --- a/file and a well-known-name", nil},
	} {
		if got := Flags(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Flags(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
