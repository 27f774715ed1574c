package ociimage

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeELF is enough of a binary for the image layout tests.
func fakeELF(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "verifier")
	if err := os.WriteFile(p, []byte("\x7fELF"+content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildReproducible(t *testing.T) {
	a, err := Build(Options{Binary: fakeELF(t, "one"), Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(Options{Binary: fakeELF(t, "one"), Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Fatalf("same binary, digests %s and %s", da, db)
	}
	c, _ := Build(Options{Binary: fakeELF(t, "two"), Version: "v1"})
	if dc, _ := c.Digest(); dc == da {
		t.Fatal("another binary, same digest")
	}
	cf, err := a.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.Config.Entrypoint[0] != "/verifier" || !cf.Created.Time.Equal(epoch) {
		t.Fatalf("config %+v", cf.Config)
	}
	if _, err := Build(Options{Binary: filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Fatal("a missing binary built an image")
	}
	notELF := filepath.Join(t.TempDir(), "script")
	os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755)
	if _, err := Build(Options{Binary: notELF}); err == nil {
		t.Fatal("a shell script built an image")
	}
}
