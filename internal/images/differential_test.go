package images

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/pinseal/pinseal/internal/yamlbound"
	"github.com/pinseal/pinseal/internal/yamldoc"
)

const evilPod = "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: evil.example/x:latest\n"

// hiddenCases are ways a YAML reader resolves a workload's image to
// evil.example/x:latest where a line scan does not see it.
var hiddenCases = map[string]string{
	"image alias": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  annotations:\n    img: &img evil.example/x:latest\n" +
		"spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: *img\n",
	"merge key":  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        <<: {image: evil.example/x:latest}\n",
	"kind alias": "apiVersion: apps/v1\nmetadata:\n  name: d\n  labels: {k: &k Deployment}\nkind: *k\n" + evilPod,
	"marker line": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n" +
		`--- {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "evil.example/x:latest"}]}}}}` + "\n",
	"quoted kind line": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  annotations:\n    note: \"a\nkind: ConfigMap\n      b\"\n" + evilPod,
	"two specs":        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template: {spec: {containers: [{name: c, image: example.com/ok:v1}]}}\n" + evilPod,
	"list":             "apiVersion: v1\nkind: List\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d}\n  spec:\n    template:\n      spec:\n        containers:\n        - name: c\n          image: evil.example/x:latest\n",
	"escaped kind":     "apiVersion: v1\nkind: ConfigMap\n\"\\x6bind\": Deployment\nmetadata: {name: d}\n" + evilPod,
	"indented":         "  apiVersion: apps/v1\n  metadata: {name: d, annotations: {a: \"x\nkind: ConfigMap\n\"}}\n  kind: Deployment\n  spec: {template: {spec: {containers: [{name: c, image: evil.example/x:latest}]}}}\n",
	"items key":        "apiVersion: v1\nkind: ConfigMapList\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: evil.example/x:latest}]}}\n",
	"binary tag":       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: !!binary ZXZpbC5leGFtcGxlL3g6bGF0ZXN0\n",
}

// TestHiddenImages: every way lists the image, and image-ref has a
// reference to judge (or the scan reports the document as ambiguous).
func TestHiddenImages(t *testing.T) {
	for name, in := range hiddenCases {
		found, err := ScanBytes([]byte(in))
		if !slices.Contains(Distinct(found), "evil.example/x:latest") {
			t.Errorf("%s: evil.example/x:latest not listed: %+v (%v)", name, found, err)
		}
		if got := Problems(err); (name == "two specs" || name == "escaped kind") != (len(got) == 1 && got[0].Error) {
			t.Errorf("%s: problems %+v (%v)", name, got, err)
		}
	}
}

// operatorImages are the images sigs.k8s.io/yaml (what kubectl and the
// cluster-api-operator decode with) finds in a stream, split into
// documents at every marker line (a marker line with content starts the
// next document: older apimachinery kept such a line, newer refuses the
// stream). Documents whose aliases expand past the bounds are skipped:
// the scan reports them.
func operatorImages(in []byte) []string {
	var docs [][]byte
	cur := []byte{}
	for l := range bytes.Lines(in) {
		if yamldoc.Marker(l) != "" {
			docs = append(docs, cur)
			cur = nil
			if markerContent(l) {
				cur = append(cur, l...)
			}
			continue
		}
		cur = append(cur, l...)
	}
	docs = append(docs, cur)
	var out []string
	for _, d := range docs {
		if _, err := yamlbound.Measure(d, yamlbound.Limits{MaxNodes: maxNodes, MaxScalarBytes: maxScalarBytes}); err != nil {
			var be *yamlbound.Error
			if errors.As(err, &be) || bytes.IndexByte(d, '*') >= 0 {
				continue
			}
		}
		var obj any
		if sigsyaml.Unmarshal(d, &obj) != nil {
			continue
		}
		for _, f := range mapObject(obj, 0) {
			out = append(out, f.Ref)
		}
	}
	return out
}

// FuzzDifferential: every workload image sigs.k8s.io/yaml finds is in the
// scan's inventory, or the scan reports a problem (a document too large
// or ambiguous, a value that is no reference) for image-ref to raise.
func FuzzDifferential(f *testing.F) {
	for _, in := range hiddenCases {
		f.Add([]byte(in))
	}
	for _, in := range scanCases {
		if len(in) < 4<<10 {
			f.Add([]byte(in))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 64<<10 {
			return
		}
		found, err := ScanBytes(in)
		if len(Problems(err)) > 0 {
			return
		}
		listed := Distinct(found)
		for _, ref := range operatorImages(in) {
			if !slices.Contains(listed, strings.TrimSpace(ref)) {
				t.Fatalf("sigs.k8s.io/yaml finds image %q, the scan lists %q (%v)", ref, listed, err)
			}
		}
	})
}
