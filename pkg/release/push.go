package release

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

// PushOptions tune Push.
type PushOptions struct {
	// Prefix is where each release goes: Prefix/<type>-<name>:<release>.
	Prefix artifact.Prefix
	// Repository, when set (HOST[:PORT]/PATH), is where PushRelease puts
	// the release instead of under Prefix: the repository a chart's
	// spec.fetchConfig.oci names (builder vendor --to-oci).
	Repository string
	// Registry are the registry client options.
	Registry artifact.Options
	// Key returns the signing key, waiting for it to be decrypted (see
	// LoadKeyAsync); nil pushes unsigned releases.
	Key func() (*sign.PrivateKey, error)
	// Sign tunes the signature and attestation (their format).
	Sign sign.Options
	// Policy decides which offline findings are errors (severity, waivers);
	// of those, Refuses decides which refuse a provider. nil means
	// policy.Default().
	Policy *policy.Policy
	// BuilderVersion is stamped on each release.
	BuilderVersion string
	// Logger receives progress logs; nil means slog.Default().
	Logger *slog.Logger
	// OnResult, when set, is called with each result as soon as it is
	// known (in the order Push returns them).
	OnResult func(PushResult)
}

// PushResult is one release's outcome (or a package's, when Provider and
// Release are empty and Error says why the package has no releases).
type PushResult struct {
	Package     string          `json:"package"`
	Provider    string          `json:"provider,omitempty"` // Kind/name
	Release     string          `json:"release"`
	Reference   string          `json:"reference"` // REPO@DIGEST
	Status      artifact.Status `json:"status"`
	Built       string          `json:"built,omitempty"` // when it differs from the reference digest
	Signature   *sign.Result    `json:"signature,omitempty"`
	Attestation *sign.Result    `json:"attestation,omitempty"`
	Error       string          `json:"error,omitempty"`
	// Refused are the error findings of the offline checks that kept the
	// provider from being pushed (no tag was written for it).
	Refused []report.Finding `json:"refused,omitempty"`
	// Skipped says why nothing was pushed for the provider.
	Skipped string `json:"skipped,omitempty"`
	// Warnings are the error findings of the offline checks that do not
	// refuse the provider (Refuses): e.g. a blob-header of the tree's
	// blob, whose reproducible encoding was pushed instead.
	Warnings []report.Finding `json:"warnings,omitempty"`
	// Reencoded is the tree's blob whose header is not reproducible: the
	// artifact carries the reproducible encoding of the YAML instead, the
	// bytes `builder build` writes there.
	Reencoded string `json:"reencoded,omitempty"`
}

// PackageError reports whether r is a package-level failure (the package
// could not be read, so it has no release results).
func (r PushResult) PackageError() bool {
	return r.Error != "" && r.Provider == "" && r.Release == ""
}

// Push publishes the releases of each package directory (Releases): one
// OCI artifact per provider, signed and attested before its tag is written
// when opts.Key is set. A provider is refused only for findings that make
// its artifact wrong (Refuses); its other error findings are in its
// result's Warnings. A refused or failed release is recorded in its
// result and the others go on; the error then says how many failed. A key
// that cannot be loaded (a *sign.KeyError) stops everything at once, with
// no tag written for the release that needed it. Cancelling ctx stops
// after the release being pushed.
func Push(ctx context.Context, dirs []string, opts PushOptions) ([]PushResult, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	pol := opts.Policy
	if pol == nil {
		pol = policy.Default()
	}
	emit := func(r PushResult) {
		if opts.OnResult != nil {
			opts.OnResult(r)
		}
	}
	var results []PushResult
	failed, total := 0, 0
	for _, dir := range dirs {
		provs, err := Releases(ctx, dir, Options{BuilderVersion: opts.BuilderVersion, Logger: log, Policy: pol})
		if err != nil {
			failed++
			r := PushResult{Package: dir, Error: err.Error()}
			emit(r)
			results = append(results, r)
			continue
		}
		for _, pv := range provs {
			if pv.Skipped != "" {
				r := PushResult{Package: dir, Provider: pv.ID, Skipped: pv.Skipped}
				emit(r)
				results = append(results, r)
				continue
			}
			total++
			if len(pv.Refused) > 0 {
				failed++
				r := PushResult{Package: dir, Provider: pv.ID, Refused: pv.Refused, Warnings: pv.Warnings,
					Error: fmt.Sprintf("%s in %s is not pushed: its offline checks have %s; no tag was written for it", pv.ID, dir, RefusedSummary(pv.Refused))}
				emit(r)
				results = append(results, r)
				continue
			}
			r, err := PushRelease(ctx, dir, *pv.Release, opts)
			r.Warnings, r.Reencoded = pv.Warnings, pv.Reencoded
			var ke *sign.KeyError
			if errors.As(err, &ke) {
				// Say it plainly: the key, not the registry, failed.
				return results, fmt.Errorf("%w; nothing was tagged", ke)
			}
			if err != nil {
				failed++
			}
			emit(r)
			results = append(results, r)
			if ctx.Err() != nil {
				return results, summary(failed, total, len(dirs))
			}
		}
	}
	return results, summary(failed, total, len(dirs))
}

func summary(failed, total, dirs int) error {
	if failed > 0 {
		return fmt.Errorf("%d failed (%d releases in %d packages); no tag was written or moved by a failed push", failed, total, dirs)
	}
	return nil
}

// LoadKeyAsync starts decrypting the private key at path and returns a
// function that waits for it: the key decrypts (scrypt, the slowest step)
// while the first release uploads, and its tag waits for the key, so a
// wrong password writes no tag.
func LoadKeyAsync(path string, pw []byte) func() (*sign.PrivateKey, error) {
	var (
		key  *sign.PrivateKey
		err  error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		key, err = sign.LoadPrivateKey(path, pw)
	}()
	return func() (*sign.PrivateKey, error) {
		<-done
		return key, err
	}
}

// PushRelease pushes one release of package dir. With opts.Key, the
// manifest is signed and attested (at once: they live under different
// tags) before the release tag is written; when the tag already held the
// same content, what it holds is signed instead (an existing valid
// signature by the same key is kept).
func PushRelease(ctx context.Context, dir string, rel artifact.Release, opts PushOptions) (PushResult, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	r := PushResult{Package: dir, Provider: rel.Kind + "/" + rel.Name, Release: rel.Release}
	fail := func(err error) (PushResult, error) { r.Error = err.Error(); return r, err }
	repo, err := pushRepository(rel, opts)
	if err != nil {
		return fail(err)
	}
	// seal waits for the key, then signs and attests subject.
	sealed := false
	seal := func(ctx context.Context, m ocispec.Descriptor) error {
		subject := m.Digest
		signOpts := opts.Sign
		signOpts.Subject = m
		key, err := opts.Key()
		if err != nil {
			return err
		}
		stmt, err := sign.ProvenanceStatement(repo.Name(), subject, rel)
		if err != nil {
			return err
		}
		log.Info("sign and attest", "repository", repo.Name(), "digest", subject)
		var s, a sign.Result
		var serr, aerr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); s, serr = sign.Sign(ctx, repo, subject, key, signOpts) }()
		go func() { defer wg.Done(); a, aerr = sign.Attest(ctx, repo, subject, key, stmt, signOpts) }()
		wg.Wait()
		if err := errors.Join(serr, aerr); err != nil {
			return err
		}
		r.Signature, r.Attestation, sealed = &s, &a, true
		return nil
	}
	var pushOpts artifact.PushOptions
	if opts.Key != nil {
		// Sign and attest before the release tag is written: a wrong
		// password or a failed signature leaves no unsigned release behind.
		pushOpts.BeforeTag = seal
	}
	log.Info("push", "release", rel.String(), "repository", repo.Name())
	res, err := artifact.Push(ctx, repo, rel, pushOpts)
	if err != nil {
		return fail(err)
	}
	r.Reference, r.Status = res.Reference(), res.Status
	if res.Built != res.Descriptor.Digest {
		r.Built = res.Built.String()
	}
	if opts.Key != nil && !sealed {
		// The tag was there already (unchanged): BeforeTag did not run.
		// Sign what the tag holds; an existing valid signature is kept.
		if err := seal(ctx, res.Descriptor); err != nil {
			return fail(fmt.Errorf("%s is in place but not signed and attested: %w; run the push again to complete it", r.Reference, err))
		}
	}
	return r, nil
}

// pushRepository is opts.Repository, else the release's repository under
// opts.Prefix.
func pushRepository(rel artifact.Release, opts PushOptions) (artifact.Repository, error) {
	if opts.Repository != "" {
		return artifact.OpenRegistry(opts.Repository, opts.Registry)
	}
	return opts.Prefix.Repository(rel.RepositoryName(), opts.Registry)
}

// RefusedSummary names the findings that refuse a provider: "2 error
// findings (blob-yaml, configmap-version)".
func RefusedSummary(fs []report.Finding) string {
	var ids []string
	for _, f := range fs {
		if !slices.Contains(ids, f.Check) {
			ids = append(ids, f.Check)
		}
	}
	n := "1 error finding"
	if len(fs) != 1 {
		n = fmt.Sprintf("%d error findings", len(fs))
	}
	return n + " (" + strings.Join(ids, ", ") + ")"
}
