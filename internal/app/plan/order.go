package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/internal/operator"
)

// move is one step of the simulation.
type move struct {
	p        *prov
	from, to cand
	why      string
}

// best is the plan that takes the core to its newest release from which
// every provider can be kept served, each provider to the newest release
// that core serves: the newest core first, then older ones, down to
// staying where it is.
func (w *world) best() []move {
	if w.core == nil {
		return nil
	}
	finals := append(w.core.usable(), w.core.cur)
	for _, f := range finals {
		if moves, ok := w.simulate(f); ok {
			return moves
		}
	}
	return nil
}

func (w *world) start() state {
	s := state{}
	for _, p := range w.provs {
		s[p] = p.cur
	}
	return s
}

// targets: the core at final, every other provider at its newest release
// final serves (or where it is).
func (w *world) targets(final cand) state {
	t := state{w.core: final}
	served := operator.Served(final.tag, final.contract)
	for _, p := range w.provs {
		if p.core {
			continue
		}
		t[p] = p.cur
		for _, c := range p.usable() {
			if slices.Contains(served, c.contract) {
				t[p] = c
				break
			}
		}
	}
	return t
}

// simulate moves the tree toward targets(final), the core first whenever
// its next release still serves every provider as it stands, the others
// (in clusterctl's order) whenever the core as it stands serves their
// next release. ok is false when the targets cannot all be reached so.
func (w *world) simulate(final cand) ([]move, bool) {
	s, t := w.start(), w.targets(final)
	var moves []move
	for progressed := true; progressed; {
		progressed = false
		if m, ok := w.coreMove(s, t); ok {
			moves, progressed = append(moves, m), true
			s[w.core] = m.to
			continue
		}
		for _, p := range w.provs {
			if p.core || s[p].tag == t[p].tag {
				continue
			}
			h, ok := p.hop(s[p], t[p])
			if !ok || !slices.Contains(w.served(s), h.contract) {
				continue
			}
			moves = append(moves, move{p: p, from: s[p], to: h, why: w.providerWhy(p, s, h, t[p])})
			s[p], progressed = h, true
		}
	}
	for p, c := range t {
		if s[p].tag != c.tag {
			return nil, false
		}
	}
	return moves, true
}

// coreMove is the core's next step toward t when it keeps every provider
// served as the tree stands.
func (w *world) coreMove(s, t state) (move, bool) {
	cur, target := s[w.core], t[w.core]
	if cur.tag == target.tag {
		return move{}, false
	}
	h, ok := w.core.hop(cur, target)
	served := operator.Served(h.tag, h.contract)
	if !ok || len(w.unserved(s, served)) > 0 {
		return move{}, false
	}
	var unlocks []string
	before := w.served(s)
	for _, p := range w.provs {
		if c := t[p]; !p.core && c.tag != s[p].tag && !slices.Contains(before, c.contract) && slices.Contains(served, c.contract) {
			unlocks = append(unlocks, fmt.Sprintf("%s %s (%s)", p.p.Provider, c.tag, c.contract))
		}
	}
	why := fmt.Sprintf("core %s serves %s: every provider of the tree stays served", h.tag, strings.Join(served, ", "))
	if len(unlocks) > 0 {
		why = fmt.Sprintf("core first: %s serves %s, which %s needs; every provider of the tree stays served", h.tag, strings.Join(served, ", "), strings.Join(unlocks, ", "))
	}
	if h.tag != target.tag {
		why += fmt.Sprintf("; on the way to %s, as clusterctl skips at most 3 minor versions of the core", target.tag)
	}
	return move{p: w.core, from: cur, to: h, why: why}, true
}

func (w *world) providerWhy(p *prov, s state, h, target cand) string {
	core := s[w.core]
	why := fmt.Sprintf("newest release the core %s serves (contract %s)", core.tag, h.contract)
	if h.tag != target.tag {
		why = fmt.Sprintf("on the way to %s: clusterctl skips at most 3 minor versions of the kubeadm providers; the core %s serves its contract %s", target.tag, core.tag, h.contract)
	}
	return why
}
