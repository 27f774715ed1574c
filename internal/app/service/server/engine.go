package server

import (
	"context"

	"github.com/pinseal/pinseal/internal/app/history"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
)

// Engine is the verification engine the service calls, the same one the
// CLI uses, behind an interface so that the service is tested with a fake.
// Every method is safe for concurrent use.
type Engine interface {
	// CheckTree verifies every provider package under root (a directory).
	CheckTree(ctx context.Context, root string, opts CheckOptions) (*report.Report, error)
	// Resolve returns the manifest digest ("sha256:<hex>") that ref
	// (HOST/REPO:TAG or HOST/REPO@sha256:…) points at.
	Resolve(ctx context.Context, ref string) (string, error)
	// VerifyArtifact verifies the registry artifact at ref, which is pinned
	// by digest (HOST/REPO@sha256:…): signature, provenance and contents.
	VerifyArtifact(ctx context.Context, ref string, opts VerifyOptions) (*report.Report, error)
}

// CheckOptions tune a tree check.
type CheckOptions struct {
	// Registry is the registry prefix (HOST[:PORT]/PATH) the registry checks
	// compare with; "" leaves those checks out.
	Registry string
	// Policy is the parsed policy; nil means the default policy.
	Policy *policy.Policy
	// RegistryOnly runs the registry checks alone (with Registry set): the
	// caller keeps the offline checks' results of an earlier scan of the
	// same commit under the same policy.
	RegistryOnly bool
	// Base, when set, is what the source's previous scanned commit
	// released: the history checks (version-reused, version-downgrade)
	// compare the tree with it.
	Base *history.Snapshot
	// Releases, when set, is given what the tree releases (history.Take),
	// for the next commit's scan to compare with.
	Releases func(*history.Snapshot)
}

// VerifyOptions tune an artifact verification.
type VerifyOptions struct {
	// Policy is the parsed policy; nil means the default policy.
	Policy *policy.Policy
	// Tag is the tag the pinned ref was resolved from ("" when the
	// request named a digest): the artifact must be that release, exactly
	// as when the CLI verifies HOST/REPO:TAG.
	Tag string
}
