package untar

import (
	"archive/tar"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/untartest"
)

// FuzzExtract: whatever the archive, extraction returns (no panic, no
// hang) and writes nothing outside its directory.
func FuzzExtract(f *testing.F) {
	f.Add(untartest.TarGz(f, untartest.File("p/Chart.yaml", "name: p"), untartest.Entry{Name: "p/l", Type: tar.TypeSymlink, Linkname: "Chart.yaml"}))
	f.Add(untartest.TarGz(f, untartest.Entry{Name: "../x", Type: tar.TypeReg, Body: "x"}))
	f.Add(untartest.TarGz(f, untartest.Entry{Name: "a", Type: tar.TypeSymlink, Linkname: "../../.."}))
	f.Add(untartest.TarGz(f, untartest.File(strings.Repeat("a/", 9)+"f", "x")))
	f.Add(untartest.TarGz(f, untartest.File(strings.Repeat("a", 300), "x")))
	f.Add(untartest.TarGz(f, untartest.Entry{Name: "g", Type: tar.TypeXGlobalHeader}, untartest.Entry{Name: "g", Type: tar.TypeXGlobalHeader}, untartest.File("a/b/c/d/e/f/g/h", "x")))
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "root")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		xerr := Extract(context.Background(), bytes.NewReader(data), dir, Limits{MaxFiles: 100, MaxBytes: 1 << 20, MaxDepth: 8, MaxPathBytes: 256})
		es, err := os.ReadDir(parent)
		if err != nil || len(es) != 1 || es[0].Name() != "root" {
			t.Fatalf("extraction wrote outside its directory: %v %v", es, err)
		}
		// The tree is within the bounds whatever the outcome: no path
		// deeper than MaxDepth, at most MaxFiles entries and directories.
		n := 0
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return nil
			}
			n++
			if rel, _ := filepath.Rel(dir, p); strings.Count(rel, "/")+1 > 8 || len(rel) > 256 {
				t.Fatalf("extracted %s: deeper or longer than the limits", rel)
			}
			return nil
		})
		if n > 100 {
			t.Fatalf("extracted %d entries and directories, more than MaxFiles 100", n)
		}
		if xerr != nil {
			if err := RemoveAll(dir); err != nil {
				t.Fatalf("remove what a refused archive left: %v", err)
			}
			return // the caller deletes the tree
		}
		// An accepted tree: every link in it resolves inside it.
		realDir, _ := filepath.EvalSymlinks(dir)
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil || !strings.HasPrefix(real+"/", realDir+"/") {
				t.Fatalf("accepted link %s resolves to %q (%v), outside %s", p, real, err, realDir)
			}
			return nil
		})
	})
}
