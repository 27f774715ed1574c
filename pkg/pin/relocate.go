package pin

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Relocation moves the images of a provider's components from one
// repository prefix to another (a mirror): every image reference of a
// workload container that is From, or starts with From followed by '/',
// ':' or '@', gets To in its place. `builder relocate` records it in
// pin.yaml; `builder build` and `builder bump` apply it after the patches,
// and the verifier reverses it before comparing the components file with
// its pin.
type Relocation struct {
	From string `json:"from" yaml:"from"`
	To   string `json:"to" yaml:"to"`
}

// Relocations are the relocations of one provider, applied together: each
// reference moves by the longest From that covers it.
type Relocations []Relocation

// PrefixPattern is an image repository prefix a relocation maps: a
// registry host (lowercase, an optional port) and optional lowercase path
// components, with no tag, digest or scheme. Shared with
// api/pin.schema.json.
const PrefixPattern = `^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*$`

var prefixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(PrefixPattern) })

// Covers reports whether the image reference ref lies under prefix: it is
// prefix, or continues it with a path, a tag or a digest. A prefix never
// covers a longer name (gcr.io/foo does not cover gcr.io/foobar/x).
func Covers(prefix, ref string) bool {
	if !strings.HasPrefix(ref, prefix) || prefix == "" {
		return false
	}
	if len(ref) == len(prefix) {
		return true
	}
	switch ref[len(prefix)] {
	case '/', ':', '@':
		return true
	}
	return false
}

// Map returns where rs moves ref: the longest From covering it replaced
// by its To. ok is false (and ref is returned) when no From covers it.
func (rs Relocations) Map(ref string) (string, bool) {
	best := -1
	for i, r := range rs {
		if Covers(r.From, ref) && (best < 0 || len(r.From) > len(rs[best].From)) {
			best = i
		}
	}
	if best < 0 {
		return ref, false
	}
	return rs[best].To + ref[len(rs[best].From):], true
}

// Unmap is Map reversed: the longest To covering ref replaced by its From.
// Validated relocations (distinct To, none covering another or covered by
// a From) make Unmap(Map(ref)) == ref for every ref that upstream does not
// already write under a To.
func (rs Relocations) Unmap(ref string) (string, bool) {
	best := -1
	for i, r := range rs {
		if Covers(r.To, ref) && (best < 0 || len(r.To) > len(rs[best].To)) {
			best = i
		}
	}
	if best < 0 {
		return ref, false
	}
	return rs[best].From + ref[len(rs[best].To):], true
}

// String is "FROM=TO, …", as `builder relocate --map` takes them.
func (rs Relocations) String() string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.From + "=" + r.To
	}
	return strings.Join(s, ", ")
}

// CheckPrefix reports why p cannot be a relocation prefix, nil if it can.
func CheckPrefix(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("is empty")
	case strings.Contains(p, "://"):
		return fmt.Errorf("%q has a scheme; an image reference has none", p)
	case strings.Contains(p, "@"):
		return fmt.Errorf("%q has a digest; a prefix names a repository or a path above it", p)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("%q ends with /", p)
	case strings.LastIndex(p, ":") > strings.Index(p, "/") && strings.Contains(p, "/"):
		return fmt.Errorf("%q has a tag; a prefix names a repository or a path above it", p)
	case !prefixRE().MatchString(p):
		return fmt.Errorf("%q is not an image repository prefix (lowercase host[:port][/path…])", p)
	}
	return nil
}

// validateRelocate checks the relocate entries of the provider at path pp:
// each prefix is well formed, and the set is one that applying twice
// changes nothing and the verifier can reverse: no From or To twice, no To
// under another To, no To that a From covers (it would move again).
func (v *validator) validateRelocate(pp string, rs Relocations) {
	froms, tos := map[string]string{}, map[string]string{}
	for i, r := range rs {
		rp := fmt.Sprintf("%s.relocate[%d]", pp, i)
		for _, side := range [][2]string{{"from", r.From}, {"to", r.To}} {
			if err := CheckPrefix(side[1]); err != nil {
				v.add(rp+"."+side[0], err.Error(), "write a registry host and path with no tag, e.g. registry.k8s.io/cluster-api or mirror.example:5000/capi")
			}
		}
		if prev, ok := froms[r.From]; ok && r.From != "" {
			v.add(rp+".from", fmt.Sprintf("%q is also relocated by %s", r.From, prev), "keep one entry per prefix")
		}
		froms[r.From] = rp
		if prev, ok := tos[r.To]; ok && r.To != "" {
			v.add(rp+".to", fmt.Sprintf("%q is also the target of %s: the verifier could not tell which prefix an image came from", r.To, prev), "give each prefix its own mirror path")
		}
		tos[r.To] = rp
	}
	for i, r := range rs {
		rp := fmt.Sprintf("%s.relocate[%d].to", pp, i)
		for j, o := range rs {
			switch {
			case r.To == "":
			case Covers(o.From, r.To):
				v.add(rp, fmt.Sprintf("%q is under %q, which relocate[%d] moves: a second relocation would move the images again", r.To, o.From, j),
					"relocate to a prefix outside every from, e.g. mirror.example/"+r.From[strings.LastIndex(r.From, "/")+1:])
			case i != j && o.To != r.To && Covers(o.To, r.To):
				v.add(rp, fmt.Sprintf("%q is under %q, the target of relocate[%d]: the verifier could not tell which prefix an image came from", r.To, o.To, j),
					"give each prefix a mirror path of its own, beside the others")
			}
		}
	}
}

// CheckRelocations reports what makes rs unusable as one provider's
// relocations (the rules of validateRelocate), each a *FieldError whose
// field is relocate[i].from or .to; nil when it is usable.
func CheckRelocations(rs Relocations) error {
	v := &validator{file: "relocate"}
	v.validateRelocate("", rs)
	for _, e := range v.errs {
		if fe, ok := e.(*FieldError); ok {
			fe.Field = strings.TrimPrefix(fe.Field, ".")
		}
	}
	return errors.Join(v.errs...)
}
