// Package ociimage builds the reproducible container image of `verifier`
// without a Docker daemon.
//
// It builds the container image of `verifier` without a
// Docker daemon, with go-containerregistry: one layer holding the static
// binary (CGO_ENABLED=0) on an empty base, every timestamp fixed, so the
// same binary always gives the same image digest.
//
// The base is empty ("scratch"): the binary is static and needs nothing
// from a distribution — git sources are fetched in-process (go-git), TLS
// roots are compiled in as a fallback (golang.org/x/crypto/x509roots/
// fallback/bundle, set by cmd/verifier's main) — so the image has no shell, no package manager and nothing to
// patch but the binary, and it is built offline: no base image to pull or
// pin. Files it writes go to the mounted data directory and /tmp (the
// chart mounts both; the root file system stays read-only).
package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// UID is the non-root user the image runs as (the "nonroot" id of
// distroless images).
const UID = 65532

// Options describe the image.
type Options struct {
	// Binary is the static verifier binary to put at /verifier.
	Binary string
	// Version goes into the org.opencontainers.image.version label.
	Version string
	// Source goes into org.opencontainers.image.source.
	Source string
	// Arch and OS of the binary; default amd64, linux.
	Arch, OS string
}

// epoch is every timestamp in the image.
var epoch = time.Unix(0, 0).UTC()

// Build makes the image. The result depends only on the binary's bytes and
// opts.
func Build(opts Options) (v1.Image, error) {
	bin, err := os.ReadFile(opts.Binary)
	if err != nil {
		return nil, fmt.Errorf("image: read binary: %w", err)
	}
	if len(bin) < 4 || string(bin[1:4]) != "ELF" {
		return nil, fmt.Errorf("image: %s is not an ELF binary (build it with GOOS=linux CGO_ENABLED=0)", opts.Binary)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := []string{"tmp/", "var/", "var/lib/", "var/lib/pinseal/"}
	for _, d := range dirs {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: epoch, Uid: 0, Gid: 0, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "verifier", Mode: 0o755, Size: int64(len(bin)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: epoch}, CreatedBy: "pinseal ociimage: /verifier", Comment: "static verifier binary",
	}})
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	arch, goos := opts.Arch, opts.OS
	if arch == "" {
		arch = "amd64"
	}
	if goos == "" {
		goos = "linux"
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = arch, goos
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Entrypoint = []string{"/verifier"}
	cf.Config.Cmd = []string{"serve", "--config", "/etc/pinseal/config/serve.yaml"}
	cf.Config.User = fmt.Sprintf("%d:%d", UID, UID)
	cf.Config.WorkingDir = "/var/lib/pinseal"
	cf.Config.Env = []string{"HOME=/var/lib/pinseal"}
	cf.Config.ExposedPorts = map[string]struct{}{"8080/tcp": {}}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":   "pinseal verifier",
		"org.opencontainers.image.version": opts.Version,
		"org.opencontainers.image.source":  opts.Source,
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("image: config: %w", err)
	}
	return mutate.CreatedAt(img, v1.Time{Time: epoch})
}
