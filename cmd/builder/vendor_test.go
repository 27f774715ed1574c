package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/app/cli"
	"github.com/pinseal/pinseal/internal/app/vendor"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
)

// TestVendorCommand: usage errors exit 2; a release that publishes no
// digest fails (exit 1) until --trust-on-first-use, whose digests are
// printed; --output json is the library's result; a host that is not
// allowed is refused (exit 1).
func TestVendorCommand(t *testing.T) {
	t.Setenv("PINSEAL_MIRRORS", "")
	root := t.TempDir()
	if err := fixture.WriteFetched(root); err != nil {
		t.Fatal(err)
	}
	host := releaseapi.New(t)
	var talos, kubeadm fixture.FetchedProvider
	for _, p := range fixture.FetchedProviders {
		comp, meta := fixture.FetchedRelease(p)
		switch p.ID() {
		case "BootstrapProvider/talos":
			talos = p
			host.Add(p.Repo, releaseapi.Release{Tag: p.Version, Files: []releaseapi.File{{Name: p.Asset, Data: comp, NoDigest: true}, {Name: "metadata.yaml", Data: meta, NoDigest: true}}})
		case "BootstrapProvider/kubeadm":
			kubeadm = p
			host.Add(p.Repo, releaseapi.Release{Tag: p.Version, Files: []releaseapi.File{{Name: p.Asset, Data: comp}, {Name: "metadata.yaml", Data: meta}}})
		}
	}
	dir := fixture.FetchedChartDir(root, talos.Chart)
	base := []string{"vendor", dir, "--api-url", host.URL(), "--mirror", host.Mirror(), "--allow-host", host.ObjectsHost(), "--retries", "0"}
	var ue cli.UsageError

	for _, bad := range [][]string{
		{"--output", "yaml"}, {"--sha256", "nohex"}, {"--key", "cosign.key"}, {"--mirror", "nonsense"},
	} {
		if _, _, err := runBuildTestCmd(t, append(append([]string{}, base...), bad...)...); !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", bad, err)
		}
	}

	// Two providers download their release: say which, a usage error
	// (exit 2, as the help says) in vendor's words, not bump's.
	if _, _, err := runBuildTestCmd(t, base...); err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "BootstrapProvider/kubeadm, BootstrapProvider/talos") ||
		!strings.Contains(err.Error(), "vendor") || strings.Contains(err.Error(), "bump") {
		t.Fatalf("two candidates: %v", err)
	}
	talosArgs := append(append([]string{}, base...), "--provider", talos.ID())
	if _, _, err := runBuildTestCmd(t, talosArgs...); err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "--trust-on-first-use") {
		t.Fatalf("no published digest: %v", err)
	}
	out, _, err := runBuildTestCmd(t, append(talosArgs, "--trust-on-first-use")...)
	comp, _ := fixture.FetchedRelease(talos)
	if err != nil || !strings.Contains(out, "TRUSTED ON FIRST USE: "+talos.Components()+" sha256:"+releaseapi.SHA256(comp)) ||
		!strings.Contains(out, "ConfigMap v0.6.12-bootstrap-talos, selected by "+vendor.SelectorLabel+"=bootstrap-talos") {
		t.Fatalf("tofu: %v\n%s", err, out)
	}

	// A mirror to a host that is not allowed.
	blocked := append(append([]string{}, base[:2]...), "--api-url", host.URL(), "--mirror", "https://github.com/=http://127.0.0.1:9/", "--retries", "0", "--provider", kubeadm.ID())
	if _, _, err := runBuildTestCmd(t, blocked...); !errors.Is(err, vendor.ErrHostNotAllowed) || errors.As(err, &ue) {
		t.Fatalf("host not allowed: %v", err)
	}

	out, _, err = runBuildTestCmd(t, append(append([]string{}, base...), "--provider", kubeadm.ID(), "--output", "json")...)
	validateJSON(t, "vendor.schema.json", out)
	var res vendor.Result
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.Form != vendor.FormConfigMap || res.Digests[0].From != vendor.FromAssetDigest || res.ConfigMap != "v1.10.1-bootstrap-kubeadm" {
		t.Fatalf("json: %v\n%s", err, out)
	}
}
