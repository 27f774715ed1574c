package build_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/pinseal/pinseal/pkg/build"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// Build fetches what a package's pins name (verifying each SHA-256),
// applies its patches and writes its vendored files and blob. Here the
// example core package has lost its components YAML and blob; its pins
// name the demo's upstream server, which a mirror maps to the files under
// examples/upstream, so nothing leaves the machine. The file the package
// still holds with its pinned bytes is reused, not fetched.
func ExampleBuild() {
	dir, err := os.MkdirTemp("", "pinseal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, os.DirFS("../../examples/packages/capi-providers-core")); err != nil {
		log.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "files", "core-components.yaml"))
	os.Remove(filepath.Join(dir, "files", "components.gz"))

	upstream, err := filepath.Abs("../../examples/upstream")
	if err != nil {
		log.Fatal(err)
	}
	f := &fetch.Fetcher{Mirrors: []fetch.Mirror{{From: "http://127.0.0.1:8089/", To: "file://" + filepath.ToSlash(upstream) + "/"}}}
	res, err := build.Build(context.Background(), dir, build.Options{Fetcher: f})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pins from:", res.Pins, "fetched:", len(res.Fetched), "reused:", len(res.Reused))
	for _, file := range res.Files {
		fmt.Println(file.Kind, file.Path, file.Status)
	}
	built, _ := os.ReadFile(filepath.Join(dir, "files", "components.gz"))
	committed, _ := os.ReadFile("../../examples/packages/capi-providers-core/files/components.gz")
	fmt.Println("blob as committed:", bytes.Equal(built, committed))
	// Output:
	// pins from: pin.yaml fetched: 1 reused: 1
	// source files/core-components.yaml written
	// source files/metadata.yaml unchanged
	// blob files/components.gz written
	// blob as committed: true
}
