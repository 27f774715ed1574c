package gitsource

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"

	"github.com/pinseal/pinseal/internal/testkit/gitbomb"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// TestFetchBounds: repositories of a few kilobytes whose commit checks out
// as 10^6 files (4 GB), or as 64 files of 1 MiB, are refused against the
// bounds before anything is written, fast, naming the bound; the cache
// directory is left with no checkout and no temporary clone. The same
// repositories within the bounds check out whole.
func TestFetchBounds(t *testing.T) {
	ctx := context.Background()
	many := t.TempDir()
	if _, err := gitbomb.Write(many, 10, 6, gitbomb.Blob(4096)); err != nil {
		t.Fatal(err)
	}
	big := t.TempDir()
	if _, err := gitbomb.Write(big, 64, 1, gitbomb.Blob(1<<20)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, repo string
		spec       Spec
		want       string
	}{
		{"files", many, Spec{MaxFiles: 1000}, "more than 1000 files, directories and links (limits.gitMaxFiles)"},
		{"files, default", many, Spec{}, "more than 100000 files, directories and links (limits.gitMaxFiles)"},
		{"bytes", big, Spec{MaxBytes: 16 << 20}, "more than 16777216 bytes (limits.gitMaxBytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.URL, spec.Ref = "file://"+tc.repo, "main"
			cache := t.TempDir()
			start := time.Now()
			_, err := Fetch(ctx, spec, cache)
			took := time.Since(start)
			var le *LimitError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fetch: %v; want a *LimitError saying %q", err, tc.want)
			}
			if le.During != "" {
				t.Errorf("bound found while writing (%s), not from the tree beforehand", le.During)
			}
			if took > 10*time.Second {
				t.Errorf("refusing took %s", took)
			}
			if ents, _ := os.ReadDir(cache); len(ents) != 0 {
				t.Errorf("cache holds %v after a refused checkout", ents)
			}
		})
	}
	// Within the bounds: checked out whole.
	co, err := Fetch(ctx, Spec{URL: "file://" + big, Ref: "main", MaxBytes: 65 << 20, MaxFiles: 64}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(co.Dir)
	if fi, err := os.Stat(filepath.Join(co.Dir, "e0063")); len(ents) != 64 || err != nil || fi.Size() != 1<<20 {
		t.Fatalf("checkout within bounds: %d entries, e0063 %v", len(ents), err)
	}
}

// TestFetchDeadline: a fetch ends at ctx's deadline in whichever step it
// is: while the server is still packing and the pack streams in (the
// transfer, and go-git's indexing of the pack as it is written), or while
// the checkout is written. The promise asserted is the deadline plus
// timebound.Slack, the margin for a loaded machine to act on the timer:
// past the deadline each step does at most one read or write (a chunk of
// the pack, one file of the checkout) before it sees the context, and the
// upload-pack is ended instead of waited for. Nothing is left in the cache.
func TestFetchDeadline(t *testing.T) {
	// 64,000 files (4 GB) from a few kilobytes of git data: the
	// deadline comes while the checkout is written.
	wide := t.TempDir()
	if _, err := gitbomb.Write(wide, 40, 3, gitbomb.Blob(64<<10)); err != nil {
		t.Fatal(err)
	}
	// 128 MiB that do not compress, in 8 similar files: the server
	// searches deltas and deflates for seconds, and the pack streams in
	// for as long, so the deadline comes during the fetch.
	big, commit := gitRepo(t)
	data := make([]byte, 16<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		rand.Read(data[i<<20 : i<<20+4096])
		if err := os.WriteFile(filepath.Join(big, fmt.Sprintf("f%d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commit("README", "random data\n")

	for _, tc := range []struct{ name, repo string }{{"fetch", big}, {"checkout", wide}} {
		t.Run(tc.name, func(t *testing.T) {
			const deadline = 2 * time.Second
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			cache := t.TempDir()
			start := time.Now()
			_, err := Fetch(ctx, Spec{URL: "file://" + tc.repo, Ref: "main", MaxBytes: 8 << 30}, cache)
			took := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Fetch: %v; want the deadline", err)
			}
			t.Logf("returned after %s: %v", took.Round(time.Millisecond), err)
			if timebound.Over(took, deadline) {
				t.Errorf("Fetch returned %s after it started, deadline %s (+%s)", took, deadline, timebound.Slack)
			}
			if ents, _ := os.ReadDir(cache); len(ents) != 0 {
				t.Errorf("cache holds %v after the deadline", ents)
			}
		})
	}
}

// TestBoundedFS: the filesystem the checkout writes through refuses the
// file and the byte past its bounds, recording which.
func TestBoundedFS(t *testing.T) {
	fs := newBoundedFS(context.Background(), osfs.New(t.TempDir()), Spec{MaxFiles: 2, MaxBytes: 10}, "the checkout")
	f, err := fs.Create("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{1}); err == nil || !strings.Contains(err.Error(), "the checkout went over 10 bytes (limits.gitMaxBytes)") {
		t.Fatalf("write past 10 bytes: %v", err)
	}
	f.Close()
	sub, _ := fs.Chroot("d")
	if err := sub.MkdirAll("x", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Create("x/b"); err == nil || !strings.Contains(err.Error(), "limits.gitMaxFiles") {
		t.Fatalf("third file: %v", err)
	}
	if le := fs.exceeded(); le == nil || le.What != "bytes" {
		t.Fatalf("recorded %+v, want the byte bound first", le)
	}
}
