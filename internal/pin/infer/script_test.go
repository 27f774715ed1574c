package infer

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestScriptFetches(t *testing.T) {
	const rel = "https://github.com/o/r/releases/download/v1.2.3/infrastructure-components.yaml"
	type got struct {
		Line     int
		URL, Var string
		Command  string
		KnownURL bool
	}
	for _, tc := range []struct {
		name, script string
		want         []got
	}{
		{"curl, no digest", "#!/bin/sh\ncurl -fsSLo c.yaml " + rel + "\n", []got{{2, rel, "", "curl", true}}},
		{"curl with its digest checked", "curl -fsSLo c.yaml " + rel + "\necho \"" + hex64 + "  c.yaml\" | sha256sum -c -\n", nil},
		{"wget across a continuation", "wget -qO c.yaml \\\n  " + rel + "\n", []got{{1, rel, "", "wget", true}}},
		{"URL in a defaulted variable reading another",
			"V=\"${V:-v9}\"\nU=\"${U:-https://github.com/o/r/releases/${V}/core-components.yaml}\"\nkubectl operator preload --core cluster-api -u ${U} > /tmp/x\n",
			[]got{{3, "https://github.com/o/r/releases/v9/core-components.yaml", "U", "kubectl operator preload", true}}},
		{"unset variable kept", "curl -o c.yaml https://github.com/o/r/releases/download/${TAG}/core-components.yaml\n",
			[]got{{1, "https://github.com/o/r/releases/download/${TAG}/core-components.yaml", "", "curl", false}}},
		{"gh release download of the components", "gh release download v1.0.0 --repo o/r --pattern '*-components.yaml'\n",
			[]got{{1, "https://github.com/o/r/releases/download/v1.0.0/*-components.yaml", "", "gh release download", true}}},
		{"kubectl-operator plugin binary", "kubectl-operator preload --url=" + rel + "\n", []got{{1, rel, "", "kubectl operator preload", true}}},
		{"a tool binary from a release is no components release", "curl -Lo kind https://github.com/k/kind/releases/download/v0.20.0/kind-linux-amd64\n", nil},
		{"the releases API is no components release", "curl -s https://api.github.com/repos/o/r/releases/latest | jq -r .tag_name\n", nil},
		{"a comment", "# curl -o c.yaml " + rel + "\n", nil},
		{"a URL only echoed", "echo " + rel + "\n", nil},
		{"preload from a local file", "kubectl operator preload -u file:///tmp/core-components.yaml\n", nil},
		{"two URLs, one digest", "curl -o a.yaml " + rel + "\ncurl -o b.yaml " + rel + "2.yaml\n# " + hex64 + "\n",
			[]got{{1, rel, "", "curl", true}, {2, rel + "2.yaml", "", "curl", true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out []got
			for _, f := range ScriptFetches("s.sh", []byte(tc.script)) {
				if f.File != "s.sh" {
					t.Errorf("file %q", f.File)
				}
				out = append(out, got{f.Line, f.Value, f.Name, f.Command, f.Known})
			}
			if !reflect.DeepEqual(out, tc.want) {
				t.Errorf("got  %+v\nwant %+v", out, tc.want)
			}
		})
	}
}

// TestScriptFetchesCommentedDigest: a digest only in a comment pins
// nothing (two URLs and one digest above is unpinned for lack of a
// second), so the one-URL case proves it.
func TestScriptFetchesCommentedDigest(t *testing.T) {
	s := "curl -o c.yaml https://h/v1/core-components.yaml\n# " + hex64 + "\n"
	if got := ScriptFetches("s.sh", []byte(s)); len(got) != 1 {
		t.Errorf("a digest in a comment pinned the download: %+v", got)
	}
}

func TestMakefileFetches(t *testing.T) {
	const api = `V ?= $(shell curl -s "https://api.github.com/repos/o/r/releases/latest" | jq -r .tag_name)` + "\n"
	for _, tc := range []struct {
		name, mk string
		want     int
	}{
		{"runs a script, asks the API", api + "update:\n\tV=$(V) hack/fetch.sh\n", 0},
		{"recipe fetches components", "update:\n\tcurl -fsSLo c.yaml https://github.com/o/r/releases/download/v1/core-components.yaml\n", 1},
		{"recipe fetches and checks", "update:\n\tcurl -fsSLo c.yaml https://github.com/o/r/releases/download/v1/core-components.yaml\n\techo '" + hex64 + "  c.yaml' | sha256sum -c\n", 0},
		{"URL variable with no digest variable", "CORE_URL = https://github.com/o/r/releases/download/v1/core-components.yaml\n", 1},
		{"URL variable with its digest variable", "CORE_URL = https://github.com/o/r/releases/download/v1/core-components.yaml\nCORE_SHA256 = " + hex64 + "\n", 0},
		{"a tool", "tools:\n\tcurl -Lo bin/kind https://github.com/k/kind/releases/download/v0.20.0/kind-linux-amd64\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MakefileFetches(fstest.MapFS{}, "Makefile", []byte(tc.mk))
			if len(got) != tc.want {
				t.Errorf("got %+v, want %d", got, tc.want)
			}
			for _, f := range got {
				if f.Line < 1 || !strings.Contains(f.Value, "components") {
					t.Errorf("fetch %+v", f)
				}
			}
		})
	}
}
