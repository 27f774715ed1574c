package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
)

// TestPinDigestPatched covers a pin with patches: the patched components
// file is compared with its pin through its upstream digest (the loader
// reverses the patches), every other file as it is.
func TestPinDigestPatched(t *testing.T) {
	const comp = "files/core-components.yaml"
	const patchFile = "patches/0001-startup-probe.diff"
	upstream := digest(yamlText("cluster-api")) // what the pin's sha256 is of
	patched := func(t *model.Tree) *model.File {
		pkg := core(t)
		pkg.Pins.File.Providers[0].Patches = []string{patchFile}
		f := pkg.Files[comp]
		f.SHA256 = digest("patched")
		pkg.ConfigMaps[0].Components.Blob.RawSHA256 = f.SHA256 // the blob holds the patched YAML
		return f
	}
	tests := []struct {
		name   string
		mutate func(t *model.Tree)
		checks []string // checks that report, in order of the findings
		want   []string // words in the pin-digest finding's message or hint
	}{
		{
			name: "patches reverse to the pinned upstream",
			mutate: func(t *model.Tree) {
				d := upstream
				patched(t).Upstream = &d
			},
		},
		{
			name: "edited outside the patches",
			mutate: func(t *model.Tree) {
				d := digest("edited")
				patched(t).Upstream = &d
			},
			checks: []string{model.CheckPinDigest},
			want: []string{comp + " does not match its pin in pin.yaml: sha256 " + hexOf("edited") + " with its patches (" + patchFile + ") reversed, pinned " + hexOf(yamlText("cluster-api")),
				"`builder build packages/system/core` re-vendors it", "put it in a patch listed in pin.yaml"},
		},
		{
			name: "edited inside a hunk",
			mutate: func(t *model.Tree) {
				patched(t).UpstreamErr = "patch " + patchFile + " hunk #1 @@ -10,6 +10,12 @@ (line 9 of the patch) cannot be reversed on " + comp + ": line 12 is \"x\", the patched file should have \"y\""
			},
			checks: []string{model.CheckPinDigest},
			want: []string{comp + " is not the pinned upstream (https://example.com/cluster-api/v1.10.1/components.yaml) plus the patches pin.yaml lists (" + patchFile + ")",
				"hunk #1 @@ -10,6 +10,12 @@", "`builder build packages/system/core`", "update the patch"},
		},
		{
			name: "patches listed, but a file they do not change was edited",
			mutate: func(t *model.Tree) {
				d := upstream
				patched(t).Upstream = &d
				core(t).Files["files/metadata.yaml"].SHA256 = digest("tampered")
			},
			checks: []string{model.CheckPinDigest},
			want:   []string{"files/metadata.yaml does not match its pin in pin.yaml: sha256 " + hexOf("tampered") + ", pinned"},
		},
		{
			name: "patches the loader could not read are reported once",
			mutate: func(t *model.Tree) {
				patched(t)
				pkg := core(t)
				pkg.Problems = append(pkg.Problems, model.Problem{Check: model.CheckPinDigest, Provider: "CoreProvider/cluster-api",
					Location: model.Location{File: "pin.yaml"}, Message: "pin.yaml lists patch " + patchFile + " for CoreProvider/cluster-api, but it cannot be read", Hint: "restore it"})
			},
			checks: []string{model.CheckPinDigest},
			want:   []string{"cannot be read"},
		},
		{
			name: "patches listed, no upstream digest and no problem: the raw bytes are compared",
			mutate: func(t *model.Tree) {
				patched(t)
			},
			checks: []string{model.CheckPinDigest},
			want:   []string{comp + " does not match its pin in pin.yaml: sha256 " + hexOf("patched")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := cleanTree()
			tc.mutate(tree)
			fs := runAll(tree)
			var got []string
			var all string
			for _, f := range fs {
				got = append(got, f.Check)
				all += f.Message + "\n" + f.Hint + "\n"
			}
			if !slices.Equal(got, tc.checks) {
				t.Fatalf("findings of %v, want %v:\n%s", got, tc.checks, all)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("finding lacks %q:\n%s", w, all)
				}
			}
			for _, f := range fs {
				if f.Check == model.CheckPinDigest && f.File != "packages/system/core/"+comp && f.File != "packages/system/core/files/metadata.yaml" && f.File != "packages/system/core/pin.yaml" {
					t.Errorf("pin-digest finding at %q", f.File)
				}
			}
		})
	}
}

// TestPinMissingIgnoresBlobs: a blob file that holds plain YAML (not gzip)
// is still the blob: blob checks report it, pin-missing does not call it
// an unpinned vendored file. A genuinely unpinned YAML beside it still is.
func TestPinMissingIgnoresBlobs(t *testing.T) {
	tree := cleanTree()
	infra := tree.Packages[1]
	for _, name := range []string{"files/components-proxmox.gz", "files/components-kubevirt.gz"} {
		if infra.Files[name] == nil {
			t.Fatalf("fixture has no %s", name)
		}
		infra.Files[name].Blob = nil // plain YAML bytes, no gzip magic
	}
	for _, f := range pinMissing(NewInput(tree)) {
		if strings.HasSuffix(f.File, ".gz") {
			t.Errorf("pin-missing reports the blob %s: %s", f.File, f.Message)
		}
	}
	infra.Files["files/extra.yaml"] = &model.File{Path: "files/extra.yaml"}
	var found bool
	for _, f := range pinMissing(NewInput(tree)) {
		found = found || strings.Contains(f.Message, "files/extra.yaml")
	}
	if !found {
		t.Error("an unpinned vendored YAML is no longer reported")
	}
}
