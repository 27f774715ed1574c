package outdated

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/internal/metadata"
	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Core is the core provider the newer releases are judged against.
type Core struct {
	Package  string `json:"package"`
	Provider string `json:"provider"`
	Version  string `json:"version"`
	// Contract is the contract its pinned release implements.
	Contract string `json:"contract,omitempty"`
	// Serves are the contracts it serves (operator.Contracts).
	Serves []string `json:"serves"`
}

// IsCore says whether p is a core provider.
func (p *Provider) IsCore() bool { return strings.HasPrefix(p.Provider, "CoreProvider/") }

// treeContract is the contract of p's release as the tree holds it: the
// series of spec.version in the metadata of the ConfigMap its selector
// picks; "" when that cannot be read (the contract check says why).
func treeContract(ix *check.Index, pkg *model.Package, p *model.Provider) string {
	rel := check.Release(ix, pkg, p)
	m, ok := ix.Select(pkg, p).Picked(rel)
	v, err := version.ParseGeneric(rel)
	if !ok || err != nil || m.ConfigMap.Metadata == nil || m.ConfigMap.Metadata.Err != nil {
		return ""
	}
	for _, s := range m.ConfigMap.Metadata.ReleaseSeries {
		if uint(s.Major) == v.Major() && uint(s.Minor) == v.Minor() {
			return s.Contract
		}
	}
	return ""
}

// readContracts reads the contract of each newer stable release of p from
// its own metadata.yaml asset, newest first, at most MaxMetadata of them.
// A release whose contract cannot be read says why (ContractError); only
// an exhausted rate limit or a cancelled context stops the look-up.
func (c *client) readContracts(ctx context.Context, p *Provider, rels []ghRelease) error {
	byTag := map[string]ghRelease{}
	for _, r := range rels {
		if !r.Draft {
			byTag[r.TagName] = r
		}
	}
	for i := range p.Newer {
		r := &p.Newer[i]
		if i >= c.opts.MaxMetadata {
			r.ContractError = fmt.Sprintf("not read: only the %d newest releases' metadata is read", c.opts.MaxMetadata)
			continue
		}
		raw, err := c.metadataOf(ctx, p.Repo, byTag[r.Tag])
		if err != nil {
			var rl *RateLimitError
			if errors.As(err, &rl) {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.ContractError = err.Error()
			continue
		}
		con, err := metadata.Contract(raw, r.Tag)
		if err != nil {
			r.ContractError = fmt.Sprintf("the %s of %s: %v", MetadataAsset, r.Tag, err)
			continue
		}
		r.Contract, r.Metadata = con, raw
	}
	return nil
}

// judge marks each newer release compatible or not with the core
// provider of the trees, and each provider's newest compatible release.
func (r *Report) judge() {
	var core *Provider
	for i := range r.Providers {
		if p := &r.Providers[i]; p.IsCore() {
			core = p
			break
		}
	}
	if core == nil {
		return
	}
	r.Core = &Core{Package: core.Package, Provider: core.Provider, Version: core.Version, Contract: core.Contract,
		Serves: operator.Served(core.Version, core.Contract)}
	if r.Core.Serves == nil {
		r.Core.Serves = []string{}
	}
	for i := range r.Providers {
		p := &r.Providers[i]
		for j := range p.Newer {
			n := &p.Newer[j]
			ok := n.Contract != "" && r.compatible(p, n)
			n.Compatible = &ok
			if ok && p.NewestCompatible == "" {
				p.NewestCompatible = n.Tag
			}
		}
	}
}

// compatible: a provider's release is served by the core; a core release
// still serves the pinned contract of every other provider.
func (r *Report) compatible(p *Provider, n *Release) bool {
	if !p.IsCore() {
		return slices.Contains(r.Core.Serves, n.Contract)
	}
	return len(r.Unserved(n.Tag, n.Contract)) == 0
}

// Unserved lists the providers (Kind/name at version) whose pinned
// contract a core release (version, implementing contract) does not
// serve.
func (r *Report) Unserved(version, contract string) []string {
	served := operator.Served(version, contract)
	var out []string
	for _, o := range r.Providers {
		if !o.IsCore() && o.Contract != "" && !slices.Contains(served, o.Contract) {
			out = append(out, fmt.Sprintf("%s %s (%s)", o.Provider, o.Version, o.Contract))
		}
	}
	return out
}

// Summary says in one line why the newest release of p is not the one to
// take, or "" when it is (or there is nothing newer): "v0.9.1 needs
// contract v1beta2; core v1.10.1 serves v1beta1; newest compatible:
// v0.7.8".
func (r *Report) Summary(p *Provider) string {
	if len(p.Newer) == 0 || p.Error != "" {
		return ""
	}
	n := p.Newer[0]
	newest := "newest compatible: none"
	if p.NewestCompatible != "" {
		newest = "newest compatible: " + p.NewestCompatible
	}
	switch {
	case n.Compatible != nil && *n.Compatible:
		return ""
	case n.Contract == "":
		return fmt.Sprintf("%s: contract unknown: %s; %s", n.Tag, n.ContractError, newest)
	case r.Core == nil:
		return fmt.Sprintf("%s needs contract %s; no core provider among the directories, so compatibility is not judged", n.Tag, n.Contract)
	case p.IsCore():
		return fmt.Sprintf("%s serves %s; not served: %s; %s", n.Tag, strings.Join(operator.Served(n.Tag, n.Contract), ", "),
			strings.Join(r.Unserved(n.Tag, n.Contract), ", "), newest)
	}
	s := fmt.Sprintf("%s needs contract %s; core %s serves %s; %s", n.Tag, n.Contract, r.Core.Version, strings.Join(r.Core.Serves, ", "), newest)
	if c := r.coreServing(n.Contract); c != "" {
		s += fmt.Sprintf(" (core %s would serve it and every provider: see builder plan)", c)
	}
	return s
}

// coreServing is the newest compatible release of the core that serves
// contract, "" when none does.
func (r *Report) coreServing(contract string) string {
	for _, p := range r.Providers {
		if !p.IsCore() {
			continue
		}
		for _, n := range p.Newer {
			if n.Compatible != nil && *n.Compatible && slices.Contains(operator.Served(n.Tag, n.Contract), contract) {
				return n.Tag
			}
		}
	}
	return ""
}

// TreeCores are the core providers of t, each with the contract its
// release implements (as the tree holds it) and the contracts it serves.
func TreeCores(t *model.Tree) []Core {
	ix := check.NewIndex(t)
	var out []Core
	for _, pkg := range t.Packages {
		for _, p := range pkg.Providers {
			if p.Kind != "CoreProvider" {
				continue
			}
			c := Core{Package: pkg.Path, Provider: p.ID(), Version: pin.ReleaseVersion(check.Release(ix, pkg, p)), Contract: treeContract(ix, pkg, p)}
			c.Serves = operator.Served(c.Version, c.Contract)
			if c.Serves == nil {
				c.Serves = []string{}
			}
			out = append(out, c)
		}
	}
	return out
}
