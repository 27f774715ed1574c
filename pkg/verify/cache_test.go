package verify

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/render"
	"github.com/pinseal/pinseal/pkg/report"
)

// memCache is a load.Cache in memory that counts the directories it did
// not hold.
type memCache struct {
	mu     sync.Mutex
	m      map[[32]byte][]byte
	misses int
}

func (c *memCache) Get(k [32]byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[k]
	if !ok {
		c.misses++
	}
	return b, ok
}

func (c *memCache) Put(k [32]byte, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = b
}

// reportJSON is the JSON report of verifying root with opts.
func reportJSON(t *testing.T, root string, opts Options) []byte {
	t.Helper()
	opts.Now = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	_, r, err := Run(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCacheSeesEveryChange: after a run that filled the cache, a change
// to any file of a package (its bytes, a new or removed file, its mode, a
// link or what a link leads to), to the policy's values or to a load
// option is seen: the package is loaded again, and the report is the one
// a run without the cache gives. The clean tree gives the same report
// cold and warm.
func TestCacheSeesEveryChange(t *testing.T) {
	core := corePkg
	valuesPolicy := func(root string) *policy.Policy {
		pol := policy.Default()
		pol.Values = []policy.Values{{Package: core, Files: []string{filepath.Join(root, "core-values.yaml")}}}
		return pol
	}
	write := func(t *testing.T, root, rel, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, root string, o *Options) // before the cache is filled
		change func(t *testing.T, root string, o *Options)
	}{
		{name: "nothing", change: func(*testing.T, string, *Options) {}},
		{name: "a template's bytes", change: func(t *testing.T, root string, _ *Options) {
			edit(t, filepath.Join(root, core, "templates/providers.yaml"), "version: v1.10.1-core", "version: v1.10.2-core")
		}},
		{name: "a blob's bytes", change: func(t *testing.T, root string, _ *Options) {
			gzipWithoutN(t, filepath.Join(root, core, "files/core-components.yaml"), filepath.Join(root, core, "files/components.gz"))
		}},
		{name: "a new file", change: func(t *testing.T, root string, _ *Options) {
			write(t, root, core+"/templates/extra.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n")
		}},
		{name: "a file removed", change: func(t *testing.T, root string, _ *Options) {
			if err := os.Remove(filepath.Join(root, core, "files/metadata.yaml")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a mode", change: func(t *testing.T, root string, _ *Options) {
			if err := os.Chmod(filepath.Join(root, core, "images/README.md"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a file made a link", change: func(t *testing.T, root string, _ *Options) {
			f := filepath.Join(root, core, "files/metadata.yaml")
			b, _ := os.ReadFile(f)
			write(t, root, "metadata-copy.yaml", string(b))
			os.Remove(f)
			if err := os.Symlink("../../../../metadata-copy.yaml", f); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "what a link leads to outside the package", setup: func(t *testing.T, root string, _ *Options) {
			f := filepath.Join(root, core, "files/metadata.yaml")
			b, _ := os.ReadFile(f)
			write(t, root, "metadata-copy.yaml", string(b))
			os.Remove(f)
			if err := os.Symlink("../../../../metadata-copy.yaml", f); err != nil {
				t.Fatal(err)
			}
		}, change: func(t *testing.T, root string, _ *Options) {
			edit(t, filepath.Join(root, "metadata-copy.yaml"), "contract: v1beta1", "contract: v1beta2")
		}},
		{name: "what a directory link leads to", setup: func(t *testing.T, root string, _ *Options) {
			if err := os.Mkdir(filepath.Join(root, "shared"), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, root, "shared/values.yaml", "a: 1\n")
			if err := os.Symlink("../../../shared", filepath.Join(root, core, "linked")); err != nil {
				t.Fatal(err)
			}
		}, change: func(t *testing.T, root string, _ *Options) {
			write(t, root, "shared/values.yaml", "a: 2\n")
		}},
		{name: "a link's target", setup: func(t *testing.T, root string, _ *Options) {
			if err := os.Symlink("core-components.yaml", filepath.Join(root, core, "files/link.yaml")); err != nil {
				t.Fatal(err)
			}
		}, change: func(t *testing.T, root string, _ *Options) {
			f := filepath.Join(root, core, "files/link.yaml")
			os.Remove(f)
			if err := os.Symlink("metadata.yaml", f); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "the policy's values file", setup: func(t *testing.T, root string, o *Options) {
			write(t, root, "core-values.yaml", "a: 1\n")
			o.Policy = valuesPolicy(root)
		}, change: func(t *testing.T, root string, _ *Options) {
			write(t, root, "core-values.yaml", "a: [\n")
		}},
		{name: "the namespace option", change: func(_ *testing.T, _ string, o *Options) { o.Namespace = "elsewhere" }},
		{name: "the inflate limit", change: func(_ *testing.T, _ string, o *Options) { o.Limit = 1000 }},
		{name: "a render bound", change: func(_ *testing.T, _ string, o *Options) { o.Render.MaxOutput = 1000 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture.CleanCopy(t)
			cache := &memCache{m: map[[32]byte][]byte{}}
			opts := Options{Options: load.Options{Workers: 2, Cache: cache, Render: render.Limits{Timeout: time.Minute}}}
			if tc.setup != nil {
				tc.setup(t, root, &opts)
			}
			cold := reportJSON(t, root, opts)
			cache.misses = 0
			if warm := reportJSON(t, root, opts); !bytes.Equal(warm, cold) || cache.misses != 0 {
				t.Fatalf("warm: %d directories loaded again; same report: %v", cache.misses, bytes.Equal(warm, cold))
			}
			tc.change(t, root, &opts)
			got := reportJSON(t, root, opts)
			fresh := opts
			fresh.Cache = nil
			if want := reportJSON(t, root, fresh); !bytes.Equal(got, want) {
				t.Fatalf("with the cache the report is\n%s\nwithout it\n%s", got, want)
			}
			if tc.name != "nothing" && cache.misses == 0 {
				t.Fatal("the change was not seen: every directory came from the cache")
			}
		})
	}
}
