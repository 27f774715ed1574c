// Package relocate moves the container images of provider packages to a
// mirror: the image references of the workload containers in the vendored
// components YAML and inside the blob move together, by repository prefix
// (pin.Relocation), and the relocation is recorded in pin.yaml so that
// `builder build` and `builder bump` apply it again and the verifier can
// reverse it before comparing the vendored file with its pin.
//
// The byte transformations build, bump and the verifier share are
// images.Relocate and images.Unrelocate; Package relocates a package
// directory.
package relocate

import (
	"fmt"
	"strings"

	"github.com/pinseal/pinseal/pkg/pin"
)

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
