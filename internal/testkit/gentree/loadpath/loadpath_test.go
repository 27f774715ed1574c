package loadpath_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/internal/testkit/gentree/loadpath"
	"github.com/pinseal/pinseal/internal/testkit/rendertest"
)

// The test binary serves as the render child of the verifier's loader.
func TestMain(m *testing.M) { rendertest.Main(m) }

// TestMonorepoChartsTakeTheMeasuredPaths loads every generated chart
// that is not a provider package with the verifier's loader, as `verifier
// check` does, and holds each to how the loader took the measured chart:
// settled from its templates, rendered, failing with its default values
// (the same way) or rendering nothing, in a render child for the same
// kind of reason (subcharts, a values schema, a template over the fast
// path's caps, a construct the proof does not admit) or in process. So
// the generated monorepo renders 112 charts, 111 of them in render
// children, as the measured tree did, because its charts are built as
// those were; and each rendered chart makes the certificates and bcrypt
// hashes the measured one made (their keys are what a few real charts'
// renders spend most on).
func TestMonorepoChartsTakeTheMeasuredPaths(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 112 charts in render children")
	}
	root := filepath.Join(t.TempDir(), "mono")
	if _, err := gentree.Generate(root, gentree.Options{Packages: 4, Size: 1 << 20, Seed: 4, Shape: gentree.Monorepo}); err != nil {
		t.Fatal(err)
	}
	measured := gentree.MeasuredPaths()
	var paths []string
	for p := range measured {
		paths = append(paths, p)
	}
	took, err := loadpath.Charts(context.Background(), filepath.Join(root, "packages"), paths)
	if err != nil {
		t.Fatal(err)
	}
	children, wantChildren, rendered := 0, 0, 0
	for path, m := range measured {
		p := took[path]
		child := ""
		if p.Child {
			child = gentree.WhyKind(p.Why)
			children++
		}
		if m.Child {
			wantChildren++
		}
		if p.Took != gentree.TookSettled {
			rendered++
		}
		if p.Took != m.Took || child != m.Why || p.Failure != m.Failure {
			t.Errorf("%s: taken %s, in a child %q (%s), failing %q; measured %s, %q, %q", path, p.Took, child, p.Why, p.Failure, m.Took, m.Why, m.Failure)
		}
	}
	for path, m := range measured {
		if m.Took == gentree.TookSettled {
			continue
		}
		certs, hashes, err := loadpath.Secrets(filepath.Join(root, "packages", filepath.FromSlash(path)))
		if err != nil {
			t.Fatal(err)
		}
		if want := gentree.MeasuredSecrets()[path]; certs != want[0] || hashes != want[1] {
			t.Errorf("%s: its render makes %d certificates and %d bcrypt hashes; the measured one %d and %d", path, certs, hashes, want[0], want[1])
		}
	}
	if children != wantChildren || wantChildren != 111 || rendered != 112 {
		t.Errorf("%d charts rendered, %d in a render child; the measured tree: 112, %d (111)", rendered, children, wantChildren)
	}
}
