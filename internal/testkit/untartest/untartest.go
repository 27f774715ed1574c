// Package untartest builds tar and tar.gz archives, hostile ones included,
// for tests.
//
// It builds tar and tar.gz archives for tests, including the
// hostile ones (links out, devices, bombs) that archive writers allow.
package untartest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Entry is one archive entry.
type Entry struct {
	Name     string
	Type     byte   // tar.TypeReg, tar.TypeDir, tar.TypeSymlink, ...
	Body     string // contents of a regular file
	Size     int64  // with an empty Body: a regular file of Size zero bytes
	Linkname string
}

// File is a regular file entry.
func File(name, body string) Entry { return Entry{Name: name, Type: tar.TypeReg, Body: body} }

// Files are n regular files f000, f001, ...
func Files(n int) []Entry {
	es := make([]Entry, n)
	for i := range es {
		es[i] = File(fmt.Sprintf("f%03d", i), "x")
	}
	return es
}

// Dir is the tree under dir as entries: its directories and regular files,
// by slash paths relative to dir (pack it with TarGz(t, Dir(t, dir)...)).
func Dir(t testing.TB, dir string) []Entry {
	t.Helper()
	var es []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			es = append(es, Entry{Name: name + "/", Type: tar.TypeDir})
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			es = append(es, File(name, string(b)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// DeepTree makes a chain of depth directories a/a/a/... under dir (in
// dir/c), with a file f at the bottom, without ever using a long path.
func DeepTree(t testing.TB, dir string, depth int) {
	t.Helper()
	chain, tmp := filepath.Join(dir, "c"), filepath.Join(dir, "n")
	if err := os.Mkdir(chain, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chain, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range depth {
		if err := os.Mkdir(tmp, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(chain, filepath.Join(tmp, "a")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, chain); err != nil {
			t.Fatal(err)
		}
	}
}

// Tar builds an uncompressed tar of entries.
func Tar(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.Name, Typeflag: e.Type, Linkname: e.Linkname, Mode: 0o644, Format: tar.FormatPAX}
		switch e.Type {
		case tar.TypeDir:
			hdr.Mode = 0o755
		case tar.TypeReg:
			hdr.Size = int64(len(e.Body))
			if e.Body == "" {
				hdr.Size = e.Size
			}
		case tar.TypeXGlobalHeader:
			hdr = &tar.Header{Typeflag: e.Type, Name: e.Name, PAXRecords: map[string]string{"comment": "made by a test"}, Format: tar.FormatPAX}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if e.Type == tar.TypeReg {
			var err error
			if e.Body != "" {
				_, err = io.WriteString(tw, e.Body)
			} else {
				_, err = io.CopyN(tw, zeros{}, e.Size)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TarGz builds a gzip-compressed tar of entries.
func TarGz(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	return Gzip(t, Tar(t, entries...))
}

// Gzip compresses data.
func Gzip(t testing.TB, data ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, d := range data {
		if _, err := zw.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
