package crdcache

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/pinseal/pinseal/pkg/check"
)

var (
	sumA   = sha256.Sum256([]byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"))
	factsA = check.CRDFacts{APIVersion: "apiextensions.k8s.io/v1", Name: "as.x.io", Line: 4, Decoded: true,
		Kinds: []string{"x.io/v1/A"}, Refusal: "[spec: Required value]"}
)

// saved is a directory whose cache holds factsA under sumA for build "b1".
func saved(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	c := Open(dir, "b1")
	c.Remember(sumA, factsA)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRoundTrip(t *testing.T) {
	dir := saved(t)
	c := Open(dir, "b1")
	if c.Ignored() != "" {
		t.Fatalf("ignored: %s", c.Ignored())
	}
	f, ok := c.Recall(sumA)
	if !ok || !reflect.DeepEqual(f, factsA) {
		t.Fatalf("recalled %+v %v, want %+v", f, ok, factsA)
	}
	if _, ok := c.Recall(sha256.Sum256([]byte("other"))); ok {
		t.Fatal("recalled facts never remembered")
	}
}

// TestUntrusted: a file the cache cannot trust is ignored (nothing
// recalled, the reason given), never believed.
func TestUntrusted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build string
		edit  func(t *testing.T, path string)
	}{
		{"other build", "b2", func(*testing.T, string) {}},
		{"corrupt body", "b1", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte) []byte { return bytes.Replace(b, []byte("Required"), []byte("Requirex"), 1) })
		}},
		{"half written", "b1", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte) []byte { return b[:len(b)-5] })
		}},
		{"the format before documents were keyed by their bytes", "b1", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte) []byte { return bytes.Replace(b, []byte(format), []byte("pinseal-crd-facts/1"), 1) })
		}},
		{"no header", "b1", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), nil) })
		}},
		{"garbage", "b1", func(t *testing.T, path string) {
			rewrite(t, path, func([]byte) []byte { return []byte("\x00\xff{\n}") })
		}},
		{"over the size bound", "b1", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte) []byte { return append(b, make([]byte, maxFile)...) })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := saved(t)
			tc.edit(t, filepath.Join(dir, "crd-facts"))
			c := Open(dir, tc.build)
			if c.Ignored() == "" {
				t.Error("the file was believed")
			}
			if _, ok := c.Recall(sumA); ok {
				t.Error("facts recalled from a file that cannot be trusted")
			}
			// The next save replaces it with one that is trusted.
			c.Remember(sumA, factsA)
			if err := c.Save(); err != nil {
				t.Fatal(err)
			}
			if again := Open(dir, tc.build); again.Ignored() != "" {
				t.Errorf("after Save: ignored: %s", again.Ignored())
			}
		})
	}
}

func rewrite(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentWriter: while another writer holds the lock, Save writes
// nothing (the file stays the other's); a lock left by a writer that died
// long ago is taken.
func TestConcurrentWriter(t *testing.T) {
	dir := saved(t)
	path := filepath.Join(dir, "crd-facts")
	before, _ := os.ReadFile(path)
	lock := path + ".lock"
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := Open(dir, "b1")
	c.Remember(sha256.Sum256([]byte("new")), check.CRDFacts{Decoded: true})
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("Save wrote while another writer held the lock")
	}
	old := time.Now().Add(-2 * staleLock)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); bytes.Equal(before, after) {
		t.Fatal("Save did not take a stale lock")
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("the lock stayed after Save: %v", err)
	}
	if _, ok := Open(dir, "b1").Recall(sha256.Sum256([]byte("new"))); !ok {
		t.Fatal("the saved entry was not recalled")
	}
}

// TestSaveKeepsWhatWasUsed: the file holds the entries the last run used,
// not every entry ever seen, and an unchanged cache is not rewritten.
func TestSaveKeepsWhatWasUsed(t *testing.T) {
	dir := saved(t)
	path := filepath.Join(dir, "crd-facts")
	c := Open(dir, "b1")
	c.Recall(sumA)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); !fi.ModTime().Equal(old) {
		t.Error("an unchanged cache was rewritten")
	}
	c = Open(dir, "b1")
	sumB := sha256.Sum256([]byte("b"))
	c.Remember(sumB, check.CRDFacts{Decoded: true})
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = Open(dir, "b1")
	if _, ok := c.Recall(sumA); ok {
		t.Error("an entry the last run did not use was kept")
	}
	if _, ok := c.Recall(sumB); !ok {
		t.Error("the entry the last run used was not kept")
	}
}
