package metadata

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
	"github.com/pinseal/pinseal/pkg/model"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in, kind, err string
		series              int
	}{
		{"full", "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 10\n  contract: v1beta1\n", "Metadata", "", 1},
		{"no kind", "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries:\n- {major: 0, minor: 7, contract: v1beta1}\n- {major: 0, minor: 8, contract: v1beta2}\n", "", "", 2},
		{"no apiVersion", "releaseSeries:\n- {major: 0, minor: 7, contract: v1beta1}\n", "", "", 1},
		{"anchors", "s: &s {major: 1, minor: 2, contract: v1beta1}\nreleaseSeries: [*s]\n", "", "", 1},
		{"empty list", "releaseSeries: []\n", "", "", 0},
		{"empty", "  \n", "", "empty", 0},
		{"comments only", "# nothing\n", "", "empty", 0},
		{"wrong kind", "kind: Other\nreleaseSeries: []\n", "Other", "kind", 0},
		{"wrong apiVersion", "apiVersion: v1\nreleaseSeries: []\n", "", "apiVersion", 0},
		{"no series", "kind: Metadata\n", "Metadata", "no releaseSeries", 0},
		{"null series", "releaseSeries:\n", "", "no releaseSeries", 0},
		{"series not a list", "releaseSeries: 3\n", "", "not a list", 0},
		{"entry not a mapping", "releaseSeries: [3]\n", "", "not a mapping", 0},
		{"string major", "releaseSeries:\n- {major: \"1\", minor: 2, contract: v1beta1}\n", "", "not an integer", 0},
		{"float major", "releaseSeries:\n- {major: 1.5, minor: 2, contract: v1beta1}\n", "", "not an integer", 0},
		{"no minor", "releaseSeries:\n- major: 1\n  contract: v1beta1\n", "", "minor missing", 0},
		{"negative minor", "releaseSeries:\n- {major: 1, minor: -2, contract: v1beta1}\n", "", "non-negative", 0},
		{"missing contract", "releaseSeries:\n- {major: 1, minor: 2}\n", "", "contract missing", 0},
		{"missing contract in another series", "releaseSeries:\n- {major: 1, minor: 2, contract: v1beta1}\n- {major: 1, minor: 3}\n", "", "releaseSeries[1]", 0},
		{"huge major", "releaseSeries:\n- {major: 99999999999999, minor: 2, contract: v1beta1}\n", "", "non-negative integer", 0},
		{"not yaml", "releaseSeries: [\n", "", "does not parse", 0},
		{"a list", "- a\n", "", "not a mapping", 0},
		{"duplicate", "releaseSeries: []\nreleaseSeries: []\n", "", "duplicate key \"releaseSeries\" (lines 1 and 2)", 0},
		{"duplicate in a series", "releaseSeries:\n- {major: 1, minor: 2, contract: v1beta1, minor: 3}\n", "", "duplicate key \"minor\"", 0},
		{"duplicate in an unknown field", "x: {a: 1, a: 2}\nreleaseSeries: []\n", "", "duplicate key \"a\"", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := Parse([]byte(tc.in))
			if tc.err == "" && md.Err != nil || tc.err != "" && (md.Err == nil || !strings.Contains(md.Err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", md.Err, tc.err)
			}
			if md.Kind != tc.kind || len(md.ReleaseSeries) != tc.series {
				t.Errorf("metadata = %+v, want kind %q and %d series", md, tc.kind, tc.series)
			}
		})
	}
	md := Parse([]byte("releaseSeries:\n- {major: 0, minor: 8, contract: v1beta2}\n"))
	if s := md.ReleaseSeries[0]; s.Major != 0 || s.Minor != 8 || s.Contract != "v1beta2" {
		t.Errorf("series = %+v", s)
	}
}

func TestContract(t *testing.T) {
	md := []byte("releaseSeries:\n- major: 1\n  minor: 10\n  contract: v1beta1\n- major: 1\n  minor: 11\n  contract: v1beta2\n")
	tests := []struct {
		md                     string
		version, want, wantErr string
	}{
		{"", "v1.10.1", "v1beta1", ""},
		{"", "v1.11.0-rc.1", "v1beta2", ""},
		{"", "1.11.3", "v1beta2", ""},
		{"", "v1.12.0", "", "no releaseSeries entry for 1.12 (has: 1.10, 1.11)"},
		{"", "latest", "", "version"},
		// What the verifier flags, the builder refuses too.
		{"releaseSeries:\n- {major: 1, minor: 10, contract: v1beta1}\nreleaseSeries: []\n", "v1.10.1", "", "duplicate key"},
		{"kind: Other\nreleaseSeries:\n- {major: 1, minor: 10, contract: v1beta1}\n", "v1.10.1", "", "kind"},
		{"releaseSeries:\n- {major: 1, minor: 10, contract: v1beta1}\n- {major: 1, minor: 9}\n", "v1.10.1", "", "contract missing"},
	}
	for _, tt := range tests {
		raw := md
		if tt.md != "" {
			raw = []byte(tt.md)
		}
		got, err := Contract(raw, tt.version)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Contract(%s) error = %v, want %q", tt.version, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Contract(%s) = %q, %v; want %q", tt.version, got, err, tt.want)
		}
	}
}

// TestParseBounds: metadata over MaxBytes, or whose aliases expand past
// MaxNodes, is refused unparsed, fast, saying which bound; metadata just
// within them parses.
func TestParseBounds(t *testing.T) {
	var laughs strings.Builder
	laughs.WriteString("l0: &l0 [{major: 1, minor: 0, contract: v1beta1}]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	laughs.WriteString("releaseSeries: *l9\n")
	big := "releaseSeries:\n" + strings.Repeat("- {major: 1, minor: 0, contract: v1beta1}\n", MaxBytes/40)
	fits := "releaseSeries:\n" + strings.Repeat("- {major: 1, minor: 0, contract: v1beta1}\n", 1000)
	for _, tc := range []struct{ name, raw, want string }{
		{"aliases", laughs.String(), "more than 10000 YAML nodes once its aliases are expanded"},
		{"size", big, fmt.Sprintf("more than the %d read", MaxBytes)},
		// Every document is measured, not only the one decoded.
		{"aliases in a later document", fits + "---\n" + laughs.String(), "more than 10000 YAML nodes once its aliases are expanded"},
		{"bad later document", fits + "---\n: [\n", "does not parse"},
	} {
		// A bound of the work, in CPU time (a busy machine stretches
		// wall-clock time, not this): expanded, the aliases take minutes.
		var md *model.Metadata
		used := timebound.Work(func() { md = Parse([]byte(tc.raw)) })
		if md.Err == nil || !strings.Contains(md.Err.Error(), tc.want) || used > time.Second {
			t.Errorf("%s: %v after %s of CPU; want an error saying %q", tc.name, md.Err, used, tc.want)
		}
	}
	if md := Parse([]byte(fits)); md.Err != nil || len(md.ReleaseSeries) != 1000 {
		t.Errorf("1000 series: %v", md.Err)
	}
}
