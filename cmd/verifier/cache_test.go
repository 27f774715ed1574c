package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheckCRDCache: `verifier check` keeps its CRD verdicts in
// $XDG_CACHE_HOME/pinseal and gives the same report from them; with
// --no-cache it neither reads nor writes them; a corrupt cache file is
// ignored (the same report) and replaced.
func TestCheckCRDCache(t *testing.T) {
	tree := filepath.Join("..", "..", "examples", "packages")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	file := filepath.Join(cache, "pinseal", "crd-facts")

	want, code, _ := runVerifier(t, "check", "--no-cache", "--output", "json", tree)
	if code != 0 {
		t.Fatalf("exit %d on the examples", code)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("--no-cache wrote the cache: %v", err)
	}
	for _, step := range []string{"cold", "warm"} {
		got, _, _ := runVerifier(t, "check", "--output", "json", tree)
		if got != want {
			t.Fatalf("%s: the report differs from the one without the cache", step)
		}
		if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
			t.Fatalf("%s: no cache written: %v", step, err)
		}
	}
	if err := os.WriteFile(file, []byte("{\"format\":\"pinseal-crd-facts/1\"}\n{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := runVerifier(t, "check", "--output", "json", tree); got != want {
		t.Fatal("a corrupt cache changed the report")
	}
	if b, _ := os.ReadFile(file); string(b[len(b)-9:]) == "{not json" {
		t.Fatal("the corrupt cache was not replaced")
	}
}
