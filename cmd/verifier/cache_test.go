package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/gentree"
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

// TestCheckPackageCacheBinary: the verifier binary, with its packages
// kept in $XDG_CACHE_HOME/pinseal/packages, gives the report a run
// without the cache gives, byte for byte and with the same exit code:
// cold, warm, with one package changed, with every entry damaged, and
// for two runs at once on one cache directory.
func TestCheckPackageCacheBinary(t *testing.T) {
	bin := verifierBinary(t)
	gen, err := gentree.Generate(filepath.Join(t.TempDir(), "bench"), gentree.Options{Shape: gentree.Cozystack, Packages: 6, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for name, tree := range map[string]string{"fixture": fixture.CleanCopy(t), "bench": gen.Root} {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			run := func(cache string, args ...string) string {
				cmd := exec.Command(bin, append([]string{"check", "--output", "json"}, append(args, tree)...)...)
				cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
				var out, errOut bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errOut
				err := cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code > 1 {
					t.Fatalf("exit %d: %s", code, errOut.String())
				}
				return fmt.Sprintf("exit %d\n%s", code, out.String())
			}
			entries := func() []string {
				m, _ := filepath.Glob(filepath.Join(cache, "pinseal", "packages", "*"))
				return m
			}
			want := run(cache, "--no-cache")
			if len(entries()) != 0 {
				t.Fatal("--no-cache wrote the package cache")
			}
			for _, step := range []string{"cold", "warm"} {
				if got := run(cache); got != want {
					t.Fatalf("%s: the report differs from the one without the cache:\n%s\n%s", step, got, want)
				}
			}
			if len(entries()) == 0 {
				t.Fatal("no package kept")
			}
			tpls, _ := filepath.Glob(filepath.Join(tree, "packages", "system", "*", "templates", "providers.yaml"))
			b, err := os.ReadFile(tpls[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tpls[0], bytes.Replace(b, []byte("version: v"), []byte("version: v9"), 1), 0o644); err != nil {
				t.Fatal(err)
			}
			before := want
			if want = run(cache, "--no-cache"); want == before {
				t.Fatal("the change did not change the report")
			}
			if got := run(cache); got != want {
				t.Fatalf("one package changed: the report differs from the one without the cache:\n%s\n%s", got, want)
			}
			for _, e := range entries() {
				if err := os.Truncate(e, 40); err != nil {
					t.Fatal(err)
				}
			}
			if got := run(cache); got != want {
				t.Fatal("damaged entries changed the report")
			}
			shared := t.TempDir()
			for _, step := range []string{"cold", "warm"} {
				var wg sync.WaitGroup
				got := make([]string, 2)
				for i := range got {
					wg.Add(1)
					go func() { defer wg.Done(); got[i] = run(shared) }()
				}
				wg.Wait()
				if got[0] != want || got[1] != want {
					t.Fatalf("%s: two runs at once on one cache directory: a report differs", step)
				}
			}
		})
	}
}
