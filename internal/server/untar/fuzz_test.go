package untar

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/server/untar/untartest"
)

// FuzzExtract: whatever the archive, extraction returns (no panic, no
// hang) and writes nothing outside its directory.
func FuzzExtract(f *testing.F) {
	f.Add(untartest.TarGz(f, untartest.File("p/Chart.yaml", "name: p"), untartest.Entry{Name: "p/l", Type: tar.TypeSymlink, Linkname: "Chart.yaml"}))
	f.Add(untartest.TarGz(f, untartest.Entry{Name: "../x", Type: tar.TypeReg, Body: "x"}))
	f.Add(untartest.TarGz(f, untartest.Entry{Name: "a", Type: tar.TypeSymlink, Linkname: "../../.."}))
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "root")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		xerr := Extract(bytes.NewReader(data), dir, Limits{MaxFiles: 100, MaxBytes: 1 << 20})
		es, err := os.ReadDir(parent)
		if err != nil || len(es) != 1 || es[0].Name() != "root" {
			t.Fatalf("extraction wrote outside its directory: %v %v", es, err)
		}
		if xerr != nil {
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
