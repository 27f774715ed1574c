package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/model"
)

// The clean fixture's patched file (internal/testkit/fixture/spec.go).
const (
	patchedYAML = "files/proxmox-infrastructure-components.yaml"
	patchRel    = "patches/0001-capmox-startup-probe.diff"
)

// pinSHA is the sha256 a package's pin.yaml gives for the source vendored at to.
func pinSHA(t *testing.T, p *model.Package, to string) string {
	t.Helper()
	for _, pp := range p.Pins.File.Providers {
		for _, s := range pp.Sources {
			if s.To == to {
				return s.SHA256
			}
		}
	}
	t.Fatalf("%s: no pin for %s", p.Path, to)
	return ""
}

func TestUpstreamDigestClean(t *testing.T) {
	p := find(t, loadTree(t, fixture.Root(), Options{}), infraPkg)
	if len(p.Problems) > 0 {
		t.Fatalf("problems: %+v", p.Problems)
	}
	f := p.Files[patchedYAML]
	if f.Upstream == nil || f.UpstreamErr != "" {
		t.Fatalf("%s: Upstream %v, UpstreamErr %q; want the digest with the patch reversed", patchedYAML, f.Upstream, f.UpstreamErr)
	}
	if want := pinSHA(t, p, patchedYAML); f.Upstream.Hex() != want {
		t.Errorf("upstream digest %s, want the pinned %s", f.Upstream.Hex(), want)
	}
	if f.SHA256.Hex() == f.Upstream.Hex() {
		t.Errorf("the vendored file should differ from the upstream (it is patched)")
	}
	// Files no patch changes carry no upstream digest.
	for _, rel := range []string{"files/metadata-proxmox.yaml", "files/kubevirt-infrastructure-components.yaml", "files/components-proxmox.gz"} {
		if g := p.Files[rel]; g == nil || g.Upstream != nil || g.UpstreamErr != "" {
			t.Errorf("%s: %+v; want no upstream digest", rel, g)
		}
	}
}

func TestUpstreamDigestMutations(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		mutate func(t *testing.T, root string)
		// want: the upstream digest differs from the pin (edited), or
		// UpstreamErr / a pin-digest problem with these words.
		edited     bool
		errWords   []string
		probFile   string
		probLine   int
		probWords  []string
		noUpstream bool
	}{
		{
			name: "edited outside the hunk",
			mutate: func(t *testing.T, root string) {
				replace(t, root, infraPkg+"/"+patchedYAML, "  replicas: 1\n", "  replicas: 2\n")
			},
			edited: true,
		},
		{
			name: "edited inside the hunk's context",
			mutate: func(t *testing.T, root string) {
				replace(t, root, infraPkg+"/"+patchedYAML, "            path: /readyz\n", "            path: /ready\n")
			},
			errWords: []string{"patch " + patchRel + " hunk #1 @@ -142,6 +142,12 @@ (line 9 of the patch) cannot be reversed on " + patchedYAML,
				`is "            path: /ready", the patched file should have "            path: /readyz"`},
		},
		{
			name: "patch never applied",
			mutate: func(t *testing.T, root string) {
				replace(t, root, infraPkg+"/"+patchedYAML, "        startupProbe:\n          failureThreshold: 30\n", "")
			},
			errWords: []string{"hunk #1", "cannot be reversed"},
		},
		{
			name: "file over the size limit",
			opts: Options{Limit: 1024},
			mutate: func(t *testing.T, root string) {
			},
			errWords: []string{"more than the 1024-byte limit", "not compared with its pin"},
		},
		{
			name: "patch missing",
			mutate: func(t *testing.T, root string) {
				if err := os.Remove(filepath.Join(root, infraPkg, patchRel)); err != nil {
					t.Fatal(err)
				}
			},
			probFile: "pin.yaml", probWords: []string{"lists patch " + patchRel + " for InfrastructureProvider/proxmox, but it cannot be read"},
			noUpstream: true,
		},
		{
			name: "patch does not parse",
			mutate: func(t *testing.T, root string) {
				replace(t, root, infraPkg+"/"+patchRel, "@@ -142,6 +142,12 @@\n", "@@ -142,6 +142,13 @@\n")
			},
			probFile: patchRel, probLine: 22, probWords: []string{"patch " + patchRel + " of InfrastructureProvider/proxmox does not parse", "ends early"},
			noUpstream: true,
		},
		{
			name: "patch changes a file that is not a source",
			mutate: func(t *testing.T, root string) {
				b := strings.ReplaceAll(string(read(t, root, infraPkg+"/"+patchRel)), patchedYAML, "files/other.yaml")
				write(t, root, infraPkg+"/"+patchRel, []byte(b))
			},
			probFile: patchRel, probLine: 7, probWords: []string{"changes files/other.yaml, which is not a pinned source of InfrastructureProvider/proxmox"},
			noUpstream: true,
		},
		{
			name: "patch is a symlink out of the tree",
			mutate: func(t *testing.T, root string) {
				outside := filepath.Join(t.TempDir(), "p.diff")
				if err := os.WriteFile(outside, read(t, root, infraPkg+"/"+patchRel), 0o644); err != nil {
					t.Fatal(err)
				}
				link := filepath.Join(root, infraPkg, patchRel)
				if err := os.Remove(link); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, link); err != nil {
					t.Fatal(err)
				}
			},
			probFile: "pin.yaml", probWords: []string{patchRel, "points outside the tree"},
			noUpstream: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture.CleanCopy(t)
			tc.mutate(t, root)
			p := find(t, loadTree(t, root, tc.opts), infraPkg)
			f := p.Files[patchedYAML]
			if f == nil {
				t.Fatalf("%s not loaded", patchedYAML)
			}
			switch {
			case tc.edited:
				if f.Upstream == nil || f.UpstreamErr != "" {
					t.Fatalf("Upstream %v, UpstreamErr %q; want a digest", f.Upstream, f.UpstreamErr)
				}
				if f.Upstream.Hex() == pinSHA(t, p, patchedYAML) {
					t.Errorf("the edit outside the patch was reversed away: upstream digest equals the pin")
				}
			case tc.errWords != nil:
				if f.Upstream != nil || f.UpstreamErr == "" {
					t.Fatalf("Upstream %v, UpstreamErr %q; want an error", f.Upstream, f.UpstreamErr)
				}
				for _, w := range tc.errWords {
					if !strings.Contains(f.UpstreamErr, w) {
						t.Errorf("UpstreamErr lacks %q: %s", w, f.UpstreamErr)
					}
				}
			}
			if tc.noUpstream && (f.Upstream != nil || f.UpstreamErr != "") {
				t.Errorf("Upstream %v, UpstreamErr %q; want neither when the patches cannot be used", f.Upstream, f.UpstreamErr)
			}
			if tc.probWords == nil {
				if pr := problem(p, model.CheckPinDigest, ""); pr != nil {
					t.Errorf("unexpected pin-digest problem: %+v", pr)
				}
				return
			}
			pr := problem(p, model.CheckPinDigest, "")
			if pr == nil {
				t.Fatalf("no pin-digest problem; problems: %+v", p.Problems)
			}
			if pr.Provider != "InfrastructureProvider/proxmox" || pr.File != tc.probFile || (tc.probLine != 0 && pr.Line != tc.probLine) || pr.Hint == "" {
				t.Errorf("problem %+v: want provider InfrastructureProvider/proxmox at %s:%d with a hint", pr, tc.probFile, tc.probLine)
			}
			for _, w := range tc.probWords {
				if !strings.Contains(pr.Message, w) {
					t.Errorf("problem lacks %q: %s", w, pr.Message)
				}
			}
		})
	}
}
