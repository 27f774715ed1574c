package bump

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/changes"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
)

// BreakingError is a bump refused because the new release breaks what
// clusters run today (changes.Breaking); nothing was changed. AllowBreaking
// lets it through.
type BreakingError struct {
	Package, Provider string
	From, To          Version
	// Breaking are the changes that refuse the bump; Changes all of them.
	Breaking, Changes []changes.Change
}

func (e *BreakingError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bump of %s %s %s -> %s refused, nothing was changed: the new release breaks what clusters run today:", e.Package, e.Provider, e.From.Version, e.To.Version)
	for _, c := range e.Breaking {
		fmt.Fprintf(&b, "\n  %s %s: %s", c.Kind, c.Object, c.Detail)
	}
	if n := len(e.Changes) - len(e.Breaking); n > 0 {
		fmt.Fprintf(&b, "\n(and %d other change(s); --dry-run --allow-breaking lists them all)", n)
	}
	b.WriteString("\nbump to a release that keeps them, or give --allow-breaking once clusters are ready for it")
	return b.String()
}

// compareReleases compares the provider's vendored components and
// metadata before the bump with the staged ones (changes.Compare) into
// Result.Changes, and refuses a breaking change unless AllowBreaking.
func (b *bump) compareReleases() error {
	before, err := Vendored(b.real, b.lay.Version, b.lay.ReleaseFiles)
	if err != nil {
		return fmt.Errorf("bump %s: the safety report needs the components before the bump: %w", b.dir, err)
	}
	after, err := Vendored(b.stage, b.opts.To, b.lay.ReleaseFiles)
	if err != nil {
		return fmt.Errorf("bump %s: the safety report needs the staged components: %w", b.dir, err)
	}
	var opts changes.Options
	if b.prov.Kind != "CoreProvider" {
		// The core's own contract is not judged here: the gate's contract
		// check refuses a core that leaves other providers unserved.
		opts.Served = servedContracts(b.tree)
	}
	cs, err := changes.Compare(before, after, opts)
	if err != nil {
		return fmt.Errorf("bump %s refused, nothing was changed: comparing the releases: %w", b.dir, err)
	}
	b.res.Changes = append(b.res.Changes[:0], cs...)
	if bad := changes.Breaking(cs); len(bad) > 0 && !b.opts.AllowBreaking {
		return &BreakingError{Package: b.dir, Provider: b.prov.ID(), From: b.res.From, To: b.res.To, Breaking: bad, Changes: cs}
	}
	return nil
}

// servedContracts are the contracts the tree's core provider serves; nil
// when the tree has none or its contract cannot be read offline (then a
// new contract is reported, not judged).
func servedContracts(t *model.Tree) []string {
	served, _, _ := check.ServedContracts(t)
	return served
}

// Vendored is release version as the package in dir vendors it (files):
// its components YAML and metadata, one side of changes.Compare.
// Unreadable metadata is left nil, so no contract is compared; the
// metadata-series check says what is wrong with it.
func Vendored(dir, version string, files model.ReleaseFiles) (changes.Release, error) {
	comp, err := readComponents(dir, files)
	if err != nil {
		return changes.Release{}, err
	}
	r := changes.Release{Version: version, Components: comp}
	if m := files.Metadata; m != "" {
		r.Metadata, _ = os.ReadFile(filepath.Join(dir, filepath.FromSlash(m)))
	}
	return r, nil
}

// readComponents reads the vendored components YAML of files under dir,
// else the YAML its blob inflates to (a package that vendors the blob
// alone).
func readComponents(dir string, files model.ReleaseFiles) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(files.Components)))
	if err == nil || files.Blob == "" {
		return data, err
	}
	raw, berr := os.ReadFile(filepath.Join(dir, filepath.FromSlash(files.Blob)))
	if berr != nil {
		return nil, err
	}
	// Past MaxBytes, Compare says the components are too large.
	return io.ReadAll(blob.Inflated(raw, changes.MaxBytes+1))
}
