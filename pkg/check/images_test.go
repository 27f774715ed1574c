package check

import (
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

func imageTree(refs ...string) *model.Tree {
	p := &model.Package{Path: "packages/core", Layout: &model.Layout{}}
	for i, r := range refs {
		p.Images = append(p.Images, model.Image{Ref: r, Release: "v1.10.1", Providers: []string{"CoreProvider/cluster-api"},
			Workload: "Deployment/capi-controller-manager", Container: "manager", Location: model.Location{File: "files/core-components.yaml", Line: 100 + i}})
	}
	return &model.Tree{Packages: []*model.Package{p}}
}

func TestImageRef(t *testing.T) {
	const d = "@sha256:0123456789012345678901234567890123456789012345678901234567890123"
	for _, tc := range []struct {
		ref  string
		sev  report.Severity // "" when no finding
		want string
	}{
		{"registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1", "", ""},
		{"registry.k8s.io/cluster-api/cluster-api-controller:main", report.Error, `the moving tag "main"`},
		{"registry.k8s.io/cluster-api/cluster-api-controller:latest", report.Error, `the moving tag "latest"`},
		{"registry.k8s.io/cluster-api/cluster-api-controller:master", report.Error, `the moving tag "master"`},
		{"registry.k8s.io/cluster-api/cluster-api-controller", report.Error, "no tag (it means latest)"},
		{"registry.example:5000/cluster-api-controller", report.Error, "no tag"}, // the port is not a tag
		{"registry.k8s.io/cluster-api/cluster-api-controller:main" + d, "", ""},  // the digest decides
		{"registry.k8s.io/cluster-api/cluster-api-controller" + d, "", ""},
		{"registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1" + d, "", ""},
		{"registry.k8s.io/cluster-api/cluster-api-controller:v1.9.0" + d, report.Warning, `its tag "v1.9.0" is not the release v1.10.1`},
		{"quay.io/brancz/kube-rbac-proxy:v0.15.0" + d, "", ""}, // a sidecar's own version
		{"registry.k8s.io/cluster-api/cluster-api-controller:nightly", "", ""},
	} {
		got := imageRef(NewInput(imageTree(tc.ref)), MovingTags)
		if tc.sev == "" {
			if len(got) != 0 {
				t.Errorf("%s: unexpected %v", tc.ref, got)
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("%s: %d findings, want 1", tc.ref, len(got))
			continue
		}
		f := got[0]
		sev := f.Severity
		if sev == "" {
			sev = report.Error // the engine's default for the catalog entry
		}
		if f.Check != ImageRef || sev != tc.sev || !strings.Contains(f.Message, tc.want) || !strings.Contains(f.Message, tc.ref) ||
			f.File != "packages/core/files/core-components.yaml" || f.Line != 100 || f.Provider != "CoreProvider/cluster-api" {
			t.Errorf("%s: %+v", tc.ref, f)
		}
	}
	// A policy's moving tag.
	c := imageRefCheck([]string{"nightly"})
	if got := c.Run(NewInput(imageTree("registry.k8s.io/cluster-api/cluster-api-controller:nightly"))); len(got) != 1 || !strings.Contains(got[0].Message, `"nightly"`) {
		t.Errorf("movingTags [nightly]: %v", got)
	}
	if got := c.Run(NewInput(imageTree("x/y:main"))); len(got) != 1 {
		t.Errorf("a policy's tags add to the built-in ones: %v", got)
	}
}

// A workload document too large to be read for images is a warning naming
// the file, the line and the kind; without it the tree is clean.
func TestImageRefUnreadWorkload(t *testing.T) {
	tr := imageTree("registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1")
	if got := imageRef(NewInput(tr), MovingTags); len(got) != 0 {
		t.Fatalf("clean tree: %v", got)
	}
	tr.Packages[0].UnreadWorkloads = []model.UnreadWorkload{{Release: "v1.10.1", Providers: []string{"CoreProvider/cluster-api"}, Kind: "Deployment",
		Why: "it is over the 256 KiB a workload document may have to be parsed", InBlob: true, Location: model.Location{File: "files/components.gz", Line: 7}}}
	got := imageRef(NewInput(tr), MovingTags)
	if len(got) != 1 || got[0].Severity != report.Warning || got[0].File != "packages/core/files/components.gz" || got[0].Line != 7 ||
		!strings.Contains(got[0].Message, "a Deployment document at files/components.gz:7 (line 7 of what the blob inflates to) was not read for images") {
		t.Errorf("unread workload: %+v", got)
	}
}
