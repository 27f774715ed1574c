package changes

import (
	"fmt"
	"slices"
	"strings"
)

// grant is one (API group, resource, verb) a role allows, on the named
// objects only when names is not "".
type grant struct {
	group, resource, verb string
	names                 []string // resourceNames; nil: every object
}

// maxGrants bounds the grants one role expands to (groups x resources x
// verbs of each rule): real roles have a few hundred.
const maxGrants = 1 << 16

// grantsOf expands the rules of a Role or ClusterRole. Non-resource URLs
// are grants of resource "url:<path>" in group "".
func grantsOf(o *object) ([]grant, error) {
	var out []grant
	rules := get(o.node, "rules")
	if rules == nil {
		return nil, nil
	}
	for _, r := range rules.Content {
		groups, resources, verbs := texts(get(r, "apiGroups")), texts(get(r, "resources")), texts(get(r, "verbs"))
		names := texts(get(r, "resourceNames"))
		slices.Sort(names)
		for _, u := range texts(get(r, "nonResourceURLs")) {
			for _, v := range verbs {
				out = append(out, grant{resource: "url:" + u, verb: v})
			}
		}
		if len(groups)*len(resources)*len(verbs)+len(out) > maxGrants {
			return nil, fmt.Errorf("%s (line %d): its rules expand to more than %d grants", o.id(), o.line, maxGrants)
		}
		for _, g := range groups {
			for _, res := range resources {
				for _, v := range verbs {
					out = append(out, grant{group: g, resource: res, verb: v, names: names})
				}
			}
		}
	}
	return out, nil
}

// allowed is what the grants of one role allow, indexed for covers.
type allowed map[[3]string]*allowance

// allowance is what a role allows for one (group, resource, verb), which
// may be wildcards: every object, or the named ones. RBAC is additive, so
// the names of several rules add up.
type allowance struct {
	all   bool
	names map[string]bool
}

func index(gs []grant) allowed {
	out := allowed{}
	for _, g := range gs {
		k := [3]string{g.group, g.resource, g.verb}
		a := out[k]
		if a == nil {
			a = &allowance{names: map[string]bool{}}
			out[k] = a
		}
		if len(g.names) == 0 {
			a.all = true
		}
		for _, n := range g.names {
			a.names[n] = true
		}
	}
	return out
}

// covers: what a allows includes grant g (a wildcard group, resource or
// verb covers every one).
func (a allowed) covers(g grant) bool {
	names := map[string]bool{}
	for _, gr := range []string{g.group, "*"} {
		for _, res := range []string{g.resource, "*"} {
			for _, v := range []string{g.verb, "*"} {
				x := a[[3]string{gr, res, v}]
				if x == nil {
					continue
				}
				if x.all {
					return true
				}
				for n := range x.names {
					names[n] = true
				}
			}
		}
	}
	if len(g.names) == 0 {
		return false
	}
	for _, n := range g.names {
		if !names[n] {
			return false
		}
	}
	return true
}

// compareRBAC reports each Role and ClusterRole of the new release that
// allows what the same role of the old one did not: a new role, a new
// verb, a new resource, a wildcard, resourceNames dropped. Secrets are
// called out: they hold credentials.
func compareRBAC(o, n *side) ([]Change, error) {
	var out []Change
	for _, id := range n.order {
		nb := n.byID[id]
		if nb.kind != "Role" && nb.kind != "ClusterRole" {
			continue
		}
		ng, err := grantsOf(nb)
		if err != nil {
			return nil, fmt.Errorf("new components: %w", err)
		}
		var og []grant
		if ob, ok := o.byID[id]; ok {
			if og, err = grantsOf(ob); err != nil {
				return nil, fmt.Errorf("old components: %w", err)
			}
		}
		before := index(og)
		var added []grant
		for _, g := range ng {
			if !before.covers(g) {
				added = append(added, g)
			}
		}
		if len(added) == 0 {
			continue
		}
		detail := "allows " + describeGrants(added)
		if _, existed := o.byID[id]; !existed {
			detail = "new role; " + detail
		}
		if slices.ContainsFunc(added, func(g grant) bool {
			return (g.group == "" || g.group == "*") && (g.resource == "secrets" || g.resource == "*")
		}) {
			detail += "; Secrets included: the provider can now reach credentials"
		}
		out = append(out, Change{Kind: RBACWidened, Object: id, Detail: detail})
	}
	return out, nil
}

// maxDescribed bounds the resources a change names.
const maxDescribed = 12

// describeGrants says "verbs on resource" for each resource, in order:
// "get, list on secrets; delete on proxmoxclusters.infrastructure.cluster.x-k8s.io".
func describeGrants(gs []grant) string {
	var order []string
	verbs := map[string][]string{}
	seen := map[[2]string]bool{}
	for _, g := range gs {
		what := g.resource
		if g.group != "" {
			what += "." + g.group
		}
		if len(g.names) > 0 {
			what += " (" + strings.Join(g.names, ", ") + ")"
		}
		if _, ok := verbs[what]; !ok {
			order = append(order, what)
		}
		if k := [2]string{what, g.verb}; !seen[k] {
			seen[k] = true
			verbs[what] = append(verbs[what], g.verb)
		}
	}
	parts := make([]string, 0, len(order))
	for i, w := range order {
		if i == maxDescribed {
			parts = append(parts, fmt.Sprintf("and %d more resources", len(order)-i))
			break
		}
		parts = append(parts, strings.Join(verbs[w], ", ")+" on "+w)
	}
	return strings.Join(parts, "; ")
}
