package images

import (
	"fmt"
	"strings"

	"github.com/pinseal/pinseal/pkg/pin"
)

// Relocate moves the workload images of a components stream by rs, in
// place (Rewrite): only their `image:` values change, every other byte and
// every line stays. It refuses a stream that already runs an image under
// one of rs's To prefixes: after relocation that image could not be told
// from a moved one, so the verifier could not recover the upstream bytes.
// Build, bump and `builder relocate` apply a package's recorded relocation
// with it.
func Relocate(data []byte, rs pin.Relocations) ([]byte, []Moved, error) {
	if len(rs) == 0 {
		return data, nil, nil
	}
	var clash []string
	out, moved, err := Rewrite(data, func(ref string) (string, bool) {
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

// Unrelocate undoes Relocate: every workload image under a To prefix gets
// its From back. On what Relocate wrote from upstream U it returns U.
func Unrelocate(data []byte, rs pin.Relocations) ([]byte, error) {
	if len(rs) == 0 {
		return data, nil
	}
	out, _, err := Rewrite(data, rs.Unmap)
	return out, err
}
