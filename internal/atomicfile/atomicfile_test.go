package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	for _, n := range listDir(t, dir) {
		if strings.Contains(n, TempPrefix) {
			t.Errorf("leftover temp file %s", n)
		}
	}
}

func TestWriteFileNewAndExisting(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)

	dir := t.TempDir()
	tests := []struct {
		name     string
		existing *os.FileMode // nil: no file before
		perm     os.FileMode
		wantMode os.FileMode
	}{
		{name: "new default perm ignores umask", perm: 0, wantMode: DefaultPerm},
		{name: "new explicit perm", perm: 0o600, wantMode: 0o600},
		{name: "existing keeps mode", existing: ptr(os.FileMode(0o755)), perm: 0o644, wantMode: 0o755},
		{name: "existing read-only keeps mode", existing: ptr(os.FileMode(0o444)), perm: 0, wantMode: 0o444},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, "sub", string(rune('a'+i))+".txt")
			if tt.existing != nil {
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
				os.Chmod(p, *tt.existing)
			}
			if err := WriteFile(p, []byte("new content\n"), tt.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != "new content\n" {
				t.Fatalf("content = %q, %v", got, err)
			}
			fi, _ := os.Stat(p)
			if fi.Mode().Perm() != tt.wantMode {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tt.wantMode)
			}
		})
	}
	noTemps(t, dir)
}

func ptr[T any](v T) *T { return &v }

func TestWriteFilesAllStagedFirst(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	b := filepath.Join(dir, "b.gz")
	os.WriteFile(a, []byte("old a"), 0o644)
	past := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	os.Chtimes(a, past, past)
	// The second target is a directory: staging fails, nothing is renamed.
	os.Mkdir(b, 0o755)

	err := WriteFiles([]File{{Path: a, Data: []byte("new a")}, {Path: b, Data: []byte("new b")}})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v, want not a regular file", err)
	}
	got, _ := os.ReadFile(a)
	if string(got) != "old a" {
		t.Errorf("a = %q, want the old content", got)
	}
	fi, _ := os.Stat(a)
	if !fi.ModTime().Equal(past) {
		t.Errorf("a mtime changed: %v", fi.ModTime())
	}
	noTemps(t, dir)
}

func TestWriteFilesRollbackOnRenameFailure(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	b := filepath.Join(dir, "b")
	c := filepath.Join(dir, "new-c")
	os.WriteFile(a, []byte("old a"), 0o644)
	os.WriteFile(b, []byte("old b"), 0o644)

	calls := 0
	rename = func(from, to string) error {
		calls++
		if calls == 3 {
			return errors.New("simulated rename failure")
		}
		return os.Rename(from, to)
	}
	defer func() { rename = os.Rename }()

	err := WriteFiles([]File{
		{Path: a, Data: []byte("new a")},
		{Path: c, Data: []byte("new c")},
		{Path: b, Data: []byte("new b")},
	})
	if err == nil || !strings.Contains(err.Error(), "simulated") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "could not be rolled back") {
		t.Errorf("rollback reported stuck files: %v", err)
	}
	for p, want := range map[string]string{a: "old a", b: "old b"} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s = %q, want %q", filepath.Base(p), got, want)
		}
	}
	if _, err := os.Stat(c); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new-c exists after rollback: %v", err)
	}
	noTemps(t, dir)
}

func TestWriteFilesSuccess(t *testing.T) {
	dir := t.TempDir()
	files := []File{
		{Path: filepath.Join(dir, "files", "x.yaml"), Data: []byte("x: 1\n")},
		{Path: filepath.Join(dir, "files", "components.gz"), Data: []byte{0x1f, 0x8b, 8}},
	}
	os.MkdirAll(filepath.Join(dir, "files"), 0o755)
	os.WriteFile(files[0].Path, []byte("x: 0\n"), 0o640)
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(f.Path)
		if err != nil || !bytes.Equal(got, f.Data) {
			t.Errorf("%s = %q, %v", f.Path, got, err)
		}
	}
	if fi, _ := os.Stat(files[0].Path); fi.Mode().Perm() != 0o640 {
		t.Errorf("existing mode not kept: %v", fi.Mode().Perm())
	}
	if got := listDir(t, dir); len(got) != 2 {
		t.Errorf("files = %v, want exactly the two targets", got)
	}
}

func TestWriteFilesDuplicate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x")
	err := WriteFiles([]File{{Path: p}, {Path: filepath.Join(dir, ".", "x")}})
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("err = %v, want duplicate error", err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("file written despite error")
	}
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	files := map[string]bool{ // name -> want removed
		TempPrefix + "components.gz.123": true,
		TempPrefix + "x.yaml.456":        false, // fresh: a live writer's
		"components.gz":                  false,
		"notes" + TempPrefix:             false,
	}
	for name, stale := range files {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("x"), 0o644)
		if stale || name == "components.gz" {
			os.Chtimes(p, old, old)
		}
	}
	removed, err := RemoveStale(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != TempPrefix+"components.gz.123" {
		t.Errorf("removed %v", removed)
	}
	for name, stale := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if exists := err == nil; exists == stale {
			t.Errorf("%s: exists=%v, want %v", name, exists, !stale)
		}
	}
	if r, err := RemoveStale(filepath.Join(dir, "missing"), 0); err != nil || r != nil {
		t.Errorf("missing dir: %v %v", r, err)
	}
}
