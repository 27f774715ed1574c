package plan

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/pin"
)

// cand is a newer stable release of a provider.
type cand struct {
	tag      string
	v        *version.Version
	contract string
	// why is set when the release cannot be a step at all (contract
	// unknown, an asset the pin downloads missing).
	why string
	// srcs are the sources a bump to it downloads; sums the digests the
	// API gives for them (URL -> hex).
	srcs []pin.Source
	sums map[string]string
	tofu bool // a moved source has no digest to give
}

// prov is one provider of the tree and its newer releases.
type prov struct {
	p *outdated.Provider
	// core: the core provider; limited: a provider whose minor skips
	// clusterctl bounds (the core and the kubeadm bootstrap and control
	// plane providers).
	core, limited bool
	order         int
	cur           cand
	cands         []cand // newest first
}

// world is the tree as the plan moves it.
type world struct {
	provs []*prov
	core  *prov
}

// state is the release each provider is at.
type state map[*prov]cand

// providerOrder is clusterctl's upgrade order of provider types
// (cluster-api v1.14.0 cmd/clusterctl/api/v1alpha3/provider_type.go,
// ProviderType.Order): core, bootstrap, control plane, infrastructure,
// IPAM, runtime extension, addon.
var providerOrder = []string{"CoreProvider", "BootstrapProvider", "ControlPlaneProvider", "InfrastructureProvider", "IPAMProvider", "RuntimeExtensionProvider", "AddonProvider"}

func newWorld(rep *outdated.Report) *world {
	w := &world{}
	for i := range rep.Providers {
		p := &rep.Providers[i]
		// A provider that could not be checked gets no step, but its
		// contract still binds the core.
		cur, err := version.ParseSemantic(p.Version)
		if err != nil {
			cur = nil
		}
		kind, name, _ := strings.Cut(p.Provider, "/")
		pr := &prov{p: p, core: kind == "CoreProvider", cur: cand{tag: p.Version, v: cur, contract: p.Contract}}
		pr.limited = pr.core || name == "kubeadm" && (kind == "BootstrapProvider" || kind == "ControlPlaneProvider")
		if pr.order = slices.Index(providerOrder, kind); pr.order < 0 {
			pr.order = len(providerOrder)
		}
		if p.Error == "" && p.Target != nil && cur != nil {
			for _, r := range p.Newer {
				pr.cands = append(pr.cands, newCand(p, r))
			}
		}
		w.provs = append(w.provs, pr)
		if pr.core && w.core == nil {
			w.core = pr
		}
	}
	sort.SliceStable(w.provs, func(i, j int) bool { return w.provs[i].order < w.provs[j].order })
	return w
}

// newCand reads what a bump of p to r needs: its contract, and for each
// source the pin moves, the asset of r it downloads and its digest.
func newCand(p *outdated.Provider, r outdated.Release) cand {
	c := cand{tag: r.Tag, contract: r.Contract, sums: map[string]string{}}
	c.v, _ = version.ParseSemantic(r.Tag)
	if r.Contract == "" {
		c.why = "contract unknown: " + r.ContractError
		return c
	}
	c.srcs = p.Target.MovedSources(r.Tag)
	for i, s := range c.srcs {
		if s.URL == p.Target.Sources[i].URL {
			continue // not moved: keeps its pin
		}
		if outdated.RepoOf(s.URL) == p.Repo {
			name := path.Base(s.URL)
			a := slices.IndexFunc(r.Assets, func(a outdated.Asset) bool { return a.Name == name })
			if a < 0 {
				c.why = fmt.Sprintf("release %s has no asset %s, which the pin downloads (%s)", r.Tag, name, s.URL)
				return c
			}
			if h := r.Assets[a].SHA256(); h != "" {
				c.sums[s.URL] = h
				continue
			}
		}
		if p.Target.Checksums == "" {
			c.tofu = true
		}
	}
	return c
}

// served lists the contracts the core serves at state s; nil without a
// core.
func (w *world) served(s state) []string {
	if w.core == nil {
		return nil
	}
	c := s[w.core]
	return operator.Served(c.tag, c.contract)
}

// unserved lists the providers (other than the core) whose release at
// state s implements a contract not in served.
func (w *world) unserved(s state, served []string) []string {
	var out []string
	for _, p := range w.provs {
		if c := s[p]; !p.core && c.contract != "" && !slices.Contains(served, c.contract) {
			out = append(out, fmt.Sprintf("%s %s (%s)", p.p.Provider, c.tag, c.contract))
		}
	}
	return out
}

// usable are the releases that can be steps, newest first.
func (p *prov) usable() []cand {
	var out []cand
	for _, c := range p.cands {
		if c.why == "" && c.v != nil {
			out = append(out, c)
		}
	}
	return out
}

// hop is the next release on the way from cur to target: target itself,
// or, for a provider whose minor skips clusterctl bounds, the newest
// release at most three minors on (cluster-api upgrader.go doUpgrade:
// from v1.10.0 on, "can't skip more than 3 versions", comparing minors).
// ok is false when no release lies within reach.
func (p *prov) hop(cur, target cand) (cand, bool) {
	if !p.limited || cur.v.LessThan(version.MustParseSemantic("v1.10.0")) || target.v.Minor() <= cur.v.Minor()+3 {
		return target, true
	}
	for _, c := range p.usable() {
		if c.v.GreaterThan(cur.v) && c.v.Minor() <= cur.v.Minor()+3 && !c.v.GreaterThan(target.v) {
			return c, true
		}
	}
	return cand{}, false
}
