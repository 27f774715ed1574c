// Package version is pinseal's own version, stamped at link time.
//
// The release build sets it with
// -ldflags "-X github.com/pinseal/pinseal/internal/version.Version=v0.1.0".
package version

// Version of this build.
var Version = "v0.1.0-dev"

// BuilderID is the SLSA builder id of pinseal.
const BuilderID = "https://github.com/pinseal/pinseal/cmd/builder"
