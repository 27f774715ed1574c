package untar

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/server/untar/untartest"
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
		{"sum over the limit", []untartest.Entry{{Name: "a", Type: tar.TypeReg, Size: 600 << 10}, {Name: "b", Type: tar.TypeReg, Size: 600 << 10}}, limit, "maxTarBytes", []string{"a"}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "root")
			os.Mkdir(dir, 0o700)
			err := Extract(bytes.NewReader(untartest.TarGz(t, tt.entries...)), dir, testLimits)
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
	err := Extract(bytes.NewReader(body), dir, testLimits)
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("err %v, want a limit error for the trailing data", err)
	}
}
