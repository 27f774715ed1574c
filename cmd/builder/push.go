package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/release"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

// pushOptions are the flags of `builder push`.
type pushOptions struct {
	to        string
	policy    string
	key       string
	plainHTTP bool
	tlog      bool
	sigFormat string
	format    sign.Format
	json      bool
	verbose   bool
}

func newPushCmd() *cobra.Command {
	o := &pushOptions{}
	cmd := &cobra.Command{
		Use:   "push [DIR...] --to PREFIX",
		Short: "Push each provider release of the packages as a reproducible OCI artifact, signed and attested with --key",
		Long: `Push one OCI artifact per provider release of each package DIR (default ".")
to repository PREFIX/<type>-<name> with tag = release. PREFIX is
HOST[:PORT]/PATH for a registry or oci-layout:DIR for OCI image layout
directories (one per repository).

No pin file is needed: without a pin.yaml, the releases are what the verifier
sees in the package (one per provider object, release = spec.version, its
ConfigMap's blob and the vendored YAML and metadata the package layout pairs
with it); with one, the files its pins name. The package's offline checks
gate the push: a provider with error findings (under --policy, else the
built-in policy; waived findings do not count) is refused, its findings are
printed, and no tag is written for it.

The artifact holds components.gz (the vendored blob, byte for byte),
metadata.yaml and components.yaml (the raw YAML, which every
cluster-api-operator release with fetchConfig.oci support installs for every
kind); the same package always gives the same digest.
A release tag that already holds other content is refused (releases are
immutable); the same content is left alone. A failed push never writes or
moves a tag; run it again to complete it.

With --key (from ` + "`builder keygen`" + ` or ` + "`cosign generate-key-pair`" + `; password in
$COSIGN_PASSWORD) the manifest digest is signed and a SLSA provenance v1
attestation of the pinned sources is attached, both stored as cosign stores
them, without a transparency log, before the release tag is written. With
--signature-format bundle (the default) they are Sigstore bundles (v0.3,
DSSE) attached to the artifact as OCI referrers, as cosign v3 writes them
(through the registry's referrers API, or the sha256-<hex> referrers tag
on a registry without it); with legacy they are cosign v2's
sha256-<hex>.sig and .att images, for old cosign readers. A
wrong password or a refused signature leaves no unsigned release tag. An existing valid signature or attestation
by the same key is not repeated. Registry credentials come from the docker
config and its credential helpers.

Exit status: 0 pushed (or already there), 1 a release failed or was refused, 2 usage.`,
		Example: `  builder push examples/packages/* --to oci-layout:out/oci
  COSIGN_PASSWORD=... builder push packages/system/capi-providers-* --to ghcr.io/acme/capi --key cosign.key
  builder push . --to 127.0.0.1:5000/capi --plain-http`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.to == "" {
				return usageError{Err: errors.New("--to PREFIX is required (HOST[:PORT]/PATH or oci-layout:DIR)")}
			}
			prefix, err := artifact.ParsePrefix(o.to)
			if err != nil {
				return usageError{Err: err}
			}
			format, err := sign.ParseFormat(o.sigFormat)
			if err != nil {
				return usageError{Err: fmt.Errorf("--signature-format: %w", err)}
			}
			o.format = format
			if o.tlog && o.key == "" {
				return usageError{Err: errors.New("--tlog needs --key")}
			}
			if o.key != "" {
				// A key that is not there fails before anything is pushed.
				if fi, err := os.Stat(o.key); err != nil || fi.IsDir() {
					if err == nil {
						err = errors.New("is a directory")
					}
					return usageError{Err: fmt.Errorf("--key %s: %w (make a key pair with `builder keygen` or `cosign generate-key-pair`)", o.key, err)}
				}
			}
			if o.tlog {
				// Refused before anything is pushed, so no unsigned tag is left.
				return fmt.Errorf("--tlog: %w; nothing was pushed", sign.ErrTLogUnsupported)
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			if o.policy != "" {
				if _, err := policy.Load(o.policy); err != nil {
					return usageError{Err: fmt.Errorf("--policy: %w", err)}
				}
			}
			return runPush(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o, prefix, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "where to push: HOST[:PORT]/PATH or oci-layout:DIR")
	f.StringVar(&o.policy, "policy", "", "verification policy whose severities and waivers decide which offline findings refuse a provider (default: the built-in policies/default.yaml)")
	f.StringVar(&o.key, "key", "", "cosign private key to sign and attest with (password in $COSIGN_PASSWORD)")
	f.BoolVar(&o.plainHTTP, "plain-http", false, "talk plain HTTP to the registry (a loopback registry)")
	f.BoolVar(&o.tlog, "tlog", false, "also upload to a transparency log (not supported: refused before anything is pushed, saying how to do it with cosign)")
	f.StringVar(&o.sigFormat, "signature-format", string(sign.FormatBundle), "how --key stores the signature and provenance: bundle (Sigstore bundles as OCI referrers, cosign v3) or legacy (sha256-<hex>.sig/.att tags, cosign v2)")
	f.BoolVar(&o.json, "json", false, "print the results as JSON")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log each step to stderr")
	return cmd
}

// pushResult is one release's outcome, as printed with --json.
type pushResult struct {
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
}

func runPush(ctx context.Context, stdout, stderr io.Writer, o *pushOptions, prefix artifact.Prefix, dirs []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	// The key decrypts (scrypt, the slowest step) while the first release
	// uploads; its tag waits for the key, so a wrong password writes no tag.
	var keyReady func() (*sign.PrivateKey, error)
	if o.key != "" {
		pw, err := password(stderr, false)
		if err != nil {
			return err
		}
		keyReady = loadKeyAsync(o.key, pw)
	}
	signOpts := sign.Options{TLog: o.tlog, Format: o.format}
	regOpts := artifact.Options{PlainHTTP: o.plainHTTP}

	pol := policy.Default()
	if o.policy != "" {
		var err error
		if pol, err = policy.Load(o.policy); err != nil {
			return err
		}
	}
	var results []pushResult
	failed, total, stopAll := 0, 0, false
	for _, dir := range dirs {
		provs, err := release.Releases(ctx, dir, release.Options{BuilderVersion: version.Version, Logger: log, Policy: pol})
		if err != nil {
			failed++
			fmt.Fprintln(stderr, "builder:", err)
			results = append(results, pushResult{Package: dir, Error: err.Error()})
			continue
		}
		for _, pv := range provs {
			if pv.Skipped != "" {
				r := pushResult{Package: dir, Provider: pv.ID, Skipped: pv.Skipped}
				if !o.json {
					printPush(stdout, r)
				}
				results = append(results, r)
				continue
			}
			total++
			if len(pv.Refused) > 0 {
				failed++
				r := pushResult{Package: dir, Provider: pv.ID, Refused: pv.Refused,
					Error: fmt.Sprintf("%s in %s is not pushed: its offline checks have %s; no tag was written for it", pv.ID, dir, refusedSummary(pv.Refused))}
				fmt.Fprintln(stderr, "builder:", r.Error)
				if !o.json {
					printPush(stdout, r)
				}
				results = append(results, r)
				continue
			}
			rel := *pv.Release
			r, err := pushRelease(ctx, log, prefix, regOpts, keyReady, signOpts, dir, rel)
			var ke *sign.KeyError
			if errors.As(err, &ke) {
				// Say it plainly: the key, not the registry, failed.
				return fmt.Errorf("%w; nothing was tagged", ke)
			}
			if err != nil {
				failed++
				fmt.Fprintln(stderr, "builder:", err)
			}
			if !o.json {
				printPush(stdout, r)
			}
			results = append(results, r)
			if ctx.Err() != nil {
				stopAll = true
				break
			}
		}
		if stopAll {
			break
		}
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if results == nil {
			results = []pushResult{}
		}
		if err := enc.Encode(results); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d failed (%d releases in %d packages); no tag was written or moved by a failed push", failed, total, len(dirs))
	}
	return nil
}

// loadKeyAsync starts decrypting the key and returns a function that waits
// for it.
func loadKeyAsync(path string, pw []byte) func() (*sign.PrivateKey, error) {
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

func pushRelease(ctx context.Context, log *slog.Logger, prefix artifact.Prefix, regOpts artifact.Options, keyReady func() (*sign.PrivateKey, error), signOpts sign.Options, dir string, rel artifact.Release) (pushResult, error) {
	r := pushResult{Package: dir, Provider: rel.Kind + "/" + rel.Name, Release: rel.Release}
	fail := func(err error) (pushResult, error) { r.Error = err.Error(); return r, err }
	repo, err := prefix.Repository(rel.RepositoryName(), regOpts)
	if err != nil {
		return fail(err)
	}
	// seal waits for the key, then signs and attests subject.
	sealed := false
	seal := func(ctx context.Context, m ocispec.Descriptor) error {
		subject := m.Digest
		signOpts := signOpts
		signOpts.Subject = m
		key, err := keyReady()
		if err != nil {
			return err
		}
		stmt, err := sign.ProvenanceStatement(repo.Name(), subject, rel)
		if err != nil {
			return err
		}
		log.Info("sign and attest", "repository", repo.Name(), "digest", subject)
		// Signature and attestation live under different tags: store both at once.
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
	if keyReady != nil {
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
	if keyReady != nil && !sealed {
		// The tag was there already (unchanged): BeforeTag did not run.
		// Sign what the tag holds; an existing valid signature is kept.
		if err := seal(ctx, res.Descriptor); err != nil {
			return fail(fmt.Errorf("%s is in place but not signed and attested: %w; run the push again to complete it", r.Reference, err))
		}
	}
	return r, nil
}

// refusedSummary names the findings that refuse a provider: "2 error
// findings (blob-yaml, configmap-version)".
func refusedSummary(fs []report.Finding) string {
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

func printPush(w io.Writer, r pushResult) {
	if r.Skipped != "" {
		fmt.Fprintf(w, "%-11s %s %s: %s\n", "skipped", r.Package, r.Provider, r.Skipped)
		return
	}
	if len(r.Refused) > 0 {
		fmt.Fprintf(w, "%-11s %s %s: not pushed, no tag written\n", "refused", r.Package, r.Provider)
		for _, f := range r.Refused {
			loc := f.File
			if loc != "" && f.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, f.Line)
			}
			fmt.Fprintf(w, "  %-20s %s %s\n", f.Check, loc, f.Message)
			if f.Hint != "" {
				fmt.Fprintf(w, "  %-20s fix: %s\n", "", f.Hint)
			}
		}
		return
	}
	if r.Error != "" {
		fmt.Fprintf(w, "%-11s %s %s\n", "failed", r.Package, r.Release)
		return
	}
	note := ""
	if r.Built != "" {
		note = "  # same content as this build (" + r.Built + ")"
	}
	fmt.Fprintf(w, "%-11s %s%s\n", r.Status, r.Reference, note)
	if r.Signature != nil {
		fmt.Fprintf(w, "  signature   %-8s %s\n", r.Signature.Status, r.Signature.Where())
	}
	if r.Attestation != nil {
		fmt.Fprintf(w, "  provenance  %-8s %s\n", r.Attestation.Status, r.Attestation.Where())
	}
}
