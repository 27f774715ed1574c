package check

import (
	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/model"
)

// ServedContracts are the contracts the tree's core provider serves, as
// the contract check reads them: the contract of the core release's own
// series in its metadata, with those Cluster API's policy keeps it serving
// (operator.Served).
// ok is false when the tree has no core provider or its contract cannot
// be read offline.
func ServedContracts(t *model.Tree) (contracts []string, core *model.Provider, ok bool) {
	c, core, ok := coreContract(t, NewIndex(t))
	if !ok {
		return nil, core, false
	}
	return operator.Served(core.Version, c), core, true
}
