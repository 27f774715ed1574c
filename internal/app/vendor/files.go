package vendor

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/pkg/pin"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// names are the files a vendored provider gets in its package, named
// after its type and name so that several providers of one package do
// not collide.
type names struct {
	base                       string // <type>-<name>
	components, metadata, blob string // files/…
	template                   string // templates/…-configmap.yaml
	componentsURL, metadataURL string
	componentsSHA, metadataSHA string
}

func (t *target) names(got []file) names {
	base := t.provider.RepositoryName()
	return names{
		base:          base,
		components:    "files/" + base + "-components.yaml",
		metadata:      "files/" + base + "-metadata.yaml",
		blob:          "files/" + base + "-components.gz",
		template:      "templates/" + base + "-configmap.yaml",
		componentsURL: got[0].digest.URL, metadataURL: got[1].digest.URL,
		componentsSHA: got[0].digest.SHA256, metadataSHA: got[1].digest.SHA256,
	}
}

// pinEntry is the pin.yaml entry of the provider (pkg/pin's format).
func (t *target) pinEntry(n names, blob bool, checksums string) pin.Provider {
	p := pin.Provider{
		Kind: t.provider.Kind, Name: t.provider.Name,
		Version: t.download.Release, Release: t.provider.Version,
		Sources: []pin.Source{
			{URL: n.componentsURL, SHA256: n.componentsSHA, To: n.components},
			{URL: n.metadataURL, SHA256: n.metadataSHA, To: n.metadata},
		},
		Components: n.components, Metadata: n.metadata, Checksums: checksums,
	}
	if blob {
		p.Blob = n.blob
	}
	return p
}

// pinText writes p as a pin.yaml list entry.
func pinText(p pin.Provider) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- kind: %s\n  name: %s\n  version: %s\n  release: %s\n  sources:\n", p.Kind, p.Name, p.Version, p.Release)
	for _, s := range p.Sources {
		fmt.Fprintf(&b, "  - url: %s\n    sha256: %s\n    to: %s\n", s.URL, s.SHA256, s.To)
	}
	if p.Blob != "" {
		fmt.Fprintf(&b, "  blob: %s\n", p.Blob)
	}
	if p.Checksums != "" {
		fmt.Fprintf(&b, "  checksums: %s\n", p.Checksums)
	}
	fmt.Fprintf(&b, "  components: %s\n  metadata: %s\n", p.Components, p.Metadata)
	return b.String()
}

// pinHeader starts a new pin.yaml.
const pinHeader = "# Upstream files this package vendors, pinned by the SHA-256 of their bytes\n# (written by `builder vendor`).\nproviders:\n"

// pinFile is the package's pin.yaml with p added, checked to parse and
// validate.
func pinFile(dir string, p pin.Provider) ([]byte, error) {
	path := filepath.Join(dir, pin.FileName)
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = []byte(pinHeader)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", pin.FileName, err)
	default:
		f, err := pin.Parse(old, pin.FileName)
		if err != nil {
			return nil, fmt.Errorf("%s does not parse, so no pin is added to it: %w", pin.FileName, err)
		}
		for _, q := range f.Providers {
			if q.Kind == p.Kind && q.Name == p.Name {
				return nil, fmt.Errorf("%s pins %s/%s already: `builder build` vendors it, `builder bump` moves it", pin.FileName, p.Kind, p.Name)
			}
		}
		if len(old) > 0 && old[len(old)-1] != '\n' {
			old = append(old, '\n')
		}
	}
	out := append(old, pinText(p)...)
	f, err := pin.Parse(out, pin.FileName)
	if err == nil {
		err = f.Validate(pin.FileName)
	}
	if err != nil {
		return nil, fmt.Errorf("%s with %s/%s added does not hold (its providers list must be a block list at the end of the file): %w", pin.FileName, p.Kind, p.Name, err)
	}
	return out, nil
}

// change is one file to write, relative to the package directory.
type change struct {
	rel  string
	data []byte
}

// refuseExisting refuses to overwrite files a change would create.
func refuseExisting(dir string, rels ...string) error {
	for _, rel := range rels {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); err == nil {
			return fmt.Errorf("%s exists already, and vendoring would overwrite it: remove it, or vendor by hand (docs/sources.md)", rel)
		}
	}
	return nil
}

// commit writes every change into dir at once (atomicfile.WriteFiles:
// staged first, then renamed; a failure leaves the targets as they were).
func commit(dir string, changes []change) ([]string, error) {
	files := make([]atomicfile.File, len(changes))
	rels := make([]string, len(changes))
	for i, c := range changes {
		files[i] = atomicfile.File{Path: filepath.Join(dir, filepath.FromSlash(c.rel)), Data: c.data}
		rels[i] = c.rel
	}
	if err := atomicfile.WriteFiles(files); err != nil {
		return nil, fmt.Errorf("writing the vendored package: %w", err)
	}
	return rels, nil
}

// stage copies the package directory dir to a new temporary directory
// and writes changes there, so that the result is rendered and checked
// before the tree is touched. The caller removes the directory.
func stage(dir string, changes []change) (string, error) {
	tmp, err := os.MkdirTemp("", "pinseal-vendor-")
	if err != nil {
		return "", err
	}
	dst := filepath.Join(tmp, filepath.Base(dir))
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("staging %s: %w", dir, err)
	}
	for _, c := range changes {
		p := filepath.Join(dst, filepath.FromSlash(c.rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
	}
	return dst, nil
}
