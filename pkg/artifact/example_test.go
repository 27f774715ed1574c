package artifact_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"

	"github.com/pinseal/pinseal/pkg/artifact"
)

// A release is packed into an OCI artifact and pushed under its release
// tag, here into an OCI image layout in a temporary directory; Pull reads
// it back with every byte checked against its digest. A release tag never
// moves: pushing other content under it is refused.
func Example() {
	rels, err := artifact.LoadReleases("../../examples/packages/capi-providers-core", "v0.1.0")
	if err != nil {
		log.Fatal(err)
	}
	rel := rels[0]
	fmt.Println("release:", rel, "repository:", rel.RepositoryName())

	tmp, err := os.MkdirTemp("", "pinseal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	repo, err := artifact.OpenLayout(filepath.Join(tmp, rel.RepositoryName()))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	res, err := artifact.Push(ctx, repo, rel, artifact.PushOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("push:", res.Status)
	res, err = artifact.Push(ctx, repo, rel, artifact.PushOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("push again:", res.Status)

	pulled, err := artifact.Pull(ctx, repo, rel.Release)
	if err != nil {
		log.Fatal(err)
	}
	var titles []string
	for t := range pulled.Files {
		titles = append(titles, t)
	}
	sort.Strings(titles)
	fmt.Println("layers:", titles)
	fmt.Println("same YAML:", bytes.Equal(pulled.YAML, rel.YAML), "same blob:", bytes.Equal(pulled.Blob, rel.Blob))

	changed := rel
	changed.YAML = append(bytes.Clone(rel.YAML), "# changed\n"...)
	_, err = artifact.Push(ctx, repo, changed, artifact.PushOptions{})
	var immutable *artifact.ImmutableError
	fmt.Println("push other content:", errors.As(err, &immutable))
	// Output:
	// release: CoreProvider/cluster-api v1.10.1-core repository: core-cluster-api
	// push: pushed
	// push again: unchanged
	// layers: [components.gz components.yaml metadata.yaml]
	// same YAML: true same blob: true
	// push other content: true
}
