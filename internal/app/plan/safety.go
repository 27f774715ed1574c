package plan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/internal/patch"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/changes"
)

// MaxComponents bounds a components asset downloaded for a safety report.
// Real components files are 1–2 MB (Cluster API's core a few MB); 16 MiB
// leaves room for the largest while a hostile or broken asset cannot make
// the plan hold more than that per release in memory. changes.Compare
// bounds the parse.
const MaxComponents = 16 << 20

// stepKey names one step: a provider of a package moved from one release
// to another.
type stepKey struct{ pkg, provider, from, to string }

func keyOf(m move) stepKey { return stepKey{dirOf(m.p.p), m.p.p.Provider, m.from.tag, m.to.tag} }

// stepReport is the safety report of one step.
type stepReport struct {
	changes []changes.Change
	// missing says why no report could be made ("" when it was).
	missing string
	// refuse says why `builder bump` would refuse the step whatever its
	// flags (a package patch that does not apply to the new components).
	refuse string
}

// todo is a step whose report is to be made, with the contracts the core
// serves at its point of the plan (the core's own steps judge none, as
// `builder bump` does not).
type todo struct {
	stepKey
	served []string
}

// unreported lists the steps of pl with no report yet.
func (pl *Plan) unreported(reports map[stepKey]*stepReport) []todo {
	var out []todo
	if pl.Core == nil {
		return nil
	}
	coreTag, coreContract := pl.Core.Version, pl.Core.Contract
	for _, s := range pl.Steps {
		k := stepKey{s.Package, s.Provider, s.From, s.To}
		isCore := strings.HasPrefix(s.Provider, "CoreProvider/")
		if _, ok := reports[k]; !ok {
			t := todo{stepKey: k}
			if !isCore {
				t.served = operator.Served(coreTag, coreContract)
			}
			out = append(out, t)
		}
		if isCore {
			coreTag, coreContract = s.To, s.Contract
		}
	}
	return out
}

// refuse marks the releases a report refuses as no step: a patch that
// does not apply, and, unless allowBreaking, a breaking change.
func (w *world) refuse(reports map[stepKey]*stepReport, allowBreaking bool) {
	keys := make([]stepKey, 0, len(reports))
	for k := range reports {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, k := range keys {
		why := reports[k].refuse
		if bad := changes.Breaking(reports[k].changes); why == "" && len(bad) > 0 && !allowBreaking {
			why = fmt.Sprintf("%s breaks what clusters run today: %s; `builder plan --allow-breaking` plans it once clusters are ready", k.to, describe(bad))
		}
		if why == "" {
			continue
		}
		for _, p := range w.provs {
			if dirOf(p.p) != k.pkg || p.p.Provider != k.provider {
				continue
			}
			for i := range p.cands {
				if p.cands[i].tag == k.to && p.cands[i].why == "" {
					p.cands[i].why = why
				}
			}
		}
	}
}

// describe lists changes as "kind object (detail)".
func describe(cs []changes.Change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %s (%s)", c.Kind, c.Object, c.Detail)
	}
	return strings.Join(parts, "; ")
}

// reporter makes the safety reports of steps: the tree's vendored
// components and metadata for the pinned release, the release's assets
// for any other, each read once.
type reporter struct {
	rep    *outdated.Report
	assets *outdated.Assets
	sides  map[string]side
}

// side is one release of a provider as a step's report compares it, or
// why it cannot be.
type side struct {
	rel             changes.Release
	missing, refuse string
}

func newReporter(rep *outdated.Report, opts outdated.Options) (*reporter, error) {
	a, err := outdated.NewAssets(opts)
	if err != nil {
		return nil, err
	}
	return &reporter{rep: rep, assets: a, sides: map[string]side{}}, nil
}

// report makes the report of step k. Only a used-up rate limit or a
// cancelled context is an error; anything else leaves the report missing,
// with the reason.
func (r *reporter) report(ctx context.Context, k todo) (*stepReport, error) {
	i := slices.IndexFunc(r.rep.Providers, func(p outdated.Provider) bool { return dirOf(&p) == k.pkg && p.Provider == k.provider })
	if i < 0 || r.rep.Providers[i].Target == nil {
		return &stepReport{missing: "the provider's pins could not be read"}, nil
	}
	p := &r.rep.Providers[i]
	var sides [2]side
	for j, tag := range []string{k.from, k.to} {
		s, err := r.side(ctx, p, tag)
		if err != nil {
			return nil, err
		}
		if s.missing != "" || s.refuse != "" {
			return &stepReport{missing: s.missing, refuse: s.refuse}, nil
		}
		sides[j] = s
	}
	cs, err := changes.Compare(sides[0].rel, sides[1].rel, changes.Options{Served: k.served})
	if err != nil {
		return &stepReport{missing: "comparing the releases: " + err.Error()}, nil
	}
	if cs == nil {
		cs = []changes.Change{}
	}
	return &stepReport{changes: cs}, nil
}

func (r *reporter) side(ctx context.Context, p *outdated.Provider, tag string) (side, error) {
	key := dirOf(p) + "\x00" + p.Provider + "\x00" + tag
	if s, ok := r.sides[key]; ok {
		return s, nil
	}
	s, err := r.readSide(ctx, p, tag)
	if err != nil {
		return side{}, err
	}
	r.sides[key] = s
	return s, nil
}

// readSide reads release tag of p: the vendored files for the pinned
// release; else the release's components asset, patched as the package
// patches it (what the bump vendors), and its metadata.yaml.
func (r *reporter) readSide(ctx context.Context, p *outdated.Provider, tag string) (side, error) {
	t := p.Target
	if tag == p.Version {
		rel, err := bump.Vendored(dirOf(p), t.Version, t.ReleaseFiles)
		if err != nil {
			return side{missing: fmt.Sprintf("the vendored components of %s cannot be read: %v", tag, err)}, nil
		}
		return side{rel: rel}, nil
	}
	ri := slices.IndexFunc(p.Newer, func(n outdated.Release) bool { return n.Tag == tag })
	if ri < 0 {
		return side{missing: "release " + tag + " is not among the newer releases read"}, nil
	}
	rel := p.Newer[ri]
	a, why := componentsAsset(p, rel)
	if why != "" {
		return side{missing: why}, nil
	}
	data, err := r.assets.Read(ctx, tag, a, MaxComponents)
	if err != nil {
		var rl *outdated.RateLimitError
		if errors.As(err, &rl) || ctx.Err() != nil {
			return side{}, err
		}
		if de := (*outdated.DigestError)(nil); errors.As(err, &de) {
			// The command's --sha256 is that digest: the bump would refuse.
			return side{refuse: err.Error() + ", and `builder bump --sha256` would refuse the bytes as well"}, nil
		}
		return side{missing: err.Error()}, nil
	}
	data, err = applyPatches(dirOf(p), t.Components, t.Patches, data)
	if err != nil {
		return side{refuse: fmt.Sprintf("%v, so `builder bump` to %s would fail: update the patch for %s first", err, tag, tag)}, nil
	}
	return side{rel: changes.Release{Version: tag, Components: data, Metadata: rel.Metadata}}, nil
}

// componentsAsset is the asset of rel that the bump downloads as the
// components file: the pin's components source moved to rel, when the
// releases API lists it; why says why there is none.
func componentsAsset(p *outdated.Provider, rel outdated.Release) (outdated.Asset, string) {
	t := p.Target
	for _, s := range t.MovedSources(rel.Tag) {
		if s.To != t.Components || t.Components == "" {
			continue
		}
		name := path.Base(s.URL)
		if outdated.RepoOf(s.URL) == p.Repo {
			if i := slices.IndexFunc(rel.Assets, func(a outdated.Asset) bool { return a.Name == name }); i >= 0 {
				return rel.Assets[i], ""
			}
		}
		return outdated.Asset{}, fmt.Sprintf("the components file the bump downloads (%s) is not an asset the releases API lists for %s %s", s.URL, p.Repo, rel.Tag)
	}
	return outdated.Asset{}, "the pin names no components source"
}

// applyPatches applies the package's patches (package-relative paths)
// that change the components file comp to data, in order, as the build
// does.
func applyPatches(dir, comp string, patches []string, data []byte) ([]byte, error) {
	if len(patches) == 0 {
		return data, nil
	}
	// Through an os.Root: a patch symlinked out of the package is not read.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for _, rel := range patches {
		raw, err := root.ReadFile(rel)
		if err != nil {
			return nil, fmt.Errorf("patch %s: %w", rel, err)
		}
		pt, err := patch.Parse(rel, raw)
		if err != nil {
			return nil, err
		}
		for _, fd := range pt.Files {
			if fd.NewName != comp && fd.OldName != comp {
				continue
			}
			if data, _, err = fd.Apply(data); err != nil {
				return nil, fmt.Errorf("the package's patch %s does not apply to the new components: %w", rel, err)
			}
		}
	}
	return data, nil
}
