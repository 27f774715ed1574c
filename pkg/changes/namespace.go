package changes

import (
	"fmt"
	"sort"
	"strings"
)

// compareNamespaces reports objects of both releases whose namespace
// changes, one change per move (old namespace -> new), naming a few. The
// operator installs namespaced objects into its provider's namespace all
// the same (clusterctl's TargetNamespace, cluster-api-operator
// internal/controller/phase_load.go); the move matters where the
// namespace is written elsewhere (cert-manager annotations, webhook
// service references, a provider whose namespace follows upstream's).
func compareNamespaces(o, n *side) []Change {
	type move struct{ from, to string }
	moved := map[move][]string{}
	for _, id := range o.order {
		ob, nb := o.byID[id], n.byID[id]
		if nb == nil || ob.namespace == nb.namespace {
			continue
		}
		m := move{ob.namespace, nb.namespace}
		moved[m] = append(moved[m], id)
	}
	var out []Change
	for m, ids := range moved {
		sort.Strings(ids)
		shown := ids
		if len(shown) > 3 {
			shown = append(shown[:3:3], "…")
		}
		out = append(out, Change{Kind: NamespaceChanged, Object: "Namespace/" + orNone(m.from),
			Detail: fmt.Sprintf("%d object(s) move from namespace %s to %s (%s)", len(ids), orNone(m.from), orNone(m.to), strings.Join(shown, ", "))})
	}
	return out
}

func orNone(ns string) string {
	if ns == "" {
		return "(none)"
	}
	return ns
}
