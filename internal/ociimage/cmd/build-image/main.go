// Command build-image builds the verifier's OCI image from a static binary.
//
// It pushes the image to a registry, or writes it as an OCI layout directory:
//
//	CGO_ENABLED=0 go build -trimpath -o bin/verifier-linux ./cmd/verifier
//	go run ./internal/ociimage/cmd/build-image --binary bin/verifier-linux --push HOST/REPO:TAG
//
// Registry credentials come from the Docker config (DOCKER_CONFIG), never
// from flags.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pinseal/pinseal/internal/ociimage"
)

func main() {
	bin := flag.String("binary", "", "static linux verifier binary")
	push := flag.String("push", "", "push to this reference (HOST/REPO:TAG)")
	out := flag.String("layout", "", "write an OCI layout directory instead")
	version := flag.String("version", "v0.1.0-dev", "image version label")
	insecure := flag.Bool("plain-http", false, "push over plain HTTP (a loopback registry)")
	flag.Parse()
	if err := run(*bin, *push, *out, *version, *insecure); err != nil {
		fmt.Fprintln(os.Stderr, "build-image:", err)
		os.Exit(1)
	}
}

func run(bin, push, out, version string, insecure bool) error {
	if bin == "" || (push == "") == (out == "") {
		return fmt.Errorf("want --binary and one of --push REF or --layout DIR")
	}
	img, err := ociimage.Build(ociimage.Options{Binary: bin, Version: version, Source: "https://github.com/pinseal/pinseal"})
	if err != nil {
		return err
	}
	dgst, err := img.Digest()
	if err != nil {
		return err
	}
	if out != "" {
		p, err := layout.Write(out, empty.Index)
		if err != nil {
			return err
		}
		if err := p.AppendImage(img); err != nil {
			return err
		}
		fmt.Printf("%s %s\n", out, dgst)
		return nil
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(push, opts...)
	if err != nil {
		return err
	}
	if err := remote.Write(ref, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	fmt.Printf("%s@%s\n", ref.Context(), dgst)
	return nil
}
