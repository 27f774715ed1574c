package metadata

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
)

// FuzzParse: metadata.yaml from anywhere never panics the parser or the
// contract lookup; a parsed file has a contract and non-negative numbers
// in every series; and Contract agrees with Parse (it fails on what Parse
// rejects, and finds the series Parse returned).
func FuzzParse(f *testing.F) {
	f.Add([]byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries:\n- {major: 1, minor: 10, contract: v1beta1}\n"), "v1.10.1")
	f.Add([]byte("kind: Metadata\nreleaseSeries: [{major: x}]\n"), "v1.0.0")
	f.Add([]byte("kind: Metadata\nreleaseSeries: [{major: 0, minor: 7, contract: v1beta1}]\n"), "v0.7.7")
	f.Add([]byte("releaseSeries:\n- major: -1\n  minor: 2\n"), "v1.2.3")
	f.Add([]byte("releaseSeries: {}"), "1")
	f.Add([]byte("- a\n- b"), "v0.0.0-rc.1")
	f.Add([]byte("a: &a [*a, *a]\nreleaseSeries: *a\n"), "v1.1.1")
	f.Fuzz(func(t *testing.T, raw []byte, ver string) {
		md := Parse(raw)
		if md == nil {
			t.Fatal("nil metadata")
		}
		if md.Err != nil && len(md.ReleaseSeries) > 0 {
			t.Fatalf("error %v with %d series", md.Err, len(md.ReleaseSeries))
		}
		for _, s := range md.ReleaseSeries {
			if s.Contract == "" || s.Major < 0 || s.Minor < 0 {
				t.Fatalf("bad series %+v from %q", s, raw)
			}
		}
		c, err := Contract(raw, ver)
		v, verr := version.ParseGeneric(ver)
		switch {
		case err == nil && c == "":
			t.Fatalf("Contract(%q, %q) returned no contract and no error", raw, ver)
		case err == nil && (md.Err != nil || verr != nil):
			t.Fatalf("Contract(%q, %q) = %q, but the metadata or version does not parse (%v, %v)", raw, ver, c, md.Err, verr)
		case md.Err == nil && verr == nil:
			for _, s := range md.ReleaseSeries {
				if uint(s.Major) == v.Major() && uint(s.Minor) == v.Minor() {
					if err != nil || c != s.Contract {
						t.Fatalf("Contract(%q, %q) = %q, %v; Parse has series %+v", raw, ver, c, err, s)
					}
					return
				}
			}
			if err == nil {
				t.Fatalf("Contract(%q, %q) = %q for a series Parse does not have", raw, ver, c)
			}
		}
	})
}
