package sign

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/pinseal/pinseal/pkg/artifact"
)

// slowRepo is a repository whose Exists takes a while (so concurrent
// pushes overlap) and that counts the blobs pushed into it.
type slowRepo struct {
	artifact.Repository
	pushes atomic.Int32
}

func (r *slowRepo) Exists(ctx context.Context, d ocispec.Descriptor) (bool, error) {
	time.Sleep(20 * time.Millisecond)
	return r.Repository.Exists(ctx, d)
}

func (r *slowRepo) Push(ctx context.Context, d ocispec.Descriptor, rd io.Reader) error {
	r.pushes.Add(1)
	return r.Repository.Push(ctx, d, rd)
}

// TestPushBlobOnceAtATime: signing and attesting at once both store the
// empty config blob; into one repository it is uploaded once (two racing
// uploads of one blob left docker-registry refusing the manifest that
// names it), into another repository again.
func TestPushBlobOnceAtATime(t *testing.T) {
	layout, err := artifact.OpenLayout(t.TempDir() + "/a")
	if err != nil {
		t.Fatal(err)
	}
	other, err := artifact.OpenLayout(t.TempDir() + "/b")
	if err != nil {
		t.Fatal(err)
	}
	repo, repo2 := &slowRepo{Repository: layout}, &slowRepo{Repository: other}
	data := []byte("{}")
	desc := content.NewDescriptorFromBytes(emptyConfigType, data)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := artifact.Repository(repo)
			if i == 0 {
				r = repo2
			}
			if err := pushBlob(context.Background(), r, desc, data); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n, n2 := repo.pushes.Load(), repo2.pushes.Load(); n != 1 || n2 != 1 {
		t.Fatalf("the blob was uploaded %d times into one repository and %d into the other, want 1 and 1", n, n2)
	}
}
