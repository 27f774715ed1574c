package artifact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// targets are the repositories every push/pull test runs against.
func targets(t *testing.T) map[string]func(t *testing.T) Repository {
	return map[string]func(t *testing.T) Repository{
		"registry": func(t *testing.T) Repository {
			p, err := ParsePrefix(testRegistry(t) + "/capi")
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Repository("infrastructure-proxmox", Options{PlainHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		"layout": func(t *testing.T) Repository {
			p, err := ParsePrefix(LayoutScheme + t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Repository("infrastructure-proxmox", Options{})
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
	}
}

func TestPushPullRoundTrip(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	for name, open := range targets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			repo := open(t)
			rel := testRelease(t)

			res, err := Push(ctx, repo, rel, PushOptions{})
			if err != nil {
				t.Fatalf("Push: %v", err)
			}
			if res.Status != Pushed || res.Built != res.Descriptor.Digest {
				t.Fatalf("first push: %+v", res)
			}
			tagged, err := repo.Resolve(ctx, rel.Release)
			if err != nil || tagged.Digest != res.Descriptor.Digest {
				t.Fatalf("tag %s resolves to %v, %v; want %s", rel.Release, tagged.Digest, err, res.Descriptor.Digest)
			}

			for _, ref := range []string{rel.Release, res.Descriptor.Digest.String()} {
				p, err := Pull(ctx, repo, ref)
				if err != nil {
					t.Fatalf("Pull %s: %v", ref, err)
				}
				if p.Descriptor.Digest != res.Descriptor.Digest {
					t.Fatalf("pulled %s, pushed %s", p.Descriptor.Digest, res.Descriptor.Digest)
				}
				if !bytes.Equal(p.Blob, rel.Blob) || !bytes.Equal(p.YAML, rel.YAML) || !bytes.Equal(p.Metadata, rel.Metadata) {
					t.Fatalf("pulled files differ from the pushed ones")
				}
				if p.ComponentsTitle != YAMLTitle {
					t.Fatalf("components title %q", p.ComponentsTitle)
				}
				if p.Config == nil || p.Config.Release != rel.Release || p.Config.Contract != "v1beta1" || len(p.Config.Pins) != 1 {
					t.Fatalf("config %+v", p.Config)
				}
			}

			// Same content again: nothing to do.
			again, err := Push(ctx, repo, rel, PushOptions{})
			if err != nil || again.Status != Unchanged || again.Descriptor.Digest != res.Descriptor.Digest {
				t.Fatalf("second push = %+v, %v; want unchanged", again, err)
			}

			// Same content from another builder version: equivalent, the
			// existing manifest stays.
			other := testRelease(t)
			other.BuilderVersion = "v9.9.9"
			eq, err := Push(ctx, repo, other, PushOptions{})
			if err != nil || eq.Status != Equivalent || eq.Descriptor.Digest != res.Descriptor.Digest || eq.Built == res.Descriptor.Digest {
				t.Fatalf("push from another builder = %+v, %v; want equivalent to %s", eq, err, res.Descriptor.Digest)
			}

			// Changed content under the same release: refused, tag kept.
			changed := testRelease(t)
			changed.YAML = []byte(testYAML + "# edited\n")
			changed.Blob = gz(t, string(changed.YAML))
			_, err = Push(ctx, repo, changed, PushOptions{})
			var ie *ImmutableError
			if !errors.As(err, &ie) {
				t.Fatalf("push of changed content: %v, want *ImmutableError", err)
			}
			msg := err.Error()
			for _, want := range []string{res.Descriptor.Digest.String(), "layer components.gz", "layer components.yaml", "immutable"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if ie.New == ie.Existing || ie.New == "" || !strings.Contains(msg, ie.New.String()) {
				t.Errorf("error does not name the new digest: %q", msg)
			}
			tagged, err = repo.Resolve(ctx, rel.Release)
			if err != nil || tagged.Digest != res.Descriptor.Digest {
				t.Fatalf("tag moved to %v (%v) after a refused push", tagged.Digest, err)
			}
		})
	}
}

// faultyRepo is a registry repository reached through a fault proxy, plus a
// direct one to look at the registry behind it.
func faultyRepo(t *testing.T, opts Options) (repo, direct Repository, proxy *testpeer.FaultProxy) {
	t.Helper()
	host := testRegistry(t)
	proxy = testpeer.NewFaultProxy(t, "http://"+host)
	opts.PlainHTTP = true
	var err error
	if repo, err = OpenRegistry(proxy.Host+"/capi/infrastructure-proxmox", opts); err != nil {
		t.Fatal(err)
	}
	if direct, err = OpenRegistry(host+"/capi/infrastructure-proxmox", Options{PlainHTTP: true}); err != nil {
		t.Fatal(err)
	}
	return repo, direct, proxy
}

func TestPushFaults(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	for _, tt := range pushFaults() {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			repo, direct, proxy := faultyRepo(t, Options{ResponseTimeout: 500 * time.Millisecond})
			rel := testRelease(t)
			proxy.Set(tt.rule)
			if _, err := Push(ctx, repo, rel, PushOptions{}); err == nil {
				t.Fatalf("push through %q succeeded; requests: %v", tt.name, proxy.Requests())
			} else if !strings.Contains(err.Error(), "tag was not written") {
				t.Errorf("error %q does not say the tag was not written", err)
			}
			if proxy.Injected() == 0 {
				t.Fatalf("no fault injected; requests: %v", proxy.Requests())
			}
			if d, err := direct.Resolve(ctx, rel.Release); !errors.Is(err, errdef.ErrNotFound) {
				t.Fatalf("after the failed push the tag resolves to %v (%v), want not found", d.Digest, err)
			}

			proxy.Set(nil)
			res, err := Push(ctx, repo, rel, PushOptions{})
			if err != nil || res.Status != Pushed {
				t.Fatalf("retry = %+v, %v", res, err)
			}
			if _, err := Pull(ctx, direct, rel.Release); err != nil {
				t.Fatalf("pull after retry: %v", err)
			}
		})
	}
}

func TestPushRetriesTransient5xx(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	repo, direct, proxy := faultyRepo(t, Options{Retries: 2})
	var mu sync.Mutex
	failed := 0
	proxy.Set(func(r *http.Request) testpeer.Fault {
		mu.Lock()
		defer mu.Unlock()
		if testpeer.Match(r, http.MethodPut, "/manifests/") && failed < 2 {
			failed++
			return testpeer.Status503
		}
		return testpeer.Pass
	})
	rel := testRelease(t)
	if _, err := Push(context.Background(), repo, rel, PushOptions{}); err != nil {
		t.Fatalf("push with two transient 503s: %v", err)
	}
	if proxy.Injected() != 2 {
		t.Fatalf("%d faults injected, want 2", proxy.Injected())
	}
	if _, err := direct.Resolve(context.Background(), rel.Release); err != nil {
		t.Fatalf("tag: %v", err)
	}
}

func TestPullTampered(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	ctx := context.Background()
	rel := testRelease(t)

	t.Run("registry", func(t *testing.T) {
		repo, _, proxy := faultyRepo(t, Options{})
		res, err := Push(ctx, repo, rel, PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := manifestOf(t, repo, res.Descriptor)
		blobDigest := m.Layers[0].Digest.String()
		proxy.Set(func(r *http.Request) testpeer.Fault {
			if testpeer.Match(r, http.MethodGet, "/blobs/"+blobDigest) {
				return testpeer.Tamper
			}
			return testpeer.Pass
		})
		_, err = Pull(ctx, repo, rel.Release)
		if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "layer components.gz") {
			t.Fatalf("Pull of a tampered layer = %v, want ErrTampered naming components.gz", err)
		}
	})

	t.Run("layout", func(t *testing.T) {
		dir := t.TempDir()
		repo, err := OpenLayout(dir)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Push(ctx, repo, rel, PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := manifestOf(t, repo, res.Descriptor)
		l := m.Layers[2]
		path := filepath.Join(dir, "blobs", "sha256", l.Digest.Encoded())
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0x20
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = Pull(ctx, repo, rel.Release)
		if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "layer components.yaml") {
			t.Fatalf("Pull of a tampered layer = %v, want ErrTampered naming the YAML layer", err)
		}
	})
}

func manifestOf(t *testing.T, repo Repository, desc ocispec.Descriptor) ocispec.Manifest {
	t.Helper()
	p, err := Pull(context.Background(), repo, desc.Digest.String())
	if err != nil {
		t.Fatal(err)
	}
	return p.Manifest
}

func TestLayoutConcurrentTags(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	dir := t.TempDir()
	ctx := context.Background()
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			repo, err := OpenLayout(dir) // one store per pusher, as separate processes would
			if err != nil {
				errs <- err
				return
			}
			rel := testRelease(t)
			rel.Release = fmt.Sprintf("v0.7.%d-infraprovider-proxmox", i)
			if _, err := Push(ctx, repo, rel, PushOptions{}); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	repo, _ := OpenLayout(dir)
	for i := 0; i < n; i++ {
		tag := fmt.Sprintf("v0.7.%d-infraprovider-proxmox", i)
		if _, err := Pull(ctx, repo, tag); err != nil {
			t.Errorf("tag %s lost: %v", tag, err)
		}
	}
}

func TestPullRejects(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	ctx := context.Background()
	repo, err := OpenLayout(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(ctx, repo, "v1.0.0"); !errors.Is(err, errdef.ErrNotFound) {
		t.Fatalf("Pull of a missing tag = %v, want not found", err)
	}
	if _, err := Pull(ctx, repo, ""); err == nil {
		t.Fatal("Pull without a reference succeeded")
	}
}

func TestPushBeforeTag(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	for name, open := range targets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			repo := open(t)
			rel := testRelease(t)
			refused := errors.New("key password is wrong")
			_, err := Push(ctx, repo, rel, PushOptions{BeforeTag: func(context.Context, ocispec.Descriptor) error { return refused }})
			if !errors.Is(err, refused) {
				t.Fatalf("Push = %v, want the BeforeTag error", err)
			}
			if _, err := repo.Resolve(ctx, rel.Release); !errors.Is(err, errdef.ErrNotFound) {
				t.Fatalf("tag written although BeforeTag failed: %v", err)
			}
			calls := 0
			var seen ocispec.Descriptor
			res, err := Push(ctx, repo, rel, PushOptions{BeforeTag: func(_ context.Context, m ocispec.Descriptor) error {
				calls++
				seen = m
				return nil
			}})
			if err != nil || res.Status != Pushed || calls != 1 {
				t.Fatalf("Push = %+v, %v; BeforeTag ran %d times, want once", res, err, calls)
			}
			if seen.Digest != res.Descriptor.Digest || seen.MediaType != ocispec.MediaTypeImageManifest {
				t.Fatalf("BeforeTag saw %s %s, want the manifest %s", seen.MediaType, seen.Digest, res.Descriptor.Digest)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	ctx := context.Background()
	repo, err := OpenLayout(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel := testRelease(t)
	if _, err := Push(ctx, repo, rel, PushOptions{}); err != nil {
		t.Fatal(err)
	}
	other := testRelease(t)
	other.BuilderVersion = "v2.0.0"
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	if d, err := Compare(ctx, repo, rel.Release, other); err != nil || len(d) != 0 {
		t.Fatalf("Compare with another builder version and time = %q, %v; want no differences", d, err)
	}
	changed := testRelease(t)
	changed.Contract = "v1beta2"
	changed.Metadata = []byte(testMetadata + "# x\n")
	d, err := Compare(ctx, repo, rel.Release, changed)
	if err != nil || strings.Join(d, ",") != "layer metadata.yaml,config contract" {
		t.Fatalf("Compare = %q, %v", d, err)
	}
	if _, err := Compare(ctx, repo, "v9.9.9", rel); !errors.Is(err, errdef.ErrNotFound) {
		t.Fatalf("Compare with a missing tag = %v", err)
	}
}
