package plan

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/changes"
)

// dirOf is the package directory as the command line named it.
func dirOf(p *outdated.Provider) string {
	return filepath.Join(p.Root, filepath.FromSlash(p.Package))
}

// treeOf is the --tree of a step: the directory holding both the
// package and the core's package, so the bump's checks see the core the
// plan moved.
func (w *world) treeOf(p *prov) string {
	if w.core == nil || filepath.Clean(w.core.p.Root) == filepath.Clean(p.p.Root) {
		return p.p.Root
	}
	a, b := filepath.Clean(w.core.p.Root), filepath.Clean(p.p.Root)
	for !within(b, a) {
		parent := filepath.Dir(a)
		if parent == a {
			return p.p.Root
		}
		a = parent
	}
	return a
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// step is the Step of m: its `builder bump` command, with the digest of
// every source it moves from the releases API (--sha256), or, where the
// API gives none and the pin names no checksums file, trusted on first
// use (said in why). The step carries its safety report rp (nil or
// missing: why says so); a breaking one, allowed, adds --allow-breaking.
func (w *world) step(m move, builder string, rp *stepReport, allowBreaking bool) Step {
	p := m.p.p
	args := []string{builder, "bump", dirOf(p), "--provider", p.Provider, "--to", m.to.tag, "--tree", w.treeOf(m.p)}
	for _, s := range m.to.srcs {
		if h, ok := m.to.sums[s.URL]; ok {
			args = append(args, "--sha256", s.URL+"="+h)
		}
	}
	why := m.why
	if m.to.tofu {
		args = append(args, "--trust-on-first-use")
		why += "; the releases API gives no digest for a file it downloads, so the command trusts it on first use (compare the printed SHA-256 with the release's)"
	}
	var cs []changes.Change
	switch {
	case rp == nil:
		why += "; no safety report was made"
	case rp.missing != "":
		why += "; the safety report could not be made: " + rp.missing
	default:
		cs = rp.changes
		if bad := changes.Breaking(cs); len(bad) > 0 && allowBreaking {
			args = append(args, "--allow-breaking")
			why += "; breaking, allowed by --allow-breaking: " + describe(bad)
		}
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return Step{Package: dirOf(p), Provider: p.Provider, From: m.from.tag, To: m.to.tag, Contract: m.to.contract, Why: why, Command: strings.Join(quoted, " "), Changes: cs}
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// blocked lists every newer stable release beyond where the plan leaves
// its provider, with the reason no step reaches it.
func (w *world) blocked(moves []move) []Blocked {
	out := []Blocked{}
	end := w.start()
	for _, m := range moves {
		end[m.p] = m.to
	}
	if w.core == nil {
		for _, p := range w.provs {
			for _, c := range p.cands {
				out = append(out, Blocked{dirOf(p.p), p.p.Provider, c.tag, "no core provider among the directories, so no contract can be judged: plan from the tree's root"})
			}
		}
		return out
	}
	served := w.served(end)
	for _, p := range w.provs {
		for _, c := range p.cands {
			if c.v == nil || !c.v.GreaterThan(end[p].v) {
				continue
			}
			out = append(out, Blocked{dirOf(p.p), p.p.Provider, c.tag, w.reason(p, c, end, served)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Package < out[j].Package })
	return out
}

// reason says why c, newer than where the plan leaves p, is not reached.
func (w *world) reason(p *prov, c cand, end state, served []string) string {
	core := end[w.core]
	if c.why != "" {
		return c.why
	}
	if p.core {
		cs := operator.Served(c.tag, c.contract)
		if un := w.unserved(end, cs); len(un) > 0 {
			return fmt.Sprintf("core %s serves %s: it would leave %s unserved, and no release of theirs that it serves can be reached first", c.tag, strings.Join(cs, ", "), strings.Join(un, ", "))
		}
	} else if !slices.Contains(served, c.contract) {
		return fmt.Sprintf("%s needs contract %s; core %s (the newest the plan reaches) serves %s", c.tag, c.contract, core.tag, strings.Join(served, ", "))
	}
	if _, ok := p.hop(end[p], c); !ok {
		return fmt.Sprintf("no path from %s: clusterctl skips at most 3 minor versions of the core and kubeadm providers, and no release lies in between", end[p].tag)
	}
	return fmt.Sprintf("no order of steps to %s keeps every provider served by the core at each step", c.tag)
}
