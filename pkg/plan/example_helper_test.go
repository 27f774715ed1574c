package plan_test

import "github.com/pinseal/pinseal/pkg/bump"

// fixtureTarget is a bump target with no sources: the bump downloads
// nothing the plan must give a digest for.
func fixtureTarget(version string) *bump.Target { return &bump.Target{Version: version} }
