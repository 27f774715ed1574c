package changes

import (
	"fmt"
	"slices"

	"github.com/pinseal/pinseal/internal/images"
)

// compareImages reports each container whose image is new, changed or
// gone, by workload and container (internal/images finds them).
func compareImages(before, after []byte) ([]Change, error) {
	oi, err := imagesOf("old", before)
	if err != nil {
		return nil, err
	}
	ni, err := imagesOf("new", after)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, k := range sortedKeys(ni) {
		n, o := ni[k], oi[k]
		switch {
		case o.Ref == "":
			out = append(out, Change{Kind: ImageChanged, Object: n.Kind + "/" + n.Name,
				Detail: fmt.Sprintf("new %s %s runs %s", fieldName(n.Field), n.Container, n.Ref)})
		case o.Ref != n.Ref:
			out = append(out, Change{Kind: ImageChanged, Object: n.Kind + "/" + n.Name,
				Detail: fmt.Sprintf("%s %s: %s -> %s", fieldName(n.Field), n.Container, o.Ref, n.Ref)})
		}
	}
	for _, k := range sortedKeys(oi) {
		if o := oi[k]; ni[k].Ref == "" {
			out = append(out, Change{Kind: ImageChanged, Object: o.Kind + "/" + o.Name,
				Detail: fmt.Sprintf("%s %s (%s) is gone", fieldName(o.Field), o.Container, o.Ref)})
		}
	}
	return out, nil
}

func imagesOf(which string, data []byte) (map[string]images.Found, error) {
	found, err := images.ScanBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%s components: %w", which, err)
	}
	out := map[string]images.Found{}
	for _, f := range found {
		out[f.Kind+"/"+f.Name+"\x00"+f.Field+"\x00"+f.Container] = f
	}
	return out, nil
}

func fieldName(f string) string {
	switch f {
	case "initContainers":
		return "init container"
	case "ephemeralContainers":
		return "ephemeral container"
	}
	return "container"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
