// Package relocate moves the container images of provider packages to a
// mirror: the image references of the workload containers in the vendored
// components YAML and inside the blob move together, by repository prefix
// (pin.Relocation), and the relocation is recorded in pin.yaml so that
// `builder build` and `builder bump` apply it again and the verifier can
// reverse it before comparing the vendored file with its pin.
//
// Apply and Reverse are the byte transformations build, bump and the
// verifier share; Package relocates a package directory.
package relocate

import (
	"fmt"
	"strings"

	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Apply moves the workload images of a components stream by rs, in place
// (images.Rewrite): only their `image:` values change, every other byte and
// every line stays. It refuses a stream that already runs an image under
// one of rs's To prefixes: after relocation that image could not be told
// from a moved one, so the verifier could not recover the upstream bytes.
func Apply(data []byte, rs pin.Relocations) ([]byte, []images.Moved, error) {
	if len(rs) == 0 {
		return data, nil, nil
	}
	var clash []string
	out, moved, err := images.Rewrite(data, func(ref string) (string, bool) {
		if _, under := rs.Unmap(ref); under {
			clash = append(clash, ref)
			return ref, false
		}
		return rs.Map(ref)
	})
	if err != nil {
		return nil, nil, err
	}
	if len(clash) > 0 {
		return nil, nil, fmt.Errorf("the components already run %s, under a prefix the relocation moves images to (%s): a relocated image could not be told from it; relocate to a prefix upstream does not use", strings.Join(clash, ", "), rs)
	}
	return out, moved, nil
}

// Reverse undoes Apply: every workload image under a To prefix gets its
// From back. On what Apply wrote from upstream U it returns U.
func Reverse(data []byte, rs pin.Relocations) ([]byte, error) {
	if len(rs) == 0 {
		return data, nil
	}
	out, _, err := images.Rewrite(data, rs.Unmap)
	return out, err
}

// ParseMap reads one `--map FROM=TO`.
func ParseMap(s string) (pin.Relocation, error) {
	from, to, ok := strings.Cut(s, "=")
	if !ok {
		return pin.Relocation{}, fmt.Errorf("--map %q: write FROM=TO, e.g. registry.k8s.io/cluster-api=mirror.example:5000/capi", s)
	}
	r := pin.Relocation{From: strings.TrimSpace(from), To: strings.TrimSpace(to)}
	if err := pin.CheckPrefix(r.From); err != nil {
		return r, fmt.Errorf("--map %q: FROM %w; write a registry host and path with no tag, e.g. registry.k8s.io/cluster-api", s, err)
	}
	if err := pin.CheckPrefix(r.To); err != nil {
		return r, fmt.Errorf("--map %q: TO %w; write a registry host and path with no tag, e.g. mirror.example:5000/capi", s, err)
	}
	return r, nil
}

// Merge returns old with each of add in place of the entry with the same
// From, or appended: running `builder relocate` again with a new mirror
// for a prefix replaces its target.
func Merge(old, add pin.Relocations) pin.Relocations {
	out := append(pin.Relocations(nil), old...)
	for _, a := range add {
		replaced := false
		for i := range out {
			if out[i].From == a.From {
				out[i], replaced = a, true
			}
		}
		if !replaced {
			out = append(out, a)
		}
	}
	return out
}
