package operator

import (
	"strings"
	"testing"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestParseSourceOperatorInputs: the inputs of the operator's own test of
// its split (v0.28.0 internal/controller/oci_source_parse_test.go,
// Test_parseOCISource, each also with http://), read as the operator
// reads them. Its test stops at the split; the fetch then hands the
// repository to oras-go, which refuses "image" (no registry host), so that
// case is a problem here.
func TestParseSourceOperatorInputs(t *testing.T) {
	tests := []struct {
		url, version, wantRepo, wantRef string
		fromVersion                     bool
		rule                            Rule // the fetch fails: "" = it does not
	}{
		{url: "registry/image:v1.1.0", version: "v1.2.0", wantRepo: "registry/image", wantRef: "v1.1.0"},
		{url: "registry/image", version: "v1.2.0", wantRepo: "registry/image", wantRef: "v1.2.0", fromVersion: true},
		{url: "registry:5050/image", version: "v1.2.0", wantRepo: "registry:5050/image", wantRef: "v1.2.0", fromVersion: true},
		{url: "registry:5050/image:v1.1.0", version: "v1.2.0", wantRepo: "registry:5050/image", wantRef: "v1.1.0"},
		{url: "image", version: "v1.2.0", rule: RuleUnreadable},
	}
	for _, tc := range tests {
		for _, plain := range []bool{false, true} {
			in := tc.url
			if plain {
				in = "http://" + in
			}
			s, err := ParseSource(in, tc.version)
			if tc.rule != "" {
				p, ok := err.(*Problem)
				if !ok || p.Rule != tc.rule || p.Hint == "" || p.Source == "" {
					t.Errorf("ParseSource(%q) = %+v, %v; want rule %s", in, s, err, tc.rule)
				}
				continue
			}
			if err != nil || s.Repository != tc.wantRepo || s.Reference != tc.wantRef || s.PlainHTTP != plain || s.TagFromVersion != tc.fromVersion || s.Digest || s.Ignored != "" {
				t.Errorf("ParseSource(%q, %q) = %+v, %v; want %s and %s", in, tc.version, s, err, tc.wantRepo, tc.wantRef)
			}
		}
	}
}

// TestParseSource: the forms the operator reads past its own tests, with
// what oras-go (the operator's CopyOCIStore) then makes of them.
func TestParseSource(t *testing.T) {
	tests := []struct {
		in, version        string
		repo, host, ref    string
		plain, fromVersion bool
		isDigest           bool
		ignored            string
		rule               Rule
		inMessage          string
	}{
		{in: "ghcr.io/acme/capi/core-cluster-api:v1.10.1-core", version: "v1", repo: "ghcr.io/acme/capi/core-cluster-api", host: "ghcr.io", ref: "v1.10.1-core"},
		{in: "ghcr.io/acme/core", version: "v1.10.1-core", repo: "ghcr.io/acme/core", host: "ghcr.io", ref: "v1.10.1-core", fromVersion: true},
		{in: "127.0.0.1:5000/capi/core", version: "v1", repo: "127.0.0.1:5000/capi/core", host: "127.0.0.1:5000", ref: "v1", fromVersion: true},
		{in: "http://127.0.0.1:5000/capi/core:v2", version: "v1", repo: "127.0.0.1:5000/capi/core", host: "127.0.0.1:5000", ref: "v2", plain: true},
		// An uppercase host is a host; only paths are lowercase.
		{in: "Registry.Example.com/capi/core", version: "v1", repo: "Registry.Example.com/capi/core", host: "Registry.Example.com", ref: "v1", fromVersion: true},
		// HOST/REPO:A:B: three parts, so the repository is HOST/REPO:A
		// (its tag A parsed and dropped) and the operator fetches B.
		{in: "ghcr.io/x:a:b", version: "v1", repo: "ghcr.io/x", host: "ghcr.io", ref: "b", ignored: "a"},
		// With a port, TAG@DIGEST is the third part: oras-go fetches the
		// digest and drops the tag.
		{in: "h:5000/x:v1@" + digest, version: "v1", repo: "h:5000/x", host: "h:5000", ref: digest, isDigest: true},
		// ... and a digest where the tag goes is fetched as a digest.
		{in: "h:5000/x:" + digest, version: "v1", repo: "h:5000/x", host: "h:5000", ref: digest, isDigest: true},
		{in: "https://ghcr.io/x:v1", rule: RuleScheme, inMessage: `"https://ghcr.io/x"`},
		{in: "oci://ghcr.io/x", version: "v1", rule: RuleScheme},
		{in: "HTTP://ghcr.io/x", version: "v1", rule: RuleScheme},
		{in: "ghcr.io/x@" + digest, version: "v1", rule: RuleDigest, inMessage: `"ghcr.io/x@sha256"`},
		{in: "h:5000/x@" + digest, version: "v1", rule: RuleDigest},
		{in: "ghcr.io/x:v1@" + digest, version: "v1", rule: RuleDigest},
		{in: "ghcr.io/x:", version: "v1", rule: RuleTag, inMessage: "ends in ':'"},
		{in: "ghcr.io/x:v1+build", version: "v1", rule: RuleTag},
		{in: "ghcr.io/x", version: "v1+build", rule: RuleTag, inMessage: "spec.version"},
		{in: "ghcr.io/x", rule: RuleVersion},
		{in: "ghcr.io", version: "v1", rule: RuleUnreadable, inMessage: "no repository path"},
		{in: "ghcr.io/", version: "v1", rule: RuleUnreadable},
		{in: "ghcr.io//x", version: "v1", rule: RuleUnreadable},
		{in: "ghcr.io/Acme/x", version: "v1", rule: RuleUnreadable, inMessage: "lowercase"},
		{in: "/x", version: "v1", rule: RuleUnreadable},
		{in: "", rule: RuleUnreadable, inMessage: "names no repository"},
		{in: "http://", version: "v1", rule: RuleUnreadable},
		{in: " ghcr.io/x", version: "v1", rule: RuleUnreadable},
	}
	for _, tc := range tests {
		s, err := ParseSource(tc.in, tc.version)
		if tc.rule != "" {
			p, ok := err.(*Problem)
			if !ok || p.Rule != tc.rule || !strings.Contains(p.Message, tc.inMessage) || p.Hint == "" {
				t.Errorf("ParseSource(%q, %q) = %+v, %v; want rule %s with %q", tc.in, tc.version, s, err, tc.rule, tc.inMessage)
			}
			continue
		}
		if err != nil || s.Repository != tc.repo || s.Host != tc.host || s.Reference != tc.ref || s.PlainHTTP != tc.plain ||
			s.TagFromVersion != tc.fromVersion || s.Digest != tc.isDigest || s.Ignored != tc.ignored {
			t.Errorf("ParseSource(%q, %q) = %+v, %v", tc.in, tc.version, s, err)
		}
	}
}
