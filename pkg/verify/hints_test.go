package verify

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/hinttest"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/render"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

// TestFindingsNameNoFlag: no finding the checks make over the fixture
// trees tells the user to pass a flag. The library words a finding for
// every interface: a hint names the setting to change in words and in
// report.Finding.Settings, and the CLI adds its flag, the service its
// config key. The runs reach every hint that names a setting the tree and
// a registry can reach (a signature by an untrusted key: see
// TestRegistryMutationsGoRedAlone): a tiny inflate limit and render output
// bound, a registry nobody listens on, a provider installing from a
// registry nobody allowed.
func TestFindingsNameNoFlag(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	inflate := Options{Options: load.Options{Workers: 2, Limit: 64, Logger: quiet}}
	render := Options{Options: load.Options{Workers: 2, Logger: quiet,
		Render: render.Limits{Timeout: 30 * time.Second, MaxMemory: render.DefaultMaxMemory, MaxOutput: 64}}}

	// The clean tree plus a provider installing from a registry nobody
	// allowed, checked against a registry nobody listens on.
	withOCI := fixture.CleanCopy(t)
	dir := filepath.Join(withOCI, "oci-core")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "provider.yaml"), []byte(`apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: CoreProvider
metadata:
  name: cluster-api
  namespace: capi-oci
spec:
  version: v1.10.1-core
  fetchConfig:
    oci: other.example/capi/core-cluster-api
`), 0o644); err != nil {
		t.Fatal(err)
	}
	dead, err := artifact.ParsePrefix("127.0.0.1:1/capi")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := NewRegistry(nil, RegistryOptions{Prefix: dead, Registry: artifact.Options{PlainHTTP: true},
		Keys: []*sign.PublicKey{remotetest.Key(t).Public()}})
	if err != nil {
		t.Fatal(err)
	}
	registry := Options{Options: load.Options{Workers: 2, Logger: quiet}, Registry: reg}

	mono, _ := fixture.Monorepo(t)

	runs := []struct {
		name string
		root string
		opts Options
	}{
		{"dirty", fixture.DirtyCopy(t), Options{Options: load.Options{Workers: 2, Logger: quiet}}},
		{"monorepo", mono, Options{Options: load.Options{Workers: 2, Logger: quiet}}}, // planted problems, charts that do not render
		{"dirty, tight inflate limit", fixture.DirtyCopy(t), inflate},
		{"clean, tight render bounds", fixture.CleanCopy(t), render},
		{"registry unreachable, OCI source not allowed", withOCI, registry},
	}
	seen := map[report.Setting]bool{}
	for _, run := range runs {
		_, r, err := Run(ctx, run.root, run.opts)
		if err != nil {
			t.Fatalf("%s: %v", run.name, err)
		}
		for _, f := range r.Findings {
			if flags := hinttest.FindingFlags(f); len(flags) > 0 {
				t.Errorf("%s: %s finding names flags %q of an interface; name the setting (report.Setting) instead:\n%s\n%s", run.name, f.Check, flags, f.Message, f.Hint)
			}
			for _, s := range f.Settings {
				seen[s] = true
			}
		}
	}
	// The runs reached the hints that name settings.
	for _, s := range []report.Setting{report.SettingInflateLimit, report.SettingRenderMaxOutput, report.SettingPlainHTTP, report.SettingAllowRegistry} {
		if !seen[s] {
			t.Errorf("no finding named setting %s: the runs do not reach its hint", s)
		}
	}
	t.Logf("settings named: %v", slices.Sorted(func(yield func(report.Setting) bool) {
		for s := range seen {
			if !yield(s) {
				return
			}
		}
	}))
}
