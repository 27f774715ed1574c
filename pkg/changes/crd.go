package changes

import (
	"fmt"
	"strings"
)

// crd is what a CustomResourceDefinition says about its versions.
type crd struct {
	served  []string // versions with served: true, in spec order
	storage string   // the version with storage: true
	webhook bool     // spec.conversion.strategy: Webhook
}

func crdOf(o *object) crd {
	spec := get(o.node, "spec")
	var c crd
	if v := get(spec, "versions"); v != nil {
		for _, e := range v.Content {
			name := text(get(e, "name"))
			if name == "" {
				continue
			}
			if isTrue(get(e, "served")) {
				c.served = append(c.served, name)
			}
			if isTrue(get(e, "storage")) {
				c.storage = name
			}
		}
	}
	c.webhook = text(get(get(spec, "conversion"), "strategy")) == "Webhook"
	return c
}

// compareCRDs reports served versions gone (breaking without a conversion
// webhook in the new CRD: objects and clients using the version fail), a
// new storage version and a conversion webhook dropped.
func compareCRDs(o, n *side) []Change {
	var out []Change
	for _, id := range o.order {
		ob := o.byID[id]
		if ob.kind != "CustomResourceDefinition" {
			continue
		}
		oc := crdOf(ob)
		nb, ok := n.byID[id]
		if !ok {
			for _, v := range oc.served {
				out = append(out, Change{Kind: CRDVersionRemoved, Object: id, Breaking: true,
					Detail: fmt.Sprintf("served version %s is gone: the new release has no such CRD", v)})
			}
			continue
		}
		nc := crdOf(nb)
		still := map[string]bool{}
		for _, v := range nc.served {
			still[v] = true
		}
		for _, v := range oc.served {
			if still[v] {
				continue
			}
			c := Change{Kind: CRDVersionRemoved, Object: id}
			still := servedList(nc.served)
			if nc.webhook {
				c.Detail = fmt.Sprintf("version %s is no longer served (still served: %s); a conversion webhook converts stored objects", v, still)
			} else {
				c.Breaking = true
				c.Detail = fmt.Sprintf("version %s is no longer served (still served: %s) and there is no conversion webhook: objects stored and clients written as %s fail", v, still, v)
			}
			out = append(out, c)
		}
		if oc.storage != "" && nc.storage != "" && oc.storage != nc.storage {
			out = append(out, Change{Kind: CRDStorageChanged, Object: id,
				Detail: fmt.Sprintf("storage version %s -> %s: objects stored as %s stay so until rewritten (status.storedVersions)", oc.storage, nc.storage, oc.storage)})
		}
		if oc.webhook && !nc.webhook {
			out = append(out, Change{Kind: CRDConversionRemoved, Object: id,
				Detail: fmt.Sprintf("the conversion webhook is gone (strategy None); versions served: %s", servedList(nc.served))})
		}
	}
	return out
}

// servedList names the served versions, a bounded number of them.
func servedList(vs []string) string {
	switch {
	case len(vs) == 0:
		return "none"
	case len(vs) > maxDescribed:
		return strings.Join(vs[:maxDescribed], ", ") + fmt.Sprintf(" and %d more", len(vs)-maxDescribed)
	}
	return strings.Join(vs, ", ")
}
