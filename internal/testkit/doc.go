// Package testkit holds what only tests and benchmarks use.
//
// That is fixture trees,
// synthetic trees and manifests, real test peers, an operator simulation,
// the in-process API client, tar builders and bench tools. Nothing under it
// is linked into the builder or verifier binaries (TestNotInBinaries).
package testkit
