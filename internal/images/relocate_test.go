package images

import (
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/pin"
)

var toMirror = pin.Relocations{{From: "registry.k8s.io/cluster-api", To: "mirror.example:5000/capi"}}

func TestRelocateRoundTrip(t *testing.T) {
	out, moved, err := Relocate([]byte(rewriteDoc), toMirror)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 2 || !strings.Contains(string(out), `image: "mirror.example:5000/capi/cluster-api-controller:v1.10.1"`) {
		t.Errorf("moved %+v:\n%s", moved, out)
	}
	back, err := Unrelocate(out, toMirror)
	if err != nil || string(back) != rewriteDoc {
		t.Errorf("Unrelocate did not give the upstream bytes back (err %v):\n%s", err, back)
	}
	if same, moved, err := Relocate([]byte(rewriteDoc), nil); err != nil || string(same) != rewriteDoc || moved != nil {
		t.Errorf("no relocation changed the stream: %v, %v", moved, err)
	}
}

func TestRelocateRefusesAClash(t *testing.T) {
	doc := strings.Replace(rewriteDoc, "gcr.io/kubebuilder/kube-rbac-proxy", "mirror.example:5000/capi/kube-rbac-proxy", 1)
	out, _, err := Relocate([]byte(doc), toMirror)
	if err == nil || out != nil || !strings.Contains(err.Error(), "mirror.example:5000/capi/kube-rbac-proxy:v0.8.0") {
		t.Errorf("relocated a stream already running an image under the target prefix: %v", err)
	}
}
