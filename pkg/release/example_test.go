package release_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/release"
)

// Load derives each provider's release from a package as it stands, after
// the offline checks: a provider whose findings make its artifact wrong is
// refused with them, and has no release.
func ExampleLoad() {
	// A copy of the example core package whose components YAML was edited
	// after its blob was built: the blob no longer holds the YAML.
	drifted, err := os.MkdirTemp("", "pinseal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(drifted)
	if err := os.CopyFS(drifted, os.DirFS("../../examples/packages/capi-providers-core")); err != nil {
		log.Fatal(err)
	}
	yaml := filepath.Join(drifted, "files", "core-components.yaml")
	b, err := os.ReadFile(yaml)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(yaml, append(b, "# edited by hand\n"...), 0o644); err != nil {
		log.Fatal(err)
	}

	opts := release.Options{BuilderVersion: "v0.1.0", Logger: slog.New(slog.DiscardHandler)}
	for _, dir := range []string{"../../examples/packages/capi-providers-core", drifted} {
		provs, err := release.Load(context.Background(), dir, opts)
		if err != nil {
			log.Fatal(err)
		}
		for _, p := range provs {
			if p.Release == nil {
				fmt.Println(p.ID, "refused:", release.RefusedSummary(p.Refused))
				continue
			}
			r := p.Release
			fmt.Println(p.ID, "release", r.Release, "of", r.Version, "type", r.Type, "contract", r.Contract, "repository", r.RepositoryName())
		}
	}
	// Output:
	// CoreProvider/cluster-api release v1.10.1-core of v1.10.1 type core contract v1beta1 repository core-cluster-api
	// CoreProvider/cluster-api refused: 2 error findings (blob-yaml, pin-digest)
}

// Push publishes the releases of package directories under a prefix,
// here an OCI image layout per repository in a temporary directory. It
// never moves a tag: pushing the same release again changes nothing.
func ExamplePush() {
	out, err := os.MkdirTemp("", "pinseal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)
	prefix, err := artifact.ParsePrefix("oci-layout:" + out)
	if err != nil {
		log.Fatal(err)
	}
	opts := release.PushOptions{Prefix: prefix, BuilderVersion: "v0.1.0", Logger: slog.New(slog.DiscardHandler)}
	var refs []string
	for range 2 {
		res, err := release.Push(context.Background(), []string{"../../examples/packages/capi-providers-core"}, opts)
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range res {
			repo, _, _ := strings.Cut(strings.TrimPrefix(r.Reference, prefix.String()+"/"), "@")
			fmt.Println(r.Provider, r.Release, r.Status, "in", repo)
			refs = append(refs, r.Reference)
		}
	}
	fmt.Println("same digest:", refs[0] == refs[1])
	// Output:
	// CoreProvider/cluster-api v1.10.1-core pushed in core-cluster-api
	// CoreProvider/cluster-api v1.10.1-core unchanged in core-cluster-api
	// same digest: true
}
