package check

import (
	"errors"
	"testing"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// mutators damage a clean model in the ways a hostile or half-loaded tree
// can: nil parts, empty strings, odd versions, broken blobs, shared labels.
var mutators = []func(t *model.Tree, i int){
	func(t *model.Tree, i int) { pkgAt(t, i).Pins = nil },
	func(t *model.Tree, i int) { pkgAt(t, i).Files = nil },
	func(t *model.Tree, i int) { cmAt(t, i).Components = nil },
	func(t *model.Tree, i int) { cmAt(t, i).Metadata = nil },
	func(t *model.Tree, i int) { cmAt(t, i).Labels = nil },
	func(t *model.Tree, i int) { cmAt(t, i).Name = "" },
	func(t *model.Tree, i int) { cmAt(t, i).Name = "v99999999999999999999.0.0" },
	func(t *model.Tree, i int) { provAt(t, i).Selector = nil },
	func(t *model.Tree, i int) { provAt(t, i).Selector = &model.Selector{} },
	func(t *model.Tree, i int) {
		provAt(t, i).Selector = &model.Selector{MatchExpressions: []model.Requirement{{Key: "", Operator: "In"}}}
	},
	func(t *model.Tree, i int) { provAt(t, i).Version = "" },
	func(t *model.Tree, i int) { provAt(t, i).Version = "v1" },
	func(t *model.Tree, i int) { provAt(t, i).Kind = "" },
	func(t *model.Tree, i int) {
		if c := cmAt(t, i).Components; c != nil {
			c.Blob = nil
		}
	},
	func(t *model.Tree, i int) {
		if c := cmAt(t, i).Components; c != nil && c.Blob != nil {
			c.Blob.Err = errors.New("not a CorruptError")
		}
	},
	func(t *model.Tree, i int) {
		if c := cmAt(t, i).Components; c != nil && c.Blob != nil {
			c.Blob.HeaderErr = &blob.CorruptError{Kind: blob.BadHeader, Offset: -1}
		}
	},
	func(t *model.Tree, i int) {
		cm := cmAt(t, i)
		if c := cm.Components; c != nil {
			c.Diff = &blob.Diff{}
		}
		if r := pkgAt(t, i).Layout.ConfigMap(cm); r != nil {
			r.Components = "files/absent.yaml"
		}
	},
	func(t *model.Tree, i int) {
		if m := cmAt(t, i).Metadata; m != nil {
			m.ReleaseSeries = append(m.ReleaseSeries, model.ReleaseSeries{Major: -1, Minor: -5, Contract: ""})
		}
	},
	func(t *model.Tree, i int) {
		if ps := pkgAt(t, i).Pins; ps != nil {
			ps.Versions = append(ps.Versions, pin.Var{Name: "V_VERSION", Value: "", Known: true})
			ps.Unpinned = append(ps.Unpinned, pin.Var{})
		}
	},
	func(t *model.Tree, i int) {
		if ps := pkgAt(t, i).Pins; ps != nil && ps.File != nil {
			ps.File.Providers = append(ps.File.Providers, pin.Provider{Sources: []pin.Source{{To: "files/x", SHA256: "zz"}}, Version: "v1.0.0"})
		}
	},
	func(t *model.Tree, i int) { t.Core = nil },
	func(t *model.Tree, i int) { pkgAt(t, i).Providers = nil },
	func(t *model.Tree, i int) { pkgAt(t, i).ConfigMaps = nil },
	func(t *model.Tree, i int) { pkgAt(t, i).Path = "" },
}

func pkgAt(t *model.Tree, i int) *model.Package { return t.Packages[i%len(t.Packages)] }

func cmAt(t *model.Tree, i int) *model.ConfigMap {
	p := pkgAt(t, i)
	if len(p.ConfigMaps) == 0 {
		p.ConfigMaps = []*model.ConfigMap{{}}
	}
	return p.ConfigMaps[i%len(p.ConfigMaps)]
}

func provAt(t *model.Tree, i int) *model.Provider {
	p := pkgAt(t, i)
	if len(p.Providers) == 0 {
		p.Providers = []*model.Provider{{}}
	}
	return p.Providers[i%len(p.Providers)]
}

// FuzzChecks applies a byte-chosen sequence of mutators to the clean model
// and runs every check: none may panic, and every finding names its check,
// package and message.
func FuzzChecks(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{9, 9, 10, 11, 20})
	f.Add([]byte{14, 15, 16, 17, 18, 19, 21})
	f.Fuzz(func(t *testing.T, ops []byte) {
		tree := cleanTree()
		for k := 0; k+1 < len(ops) && k < 64; k += 2 {
			mutators[int(ops[k])%len(mutators)](tree, int(ops[k+1]))
		}
		for _, fd := range runAll(tree) {
			if fd.Check == "" || fd.Package == "" || fd.Message == "" {
				t.Fatalf("incomplete finding: %+v", fd)
			}
		}
	})
}
