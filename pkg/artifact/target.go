package artifact

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry"
)

// ErrURLScheme is wrapped when a registry prefix or reference carries a
// URL scheme: plain HTTP is a client option (Options.PlainHTTP), not part
// of the address.
var ErrURLScheme = errors.New("has a URL scheme (plain HTTP is a client option, not part of the address)")

// Repository is one OCI repository that artifacts, signatures and
// attestations are stored in: a registry repository or an OCI image layout
// directory. It is an oras.Target plus a name for messages and references.
type Repository interface {
	oras.Target
	// Name is the repository as users write it:
	// "127.0.0.1:5000/capi/core-cluster-api" or
	// "oci-layout:/abs/dir/core-cluster-api".
	Name() string
}

// LayoutScheme prefixes an OCI image layout directory in a PREFIX or a
// reference: "oci-layout:DIR".
const LayoutScheme = "oci-layout:"

// Prefix is where releases go: a registry host with a repository path
// prefix, or a directory holding one OCI image layout per repository.
type Prefix struct {
	// Dir is the absolute layout directory; empty for a registry.
	Dir string
	// Host is the registry host[:port]; empty for a layout.
	Host string
	// Path is the repository path prefix inside the registry ("" or
	// "capi/providers").
	Path string
}

// ParsePrefix parses "HOST[:PORT][/PATH]" or "oci-layout:DIR".
func ParsePrefix(s string) (Prefix, error) {
	if dir, ok := strings.CutPrefix(s, LayoutScheme); ok {
		if dir == "" {
			return Prefix{}, fmt.Errorf("prefix %q names no directory: write oci-layout:DIR", s)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return Prefix{}, fmt.Errorf("prefix %q: %w", s, err)
		}
		return Prefix{Dir: abs}, nil
	}
	if strings.Contains(s, "://") {
		return Prefix{}, fmt.Errorf("prefix %q %w: write HOST[:PORT]/PATH or oci-layout:DIR", s, ErrURLScheme)
	}
	s = strings.TrimSuffix(s, "/")
	host, path, _ := strings.Cut(s, "/")
	if host == "" {
		return Prefix{}, fmt.Errorf("prefix %q names no registry: write HOST[:PORT]/PATH or oci-layout:DIR", s)
	}
	ref := registry.Reference{Registry: host, Repository: joinPath(path, "x")}
	if err := ref.ValidateRegistry(); err != nil {
		return Prefix{}, fmt.Errorf("prefix %q: registry %q is not HOST[:PORT]: %w", s, host, err)
	}
	if err := ref.ValidateRepository(); err != nil {
		return Prefix{}, fmt.Errorf("prefix %q: path %q is not a repository path (lowercase letters, digits, '.', '_', '-', '/'): %w", s, path, err)
	}
	return Prefix{Host: host, Path: path}, nil
}

// IsLayout reports whether the prefix is an OCI image layout directory.
func (p Prefix) IsLayout() bool { return p.Dir != "" }

// String is the prefix as ParsePrefix reads it.
func (p Prefix) String() string {
	if p.IsLayout() {
		return LayoutScheme + p.Dir
	}
	return strings.TrimSuffix(p.Host+"/"+p.Path, "/")
}

// Repository opens the repository name below the prefix (for a release:
// rel.RepositoryName()). Nothing is contacted or written until used.
func (p Prefix) Repository(name string, opts Options) (Repository, error) {
	if p.IsLayout() {
		return OpenLayout(filepath.Join(p.Dir, filepath.FromSlash(name)))
	}
	if p.Host == "" {
		return nil, fmt.Errorf("empty prefix: write HOST[:PORT]/PATH or oci-layout:DIR")
	}
	return OpenRegistry(p.Host+"/"+joinPath(p.Path, name), opts)
}

// OpenReference opens the repository of a full reference and returns the
// tag or digest part ("" when the reference has none):
//
//	HOST[:PORT]/REPO[:TAG|@DIGEST]
//	oci-layout:DIR[:TAG|@DIGEST]   (DIR is the layout of one repository)
func OpenReference(ref string, opts Options) (Repository, string, error) {
	if rest, ok := strings.CutPrefix(ref, LayoutScheme); ok {
		dir, tag := splitLayoutReference(rest)
		if dir == "" {
			return nil, "", fmt.Errorf("reference %q names no directory: write oci-layout:DIR[:TAG|@DIGEST]", ref)
		}
		repo, err := OpenLayout(dir)
		return repo, tag, err
	}
	if strings.Contains(ref, "://") {
		return nil, "", fmt.Errorf("reference %q %w: write HOST[:PORT]/REPO:TAG", ref, ErrURLScheme)
	}
	r, err := registry.ParseReference(ref)
	if err != nil {
		return nil, "", fmt.Errorf("reference %q is not HOST[:PORT]/REPO[:TAG|@DIGEST] or oci-layout:DIR[:TAG|@DIGEST]: %w", ref, err)
	}
	repo, err := OpenRegistry(r.Registry+"/"+r.Repository, opts)
	if err != nil {
		return nil, "", err
	}
	return repo, r.Reference, nil
}

// splitLayoutReference splits "DIR[:TAG|@DIGEST]". A ':' counts as the tag
// separator only after the last path separator.
func splitLayoutReference(s string) (dir, ref string) {
	if i := strings.LastIndex(s, "@"); i >= 0 && strings.Contains(s[i:], ":") {
		return s[:i], s[i+1:]
	}
	slash := strings.LastIndexAny(s, `/\`)
	if i := strings.LastIndex(s, ":"); i > slash {
		return s[:i], s[i+1:]
	}
	return s, ""
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "/" + name
}
