package relocate

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/pin"
)

// api/relocate.schema.json writes prefixes with pin.PrefixPattern.
func TestSchemaPrefixPattern(t *testing.T) {
	data, err := os.ReadFile("../../../api/relocate.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Releases struct {
				Items struct {
					Properties struct {
						Relocate struct {
							Items struct {
								Properties map[string]struct{ Pattern string }
							}
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"from", "to"} {
		if got := s.Properties.Releases.Items.Properties.Relocate.Items.Properties[side].Pattern; got != pin.PrefixPattern {
			t.Errorf("%s pattern %q, want pin.PrefixPattern", side, got)
		}
	}
}

func TestParseMap(t *testing.T) {
	r, err := ParseMap(" registry.k8s.io/cluster-api = mirror.example:5000/capi ")
	if err != nil || r.From != "registry.k8s.io/cluster-api" || r.To != "mirror.example:5000/capi" {
		t.Errorf("ParseMap = %+v, %v", r, err)
	}
	for _, bad := range []string{"registry.k8s.io", "=mirror.example", "registry.k8s.io=", "a/b:v1=mirror.example"} {
		if _, err := ParseMap(bad); err == nil || !strings.Contains(err.Error(), "--map") {
			t.Errorf("ParseMap(%q) = %v", bad, err)
		}
	}
}

func TestMerge(t *testing.T) {
	old := pin.Relocations{{From: "a.example/x", To: "m.example/x"}, {From: "b.example", To: "m.example/b"}}
	got := Merge(old, pin.Relocations{{From: "a.example/x", To: "n.example/x"}, {From: "c.example", To: "m.example/c"}})
	want := pin.Relocations{{From: "a.example/x", To: "n.example/x"}, {From: "b.example", To: "m.example/b"}, {From: "c.example", To: "m.example/c"}}
	if got.String() != want.String() || old[0].To != "m.example/x" {
		t.Errorf("Merge = %s, want %s (old %s untouched)", got, want, old)
	}
}
