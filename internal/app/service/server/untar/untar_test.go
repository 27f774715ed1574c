package untar

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/untartest"
)

var testLimits = Limits{MaxFiles: 50, MaxBytes: 1 << 20}

func TestExtract(t *testing.T) {
	type want int
	const (
		ok want = iota
		unsafe
		limit
	)
	tests := []struct {
		name    string
		entries []untartest.Entry
		want    want
		msg     string
		files   []string // must exist afterwards (ok)
		absent  []string // must not exist afterwards
	}{
		{"tree", []untartest.Entry{
			{Name: "./", Type: tar.TypeDir},
			{Name: "pkg/", Type: tar.TypeDir},
			untartest.File("pkg/Chart.yaml", "name: x"),
			untartest.File("./pkg/files/a.yaml", "a"),
			{Name: "pkg/files/b.yaml", Type: tar.TypeSymlink, Linkname: "a.yaml"},
			{Name: "pkg/files/c.yaml", Type: tar.TypeLink, Linkname: "pkg/files/a.yaml"},
			{Name: "pkg/up", Type: tar.TypeSymlink, Linkname: "../pkg"},
			{Name: "pax_global_header", Type: tar.TypeXGlobalHeader},
		}, ok, "", []string{"pkg/Chart.yaml", "pkg/files/a.yaml", "pkg/files/b.yaml", "pkg/files/c.yaml", "pkg/up/Chart.yaml"}, nil},
		{"absolute", []untartest.Entry{untartest.File("/tmp/x", "x")}, unsafe, "absolute", nil, nil},
		{"windows absolute", []untartest.Entry{untartest.File(`C:\x`, "x")}, unsafe, "absolute", nil, nil},
		{"backslash", []untartest.Entry{untartest.File(`a\..\..\x`, "x")}, unsafe, "backslash", nil, nil},
		{"dot dot", []untartest.Entry{untartest.File("ok", "x"), untartest.File("a/../b", "x")}, unsafe, `".."`, []string{"ok"}, []string{"b"}},
		{"symlink escapes", []untartest.Entry{{Name: "a/l", Type: tar.TypeSymlink, Linkname: "../../x"}}, unsafe, "outside", nil, nil},
		{"absolute symlink", []untartest.Entry{{Name: "l", Type: tar.TypeSymlink, Linkname: "/etc"}}, unsafe, "absolute", nil, nil},
		{"symlink chain escapes", []untartest.Entry{
			{Name: "d/e/l", Type: tar.TypeSymlink, Linkname: "../.."}, // the root: fine on its own
			{Name: "y", Type: tar.TypeSymlink, Linkname: "d/e/l/.."},  // lexically d/e, really the root's parent
		}, unsafe, "resolves outside", nil, nil},
		{"dangling symlink", []untartest.Entry{{Name: "l", Type: tar.TypeSymlink, Linkname: "nothing"}}, unsafe, "does not resolve", nil, nil},
		{"file under symlink", []untartest.Entry{{Name: "l", Type: tar.TypeSymlink, Linkname: "."}, untartest.File("l/x", "x")}, unsafe, "under the symbolic link", nil, []string{"x"}},
		{"hard link outside", []untartest.Entry{{Name: "h", Type: tar.TypeLink, Linkname: "/etc/passwd"}}, unsafe, "hard link", nil, []string{"h"}},
		{"hard link to a later file", []untartest.Entry{{Name: "h", Type: tar.TypeLink, Linkname: "f"}, untartest.File("f", "x")}, unsafe, "hard link", nil, nil},
		{"hard link to a directory", []untartest.Entry{{Name: "d/", Type: tar.TypeDir}, {Name: "h", Type: tar.TypeLink, Linkname: "d"}}, unsafe, "hard link", nil, nil},
		{"char device", []untartest.Entry{{Name: "c", Type: tar.TypeChar}}, unsafe, "device", nil, nil},
		{"block device", []untartest.Entry{{Name: "b", Type: tar.TypeBlock}}, unsafe, "device", nil, nil},
		{"fifo", []untartest.Entry{{Name: "p", Type: tar.TypeFifo}}, unsafe, "FIFO", nil, nil},
		{"duplicate", []untartest.Entry{untartest.File("a", "1"), untartest.File("a", "2")}, unsafe, "duplicate", nil, nil},
		{"root as a file", []untartest.Entry{untartest.File(".", "x")}, unsafe, "root", nil, nil},
		{"too many entries", untartest.Files(51), limit, "maxTarFiles", nil, []string{"f050"}},
		{"bomb", []untartest.Entry{untartest.File("small", "x"), {Name: "bomb", Type: tar.TypeReg, Size: 8 << 20}}, limit, "maxTarBytes", []string{"small"}, []string{"bomb"}},
		{"too deep", []untartest.Entry{untartest.File(strings.Repeat("a/", 32)+"f", "x")}, limit, "maxTarDepth", nil, []string{"a"}},
		{"deep enough", []untartest.Entry{untartest.File(strings.Repeat("a/", 31)+"f", "x")}, ok, "", []string{strings.Repeat("a/", 31) + "f"}, nil},
		{"path too long", []untartest.Entry{untartest.File(strings.Repeat("x", 1025), "x")}, limit, "maxTarPathBytes", nil, nil},
		{"link target too long", []untartest.Entry{{Name: "l", Type: tar.TypeSymlink, Linkname: strings.Repeat("./", 513)}}, limit, "maxTarPathBytes", nil, []string{"l"}},
		// 3 entries, 48 directories: under maxTarFiles by entries, over it
		// by directories, refused before any directory is made.
		{"directories count", []untartest.Entry{
			untartest.File("a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/1", "x"),
			untartest.File("b/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/1", "x"),
			untartest.File("c/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/1", "x"),
			untartest.File("d/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/1", "x"),
		}, limit, "directories", []string{"a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/1"}, []string{"d"}},
		{"explicit directories count once", append([]untartest.Entry{{Name: "d/", Type: tar.TypeDir}, {Name: "d/e/", Type: tar.TypeDir}}, untartest.Files(48)...), ok, "", []string{"d/e", "f047"}, nil},
		{"pax global headers count", append(untartest.Files(49), untartest.Entry{Name: "g1", Type: tar.TypeXGlobalHeader}, untartest.Entry{Name: "g2", Type: tar.TypeXGlobalHeader}), limit, "maxTarFiles", []string{"f048"}, nil},
		{"sum over the limit", []untartest.Entry{{Name: "a", Type: tar.TypeReg, Size: 600 << 10}, {Name: "b", Type: tar.TypeReg, Size: 600 << 10}}, limit, "maxTarBytes", []string{"a"}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "root")
			os.Mkdir(dir, 0o700)
			err := Extract(context.Background(), bytes.NewReader(untartest.TarGz(t, tt.entries...)), dir, testLimits)
			var ue *UnsafeError
			var le *LimitError
			switch tt.want {
			case ok:
				if err != nil {
					t.Fatal(err)
				}
			case unsafe:
				if !errors.As(err, &ue) {
					t.Fatalf("err %v, want UnsafeError", err)
				}
			case limit:
				if !errors.As(err, &le) {
					t.Fatalf("err %v, want LimitError", err)
				}
			}
			if err != nil && !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err %q, want it to mention %q", err, tt.msg)
			}
			for _, f := range tt.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s not extracted: %v", f, err)
				}
			}
			for _, f := range tt.absent {
				if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s was written", f)
				}
			}
			// Nothing beside the root.
			if es, _ := os.ReadDir(parent); len(es) != 1 {
				t.Fatalf("extraction wrote outside its directory: %v", es)
			}
		})
	}
}

func TestExtractTarGzTrailingData(t *testing.T) {
	// A valid archive followed, inside the gzip stream, by 8 MiB of zeros.
	dir := t.TempDir()
	body := untartest.Gzip(t, untartest.Tar(t, untartest.File("a", "x")), make([]byte, 8<<20))
	err := Extract(context.Background(), bytes.NewReader(body), dir, testLimits)
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("err %v, want a limit error for the trailing data", err)
	}
}

func TestExtractHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Extract(ctx, bytes.NewReader(untartest.TarGz(t, untartest.Files(3)...)), t.TempDir(), testLimits)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	// Ended in the middle of a file body: the read of the body fails.
	ctx, cancel = context.WithCancel(context.Background())
	noise := make([]byte, 256<<10)
	rand.Read(noise)
	body := untartest.TarGz(t, untartest.File("big", hex.EncodeToString(noise)))
	r := &cancelAfter{r: bytes.NewReader(body), n: 64 << 10, cancel: cancel}
	err = Extract(ctx, r, t.TempDir(), testLimits)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	// It stops at once, not at the end of the file.
	if r.after > 1 {
		t.Fatalf("%d reads after the context ended", r.after)
	}
}

// cancelAfter cancels its context once n bytes were read.
type cancelAfter struct {
	r      *bytes.Reader
	n      int
	cancel func()
	after  int // reads after the cancel
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.n <= 0 {
		c.cancel()
		c.after++
	}
	if len(p) > 512 {
		p = p[:512]
	}
	n, err := c.r.Read(p)
	c.n -= n
	return n, err
}

func TestRemoveAllDeepTree(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "verify-1")
	os.Mkdir(dir, 0o700)
	untartest.DeepTree(t, dir, 3000)
	// Also a wide part, a symbolic link (removed, not followed) and a
	// read-only directory.
	outside := filepath.Join(parent, "outside")
	os.WriteFile(outside, []byte("keep"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "c", "link"))
	os.MkdirAll(filepath.Join(dir, "w", "x"), 0o755)
	os.WriteFile(filepath.Join(dir, "w", "x", "f"), nil, 0o644)
	os.Chmod(filepath.Join(dir, "w", "x"), 0o500)
	// flatten is RemoveAll's way when os.RemoveAll fails (out of file
	// descriptors on a tree this deep under a lower limit).
	if err := flatten(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still there: %v", dir, err)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep" {
		t.Fatalf("the link target was touched: %q %v", b, err)
	}
	if err := RemoveAll(dir); err != nil {
		t.Fatalf("removing a missing directory: %v", err)
	}
}
