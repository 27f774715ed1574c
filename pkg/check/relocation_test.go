package check

import (
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
)

// A recorded relocation the images reflect is clean; an image left under a
// relocated prefix (in the YAML, in the blob) is exactly one finding each.
func TestImageRelocation(t *testing.T) {
	tr := imageTree("mirror.example/capi/cluster-api-controller:v1.10.1", "quay.io/brancz/kube-rbac-proxy:v0.15.0")
	pkg := tr.Packages[0]
	pkg.Pins = &pin.Set{Source: pin.SourcePinFile, File: &pin.File{Providers: []pin.Provider{{Kind: "CoreProvider", Name: "cluster-api",
		Version: "v1.10.1", Release: "v1.10.1", Relocate: pin.Relocations{{From: "registry.k8s.io/cluster-api", To: "mirror.example/capi"}}}}}}
	if got := imageRelocation(NewInput(tr)); len(got) != 0 {
		t.Fatalf("relocated tree: %v", got)
	}
	pkg.Images[0].Ref = "registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1"
	blobImg := pkg.Images[0]
	blobImg.File, blobImg.InBlob = "files/components.gz", true
	pkg.Images = append(pkg.Images, blobImg)
	got := imageRelocation(NewInput(tr))
	if len(got) != 2 {
		t.Fatalf("%d findings, want the YAML's and the blob's: %v", len(got), got)
	}
	for i, file := range []string{"packages/core/files/core-components.yaml", "packages/core/files/components.gz"} {
		f := got[i]
		if f.Check != ImageRelocation || f.File != file || f.Line != 100 || f.Provider != "CoreProvider/cluster-api" || (f.Severity != "" && f.Severity != report.Error) ||
			!strings.Contains(f.Message, `relocates it to "mirror.example/capi/cluster-api-controller:v1.10.1"`) || !strings.Contains(f.Hint, "builder build packages/core") {
			t.Errorf("finding %d: %+v", i, f)
		}
	}
	// Without the recorded relocation the same tree has nothing to say.
	pkg.Pins.File.Providers[0].Relocate = nil
	if got := imageRelocation(NewInput(tr)); len(got) != 0 {
		t.Errorf("no relocation recorded: %v", got)
	}
}
