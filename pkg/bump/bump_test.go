package bump

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/fetch"
)

func opts(u *upstream, to string) Options {
	return Options{To: to, Fetcher: &fetch.Fetcher{Mirrors: []fetch.Mirror{u.mirror()}}}
}

func pkgDir(root, name string) string { return filepath.Join(root, "packages", "system", name) }

func TestFixtureTreeIsClean(t *testing.T) {
	u := newUpstream(t)
	fixtureTree(t, u)
}

// TestBump bumps each kind of fixture package to a release served on
// 127.0.0.1 through a mirror, then checks the tree with the verifier and
// the change with git.
func TestBump(t *testing.T) {
	u := newUpstream(t)
	cases := []struct {
		name     string
		pkg      string
		provider string
		to       string
		release  string
		sha      func() map[string]string
		tofu     bool
		wantRel  string
		numstat  map[string]string
		contains map[string][]string // file -> lines the diff must add
		digests  map[string]string   // source base name -> where its digest came from
	}{
		{
			name: "pin.yaml with patches, Makefile variable and version label", pkg: "capi-providers-proxmox", to: "v0.7.8",
			sha: func() map[string]string {
				r := "ionos-cloud/cluster-api-provider-proxmox"
				return map[string]string{
					u.url(r, "v0.7.8", "infrastructure-components.yaml"): shaOf(u.bytes(r, "v0.7.8", "infrastructure-components.yaml")),
					u.url(r, "v0.7.8", "metadata.yaml"):                  shaOf(u.bytes(r, "v0.7.8", "metadata.yaml")),
				}
			},
			wantRel: "v0.7.8-infraprovider-proxmox",
			numstat: map[string]string{
				"Makefile":                             "1 1",
				"pin.yaml":                             "5 5",
				"templates/configmaps.yaml":            "2 2",
				"templates/providers.yaml":             "1 1",
				"files/infrastructure-components.yaml": "2 2",
				"files/components.gz":                  "- -",
			},
			contains: map[string][]string{"Makefile": {"+CAPMOX_VERSION=v0.7.8"}, "templates/configmaps.yaml": {`+    provider.cluster.x-k8s.io/version: "v0.7.8-infraprovider-proxmox"`}},
		},
		{
			name: "Makefile recipe download with patches, talos file names", pkg: "capi-providers-cpprovider", to: "v0.5.9", tofu: true,
			wantRel: "v0.5.9-control-plane-talos",
			numstat: map[string]string{
				"Makefile":                  "1 1",
				"pin.yaml":                  "new",
				"templates/configmaps.yaml": "1 1",
				"templates/providers.yaml":  "1 1",
				"files/control-plane-components-talos.yaml": "2 2",
				"files/components-talos.gz":                 "- -",
			},
			contains: map[string][]string{"Makefile": {"+CACPPT_UPSTREAM_VERSION = v0.5.9"}},
		},
		{
			name: "Dockerfile ARG, respin suffix from values.yaml, digests from the release's checksums", pkg: "capi-providers-kubevirt", to: "v0.1.10", release: "v0.1.10-cozystack.1",
			wantRel: "v0.1.10-cozystack.1",
			numstat: map[string]string{
				"images/capk/Dockerfile":               "1 1",
				"pin.yaml":                             "6 6",
				"values.yaml":                          "1 1",
				"files/infrastructure-components.yaml": "2 2",
				"files/components.gz":                  "- -",
			},
			digests:  map[string]string{"infrastructure-components.yaml": FromChecksums, "metadata.yaml": FromChecksums},
			contains: map[string][]string{"values.yaml": {`+  release: "v0.1.10-cozystack.1" # respin counter after the dash`}, "images/capk/Dockerfile": {"+ARG VERSION=v0.1.10"}},
		},
		{
			name: "Makefile URL and SHA-256 variables", pkg: "capi-providers-ipam", to: "v1.0.3",
			sha: func() map[string]string {
				r := "kubernetes-sigs/cluster-api-ipam-provider-in-cluster"
				return map[string]string{u.url(r, "v1.0.3", "ipam-components.yaml"): shaOf(u.bytes(r, "v1.0.3", "ipam-components.yaml"))}
			},
			wantRel: "v1.0.3-ipam",
			numstat: map[string]string{
				"Makefile":                   "2 2",
				"templates/configmaps.yaml":  "1 1",
				"templates/providers.yaml":   "1 1",
				"files/ipam-components.yaml": "2 2",
				"files/components.gz":        "- -",
			},
			contains: map[string][]string{"Makefile": {"+IPAM_VERSION = v1.0.3", "+IPAM_COMPONENTS_SHA256 = " + shaOf(u.bytes("kubernetes-sigs/cluster-api-ipam-provider-in-cluster", "v1.0.3", "ipam-components.yaml"))}},
		},
		{
			name: "core to a v1beta2 series, which still serves the v1beta1 providers", pkg: "capi-providers-core", to: "v1.11.0", tofu: true,
			wantRel: "v1.11.0-core",
			numstat: map[string]string{
				"pin.yaml":                   "6 6",
				"templates/configmaps.yaml":  "1 1",
				"templates/providers.yaml":   "1 1",
				"files/core-components.yaml": "2 2",
				"files/metadata.yaml":        "3 3",
				"files/components.gz":        "- -",
			},
		},
		{
			name: "two providers, one bumped", pkg: "capi-providers-bootstrap", provider: "BootstrapProvider/kubeadm", to: "v1.10.2", tofu: true,
			wantRel: "v1.10.2-bootstrap",
			numstat: map[string]string{
				"pin.yaml":                        "5 5",
				"templates/configmaps.yaml":       "1 1",
				"templates/providers.yaml":        "1 1",
				"files/bootstrap-components.yaml": "2 2",
				"files/components.gz":             "- -",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := fixtureTree(t, u)
			o := opts(u, tc.to)
			o.Provider, o.Release, o.TrustOnFirstUse = tc.provider, tc.release, tc.tofu
			if tc.sha != nil {
				o.SHA256 = tc.sha()
			}
			res, err := Bump(context.Background(), pkgDir(root, tc.pkg), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.To.Release != tc.wantRel {
				t.Errorf("release %s, want %s", res.To.Release, tc.wantRel)
			}
			for name, from := range tc.digests {
				found := false
				for _, d := range res.Digests {
					if strings.HasSuffix(d.URL, "/"+name) {
						found = true
						if d.From != from {
							t.Errorf("%s: digest from %s, want %s", name, d.From, from)
						}
					}
				}
				if !found {
					t.Errorf("no digest for %s: %+v", name, res.Digests)
				}
			}
			requireClean(t, root)
			got := numstat(t, root)
			want := map[string]string{}
			for k, v := range tc.numstat {
				want["packages/system/"+tc.pkg+"/"+k] = v
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("git diff --numstat %s: %q, want %q", k, got[k], v)
				}
			}
			for k, v := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("unexpected change %s (%s)", k, v)
				}
			}
			for file, lines := range tc.contains {
				d := git(t, root, "diff", "--", "packages/system/"+tc.pkg+"/"+file)
				for _, l := range lines {
					if !strings.Contains(d, "\n"+l+"\n") {
						t.Errorf("%s: diff lacks %q:\n%s", file, l, d)
					}
				}
			}
			// Comments survive: no removed line is a comment.
			// (The metadata is the same in both releases, so its pin stays.)
			d := git(t, root, "diff", "-U0", "--", ":!*/files/*")
			for _, l := range strings.Split(d, "\n") {
				if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") && strings.HasPrefix(strings.TrimSpace(l[1:]), "#") {
					t.Errorf("a comment line changed: %q", l)
				}
			}
			// A second bump to the same release has nothing to do.
			if _, err := Bump(context.Background(), pkgDir(root, tc.pkg), o); err == nil || !strings.Contains(err.Error(), "already at") {
				t.Errorf("second bump: %v, want already at", err)
			}
		})
	}
}

// TestBumpRefusals: each refusal leaves every file byte-identical.
func TestBumpRefusals(t *testing.T) {
	u := newUpstream(t)
	root := fixtureTree(t, u)
	pxRepo := "ionos-cloud/cluster-api-provider-proxmox"
	cases := []struct {
		name, pkg, provider, to string
		mod                     func(*Options)
		want                    string
	}{
		{"wrong sha256", "capi-providers-proxmox", "", "v0.7.8", func(o *Options) {
			o.SHA256 = map[string]string{
				u.url(pxRepo, "v0.7.8", "infrastructure-components.yaml"): strings.Repeat("ab", 32),
				u.url(pxRepo, "v0.7.8", "metadata.yaml"):                  shaOf(u.bytes(pxRepo, "v0.7.8", "metadata.yaml")),
			}
		}, "SHA-256 mismatch"},
		{"no digest and no trust-on-first-use", "capi-providers-proxmox", "", "v0.7.8", nil, "pins are never guessed"},
		{"patch no longer applies", "capi-providers-cpprovider", "", "v0.5.10", func(o *Options) { o.TrustOnFirstUse = true }, "0001-talos-startup-probe.diff"},
		{"series missing from metadata", "capi-providers-proxmox", "", "v0.9.0", func(o *Options) { o.TrustOnFirstUse = true }, "metadata-series"},
		{"contract the core does not serve", "capi-providers-proxmox", "", "v0.8.0", func(o *Options) { o.TrustOnFirstUse = true }, "v1beta2"},
		{"core bump leaves providers out of contract", "capi-providers-core", "", "v1.12.0", func(o *Options) { o.TrustOnFirstUse = true }, "would fall out of contract"},
		{"sha256 flag disagrees with the release's checksums", "capi-providers-kubevirt", "", "v0.1.10", func(o *Options) {
			o.SHA256 = map[string]string{u.url("kubernetes-sigs/cluster-api-provider-kubevirt", "v0.1.10", "infrastructure-components.yaml"): strings.Repeat("cd", 32)}
		}, "checksums file"},
		{"unknown provider", "capi-providers-bootstrap", "BootstrapProvider/nope", "v1.10.2", nil, "no such provider"},
		{"two providers need a provider", "capi-providers-bootstrap", "", "v1.10.2", nil, "say which provider"},
		{"sha256 for a URL that is not a source", "capi-providers-proxmox", "", "v0.7.8", func(o *Options) {
			o.SHA256 = map[string]string{"https://example.com/x.yaml": strings.Repeat("ab", 32)}
		}, "not a source"},
	}
	before := snapshot(t, root)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(u, tc.to)
			o.Provider = tc.provider
			if tc.mod != nil {
				tc.mod(&o)
			}
			_, err := Bump(context.Background(), pkgDir(root, tc.pkg), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
			t.Log(err)
			requireSame(t, before, snapshot(t, root))
		})
	}
	// The contract refusal names the contract the core serves; the core
	// bump names the providers that would fall out.
	o := opts(u, "v1.12.0")
	o.TrustOnFirstUse = true
	_, err := Bump(context.Background(), pkgDir(root, "capi-providers-core"), o)
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("core bump: %v", err)
	}
	var fell []string
	for _, f := range re.Findings {
		fell = append(fell, f.Provider)
	}
	for _, want := range []string{"InfrastructureProvider/proxmox", "ControlPlaneProvider/talos", "BootstrapProvider/kubeadm"} {
		if !strings.Contains(strings.Join(fell, ","), want) {
			t.Errorf("core bump refusal does not name %s: %v", want, fell)
		}
	}
}

// TestBumpDryRun writes nothing and reports the text diffs and vendored files.
func TestBumpDryRun(t *testing.T) {
	u := newUpstream(t)
	root := fixtureTree(t, u)
	before := snapshot(t, root)
	o := opts(u, "v1.10.2")
	o.Provider, o.TrustOnFirstUse, o.DryRun = "BootstrapProvider/kubeadm", true, true
	res, err := Bump(context.Background(), pkgDir(root, "capi-providers-bootstrap"), o)
	if err != nil {
		t.Fatal(err)
	}
	requireSame(t, before, snapshot(t, root))
	kinds := map[string]string{}
	for _, f := range res.Files {
		kinds[f.Path] = f.Kind
		if f.Kind == "text" && !strings.Contains(f.Diff, "+++ b/"+f.Path) {
			t.Errorf("%s: no diff: %q", f.Path, f.Diff)
		}
		if f.OldSHA256 == f.NewSHA256 || len(f.NewSHA256) != 64 {
			t.Errorf("%s: digests %q -> %q", f.Path, f.OldSHA256, f.NewSHA256)
		}
	}
	want := map[string]string{"pin.yaml": "text", "templates/configmaps.yaml": "text", "templates/providers.yaml": "text",
		"files/bootstrap-components.yaml": "vendored", "files/components.gz": "vendored"}
	if len(kinds) != len(want) {
		t.Errorf("files %v, want %v", kinds, want)
	}
	for k, v := range want {
		if kinds[k] != v {
			t.Errorf("%s: kind %q, want %q", k, kinds[k], v)
		}
	}
	var tofu int
	for _, d := range res.Digests {
		if d.From == FromTOFU {
			tofu++
		}
	}
	if tofu != 2 {
		t.Errorf("digests %+v: want 2 taken on first use", res.Digests)
	}
}
