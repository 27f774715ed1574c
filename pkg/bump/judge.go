package bump

import (
	"context"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// GateChecks are the offline checks the staged package must pass.
var GateChecks = []string{
	model.CheckPackageLoad, check.BlobYAML, check.BlobHeader, model.CheckBlobCorrupt,
	check.ConfigMapVersion, check.CompressedAnnotation, check.PinVersion, model.CheckPinDigest,
	check.MetadataSeries, check.Contract, check.SelectorUnique, check.SelectorSemver,
	check.ImageRelocation,
}

// checkStaged runs the offline checks on the staged package, in the tree,
// against the tree before the bump (gate); what it refuses stops the bump.
func (b *bump) checkStaged(ctx context.Context) error {
	changed := map[string]bool{}
	for _, c := range b.changes {
		changed[c.rel] = true
	}
	contract, pre, err := gate(ctx, b.tree, b.pkg, b.stage, b.prov, b.newRel, changed)
	if err != nil {
		return err
	}
	b.res.Contract, b.res.PreExisting = contract, pre
	return nil
}

// gate loads the staged package, puts it in the tree in place of pkg and
// runs the gate checks on the tree before and after the bump. An error
// finding after it refuses the bump when
//
//   - it touches what the bump changes: it is about the bumped provider,
//     or about the whole package and in a file the bump writes (changed,
//     package-relative paths); such a finding is the bump's to fix even if
//     it was there before (a pre-existing blob-header of the bumped
//     provider is gone once its blob is rebuilt; one that stays is not);
//   - or the bump introduced it: the tree before had no finding with the
//     same key (findingKey), in this package or elsewhere (a core bump
//     leaving another package's provider out of contract).
//
// The others were there before and the bump does not touch them (another
// provider's blob header): those of pkg are returned as pre-existing; they
// do not block. It returns the new release's contract.
func gate(ctx context.Context, tree *model.Tree, pkg *model.Package, stage string, prov *model.Provider, newRel string, changed map[string]bool) (string, []report.Finding, error) {
	nt, sp, err := stagedTree(ctx, tree, pkg, stage)
	if err != nil {
		return "", nil, err
	}
	bad, pre := judgeFindings(tree, nt, pkg, stage, prov, changed)
	if len(bad) > 0 {
		return "", nil, &RefusedError{Package: pkg.Path, Findings: bad, PreExisting: pre}
	}
	return newContract(nt, sp, prov, newRel), pre, nil
}

// stagedTree is tree with pkg replaced by the package loaded from its
// staged copy in stage (returned too), under pkg's path and directory.
func stagedTree(ctx context.Context, tree *model.Tree, pkg *model.Package, stage string) (*model.Tree, *model.Package, error) {
	quiet := slog.New(slog.DiscardHandler)
	st, err := load.Tree(ctx, stage, load.Options{Logger: quiet, Namespace: pkg.Namespace})
	if err != nil {
		return nil, nil, err
	}
	var sp *model.Package
	for _, p := range st.Packages {
		if p.Path == "." {
			sp = p
		}
	}
	if sp == nil {
		return nil, nil, &RefusedError{Package: pkg.Path, Findings: []report.Finding{{Check: model.CheckPackageLoad, Severity: report.Error, Package: pkg.Path,
			Message: "the staged package holds no provider any more"}}}
	}
	sp.Path, sp.Dir = pkg.Path, pkg.Dir
	nt := &model.Tree{Root: tree.Root}
	for _, p := range tree.Packages {
		if p == pkg {
			p = sp
		}
		nt.Packages = append(nt.Packages, p)
		if nt.Core == nil && slices.ContainsFunc(p.Providers, func(x *model.Provider) bool { return x.Kind == "CoreProvider" }) {
			nt.Core = p
		}
	}
	return nt, sp, nil
}

// judgeFindings splits the gate findings of the staged tree nt into those
// that block the bump and the pre-existing ones of pkg, as gate says.
func judgeFindings(tree, nt *model.Tree, pkg *model.Package, stage string, prov *model.Provider, changed map[string]bool) (bad, pre []report.Finding) {
	before := map[string]int{}
	for _, f := range gateFindings(tree) {
		before[findingKey(f)]++
	}
	touches := func(f report.Finding) bool {
		if f.Package != pkg.Path {
			return false
		}
		if f.Provider == prov.ID() {
			return true
		}
		rel := f.File
		if pkg.Path != "." {
			rel = strings.TrimPrefix(rel, pkg.Path+"/")
		}
		return f.Provider == "" && f.File != "" && changed[rel]
	}
	for _, f := range gateFindings(nt) {
		// Messages of the staged load name the staging copy.
		f.Message, f.Hint = strings.ReplaceAll(f.Message, stage, pkg.Dir), strings.ReplaceAll(f.Hint, stage, pkg.Dir)
		k := findingKey(f)
		switch {
		case touches(f):
			bad = append(bad, f)
		case before[k] > 0:
			before[k]--
			if f.Package == pkg.Path {
				pre = append(pre, f)
			}
		case f.Package != pkg.Path && f.Check == check.Contract:
			f.Message = "would fall out of contract: " + f.Message
			bad = append(bad, f)
		default:
			bad = append(bad, f)
		}
	}
	return bad, pre
}

// newContract is the contract of release newRel of prov in the staged
// package sp, for the report; "" when its metadata does not say.
func newContract(nt *model.Tree, sp *model.Package, prov *model.Provider, newRel string) string {
	for _, p := range sp.Providers {
		if p.Kind != prov.Kind || p.Name != prov.Name {
			continue
		}
		if m, ok := check.NewIndex(nt).Select(sp, p).Picked(newRel); ok && m.ConfigMap.Metadata != nil {
			maj, min, ok := majorMinor(newRel)
			for _, rs := range m.ConfigMap.Metadata.ReleaseSeries {
				if ok && rs.Major == maj && rs.Minor == min {
					return rs.Contract
				}
			}
		}
	}
	return ""
}

// gateFindings are the error findings of the GateChecks over t (a check
// may report some of its findings as warnings: those never block).
func gateFindings(t *model.Tree) []report.Finding {
	in := check.NewInput(t)
	var out []report.Finding
	for _, id := range GateChecks {
		c, ok := check.Lookup(id)
		if !ok || c.Run == nil || c.Severity != report.Error {
			continue
		}
		for _, f := range c.Run(in) {
			if f.Severity == report.Warning {
				continue
			}
			f.Severity = report.Error
			out = append(out, f)
		}
	}
	return out
}

// numbers are what a finding's message may say differently about the same
// problem before and after a bump: line numbers, sizes, versions.
var numbers = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9]+`) })

// findingKey is what a finding after the bump must share with one before
// it to be the same finding: its check, package, provider and file, and
// its message with every number left out (so a line that moved, or a
// version named in it, does not make it new).
func findingKey(f report.Finding) string {
	return strings.Join([]string{f.Check, f.Package, f.Provider, f.File, numbers().ReplaceAllString(f.Message, "#")}, "\x00")
}
