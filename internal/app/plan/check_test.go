package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/netwatch"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
)

// TestCheckBlockedReasons: through the releases-API stand-in, every
// capmox release newer than v0.7.8 is blocked with its own reason, the
// pre-release is neither a step nor blocked, and the asset on a host not
// allowed is never asked for.
func TestCheckBlockedReasons(t *testing.T) {
	watch := netwatch.Listen(t)
	api := releaseapi.New(t)
	comp := capmoxUpstream(t)
	files := func(series ...string) []releaseapi.File {
		return []releaseapi.File{{Name: "infrastructure-components.yaml", Data: comp}, {Name: "metadata.yaml", Data: releaseapi.Metadata(series...)}}
	}
	api.Add(capi, releaseapi.Release{Tag: "v1.10.1", Files: files("1.10=v1beta1")})
	api.Add(capmox,
		releaseapi.Release{Tag: "v0.8.0-rc.1", Prerelease: true, Files: files("0.8=v1beta1")},
		releaseapi.Release{Tag: "v0.7.13", Files: []releaseapi.File{{Name: "infrastructure-components.yaml", Data: comp}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1"), URL: watch.URL("/a")}}},
		releaseapi.Release{Tag: "v0.7.12", Files: files("0.6=v1beta1")},                                                // series missing
		releaseapi.Release{Tag: "v0.7.11", Files: []releaseapi.File{{Name: "metadata.yaml", Data: []byte("kind: [")}}}, // unreadable
		releaseapi.Release{Tag: "v0.7.10", Files: []releaseapi.File{{Name: "infrastructure-components.yaml", Data: []byte("x")}}},
		releaseapi.Release{Tag: "v0.7.9", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1")}}}, // components missing
		releaseapi.Release{Tag: "v0.7.8", Files: files("0.7=v1beta1")},
	)
	pl, err := FromUpstream(context.Background(), []string{fixture.Root()}, Options{Outdated: outdated.Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(pl); got != "InfrastructureProvider/proxmox v0.7.7->v0.7.8; blocked InfrastructureProvider/proxmox v0.7.13; blocked InfrastructureProvider/proxmox v0.7.12; blocked InfrastructureProvider/proxmox v0.7.11; blocked InfrastructureProvider/proxmox v0.7.10; blocked InfrastructureProvider/proxmox v0.7.9" {
		t.Fatalf("plan: %s", got)
	}
	for i, want := range []string{
		"host not allowed",
		"no releaseSeries entry for 0.7",
		"does not parse",
		"release v0.7.10 has no metadata.yaml asset",
		"release v0.7.9 has no asset infrastructure-components.yaml, which the pin downloads",
	} {
		if r := pl.Blocked[i].Reason; !strings.Contains(r, want) {
			t.Errorf("blocked %s: %q, want %q", pl.Blocked[i].Release, r, want)
		}
	}
	if n := watch.Count(); n != 0 {
		t.Errorf("%d connection(s) to a host not allowed", n)
	}
}
