//go:build integration

package cluster

import (
	"context"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/kubetest"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/sign"
)

type world struct{ *kubetest.World }

func newWorld(t *testing.T) *world { return &world{kubetest.NewWorld(t)} }

// run checks the world's cluster against its tree with the admin
// kubeconfig.
func (w *world) run(t *testing.T) []string {
	t.Helper()
	return w.runAs(t, w.Srv.Kubeconfig, w.Tree)
}

func (w *world) runAs(t *testing.T, kubeconfig string, tree *model.Tree) []string {
	t.Helper()
	r, err := Verify(context.Background(), Options{
		Access: Access{Kubeconfig: kubeconfig},
		Tree:   tree,
		Allow:  []string{w.Prefix.Host},
		Keys:   []*sign.PublicKey{w.Key.Public()},
	})
	if err != nil {
		t.Fatalf("cluster check: %v", err)
	}
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Check+" "+f.Package+" "+f.Provider+": "+f.Message)
	}
	return out
}
