package load

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/model"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// TestHelmignoreStaysInTree: .helmignore is read through the tree's root
// like every other file of a chart. A link to a file outside the tree is
// not followed (its content does not reach a finding), and a FIFO or a
// device is not opened: the load ends at once with a finding naming it.
func TestHelmignoreStaysInTree(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("s3cr3t-line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, plant := range map[string]func(path string) error{
		"link outside": func(p string) error { return os.Symlink(outside, p) },
		"fifo":         func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"link to fifo": func(p string) error {
			if err := syscall.Mkfifo(p+"-fifo", 0o644); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(p)+"-fifo", p)
		},
		"device": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			root := fixture.CleanCopy(t)
			hi := filepath.Join(root, bootPkg, ".helmignore")
			os.Remove(hi)
			if err := plant(hi); err != nil {
				t.Skipf("cannot plant: %v", err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				tr := loadTree(t, root, Options{})
				otherPackagesFine(t, tr, bootPkg)
				p := find(t, tr, bootPkg)
				pr := problem(p, model.CheckPackageLoad, ".helmignore cannot be read")
				if pr == nil || pr.File != ".helmignore" {
					t.Errorf("problems = %+v, want one at .helmignore", p.Problems)
					return
				}
				if strings.Contains(pr.Message, "s3cr3t") || strings.Contains(pr.Message, outside) {
					t.Errorf("the finding shows what is outside the tree: %s", pr.Message)
				}
			}()
			select {
			case <-done:
			case <-time.After(timebound.Hang):
				t.Fatal("the load blocked on .helmignore")
			}
		})
	}
}

// TestOpenRegular: only regular files are opened, without blocking.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	os.Mkdir(filepath.Join(dir, "dir"), 0o755)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if f, err := layout.OpenRegular(root, "file"); err != nil {
		t.Fatalf("regular file: %v", err)
	} else {
		f.Close()
	}
	for _, name := range []string{"fifo", "dir"} {
		if f, err := layout.OpenRegular(root, name); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			if f != nil {
				f.Close()
			}
			t.Errorf("%s: err = %v, want not a regular file", name, err)
		}
	}
}
