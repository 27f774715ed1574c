package bump_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// Bump moves a provider to a new upstream release: the pins, every place
// the version is written and the vendored files and blob change together,
// after the offline checks pass on the staged package. Here the example
// core package moves from v1.10.1 to a v1.10.2 served from a temporary
// directory through a mirror of the demo's upstream server; the new files'
// digests are given, as `builder bump --sha256` does.
func ExampleBump() {
	tmp, err := os.MkdirTemp("", "pinseal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	// The package, copied so the example leaves examples/ alone.
	dir := filepath.Join(tmp, "capi-providers-core")
	if err := os.CopyFS(dir, os.DirFS("../../examples/packages/capi-providers-core")); err != nil {
		log.Fatal(err)
	}
	// The upstream release v1.10.2: v1.10.1's files with the new version.
	const canonical = "http://127.0.0.1:8089/"
	upstream := filepath.Join(tmp, "upstream")
	digests := map[string]string{}
	for _, name := range []string{"core-components.yaml", "metadata.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../examples/upstream/cluster-api/v1.10.1", name))
		if err != nil {
			log.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte("v1.10.1"), []byte("v1.10.2"))
		p := filepath.Join(upstream, "cluster-api", "v1.10.2", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			log.Fatal(err)
		}
		sum := sha256.Sum256(b)
		digests[canonical+"cluster-api/v1.10.2/"+name] = hex.EncodeToString(sum[:])
	}

	f := &fetch.Fetcher{Mirrors: []fetch.Mirror{{From: canonical, To: "file://" + filepath.ToSlash(upstream) + "/"}}}
	res, err := bump.Bump(context.Background(), dir, bump.Options{To: "v1.10.2", SHA256: digests, Fetcher: f, Tree: dir})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Provider, res.From.Release, "->", res.To.Release, "contract", res.Contract)
	for _, file := range res.Files {
		fmt.Println(file.Status, file.Kind, file.Path)
		if file.Path == "Makefile" {
			for _, line := range strings.Split(file.Diff, "\n") {
				if (strings.HasPrefix(line, "-") || strings.HasPrefix(line, "+")) && !strings.HasPrefix(line, "---") && !strings.HasPrefix(line, "+++") {
					fmt.Println("  ", line)
				}
			}
		}
	}
	// Output:
	// CoreProvider/cluster-api v1.10.1-core -> v1.10.2-core contract v1beta1
	// modified text Makefile
	//    -CAPI_CORE_VERSION = v1.10.1
	//    +CAPI_CORE_VERSION = v1.10.2
	// modified text pin.yaml
	// modified text templates/configmaps.yaml
	// modified text templates/providers.yaml
	// modified vendored files/components.gz
	// modified vendored files/core-components.yaml
}
