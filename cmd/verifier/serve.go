package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/server"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// serveOptions are the flags of `verifier serve`.
type serveOptions struct {
	config    string
	listen    string
	examples  string
	verbose   bool
	plainHTTP bool
}

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the verifier service: verify endpoint, scheduled drift scans with history, dashboard",
		Long: `Run the verifier service (HTTP API described by api/openapi.yaml).

  POST /v1/verify    verify a registry artifact ({"ref": …}) or an uploaded .tar.gz tree
  POST /v1/scans     scan a configured source now
  GET  /v1/sources, /v1/scans, /v1/scans/{id}, /v1/findings
  GET  /             dashboard; /metrics, /healthz, /readyz, /openapi.yaml

With --config FILE the service runs as that file says (examples/serve.yaml
documents every key). Without it, it serves the repository's example tree
(./examples) on 127.0.0.1:8080 with public reads, keeps its history under
the user cache directory, and writes a bearer token for POST requests to a
file there (the log says which).

Bearer tokens come from the config's tokensFile and from the environment
variable PINSEAL_TOKENS, never from flags. SIGINT/SIGTERM shut down
gracefully: running scans finish within limits.shutdownTimeout or are
recorded as failed. SIGHUP reads the verification policy and the key files
it names again and drops cached verdicts (a changed policy or key file is
also noticed at the next request).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.NoArgs(cmd, args); err != nil {
				return usageError{Err: err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", "config file (YAML; see examples/serve.yaml)")
	f.StringVar(&o.listen, "listen", "", "address to listen on, overriding the config (default 127.0.0.1:8080)")
	f.StringVar(&o.examples, "examples", "examples", "the example tree served when there is no --config")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "debug logs")
	f.BoolVar(&o.plainHTTP, "plain-http", false, "reach registries over plain HTTP (a loopback registry)")
	return cmd
}

func runServe(cmd *cobra.Command, o *serveOptions) error {
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))

	cfg, err := serveConfig(o, log)
	if err != nil {
		return usageError{Err: err}
	}
	if o.listen != "" {
		cfg.Listen = o.listen
	}
	if err := cfg.Validate(); err != nil {
		return usageError{Err: err}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	warnUntrusted(cfg, log)
	srv, err := server.New(ctx, cfg, engine{registry: artifact.Options{PlainHTTP: o.plainHTTP, AllowedHosts: cfg.RegistryHosts()}, render: cfg.Limits.Render(), allow: cfg.Registries}, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		srv.Close()
		return fmt.Errorf("listen on %s: %w (use --listen or the config's listen)", cfg.Listen, err)
	}
	// SIGHUP: read the policy and its key files again and drop cached
	// verdicts (a changed file is also noticed at the next request).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				srv.ReloadPolicy()
			}
		}
	}()
	fmt.Fprintf(cmd.ErrOrStderr(), "verifier: serving on http://%s/\n", ln.Addr())
	return srv.Run(ctx, ln)
}

// serveConfig reads --config, or builds the example configuration.
func serveConfig(o *serveOptions, log *slog.Logger) (*server.Config, error) {
	if o.config != "" {
		return server.LoadConfig(o.config)
	}
	examples, err := filepath.Abs(o.examples)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(examples); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("no --config, and no example tree at %s: run from the repository root or pass --config FILE (see examples/serve.yaml)", examples)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("no --config and no user cache directory for the history: %w", err)
	}
	cfg := server.ExampleConfig(examples, filepath.Join(cache, "pinseal", "serve"))
	if os.Getenv(server.TokensEnv) == "" {
		if cfg.TokensFile, err = exampleToken(cfg.DataDir); err != nil {
			return nil, err
		}
		log.Info("POST requests take the bearer token in this file", "file", cfg.TokensFile)
	}
	log.Info("no --config: serving the example tree", "tree", examples, "dataDir", cfg.DataDir)
	return cfg, nil
}

// exampleToken returns a file holding a random token, made on first use.
func exampleToken(dir string) (string, error) {
	path := filepath.Join(dir, "token")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	b := make([]byte, 24)
	rand.Read(b)
	tmp, err := os.CreateTemp(dir, ".token-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(hex.EncodeToString(b) + "\n"); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// engine adapts the verification engine to the service: trees are
// verified by pkg/verify exactly as `verifier check` does, registry
// artifacts exactly as `verifier verify` does.
type engine struct {
	registry artifact.Options
	render   load.RenderLimits // bounds of every chart render
	// allow is the registries allowlist: where providers'
	// spec.fetchConfig.oci may be read from in scheduled scans.
	allow []string
}

// loadPolicy reads a policy file, or the built-in default for "".
func loadPolicy(file string) (*policy.Policy, error) {
	if file == "" {
		return policy.Default(), nil
	}
	return policy.Load(file)
}

func (e engine) CheckTree(ctx context.Context, root string, opts server.CheckOptions) (*report.Report, error) {
	pol, err := loadPolicy(opts.Policy)
	if err != nil {
		return nil, err
	}
	vo := verify.Options{Policy: pol, Render: e.render, OnlyExtra: opts.RegistryOnly && opts.Registry != ""}
	if opts.Registry != "" {
		prefix, err := artifact.ParsePrefix(opts.Registry)
		if err != nil {
			return nil, fmt.Errorf("registry %q: %w", opts.Registry, err)
		}
		if vo, err = verify.WithRegistry(vo, verify.RegistryOptions{Prefix: prefix, Registry: e.registry, Allow: e.allow}); err != nil {
			return nil, fmt.Errorf("registry checks against %s: %w", opts.Registry, noKeys(err, opts.Policy))
		}
	}
	rep, err := verify.Run(ctx, root, vo)
	return rep, noKeys(err, opts.Policy)
}

func (e engine) Resolve(ctx context.Context, ref string) (string, error) {
	return verify.ResolveRef(ctx, ref, e.registry)
}

func (e engine) VerifyArtifact(ctx context.Context, ref string, opts server.VerifyOptions) (*report.Report, error) {
	pol, err := loadPolicy(opts.Policy)
	if err != nil {
		return nil, err
	}
	rep, _, err := verify.Ref(ctx, ref, verify.RefOptions{Policy: pol, Registry: e.registry, Tag: opts.Tag})
	return rep, noKeys(err, opts.Policy)
}

// noKeys says what to change in the service's configuration when the policy
// trusts no key (verify.ErrNoTrustedKeys speaks of CLI flags).
func noKeys(err error, policyFile string) error {
	if !errors.Is(err, verify.ErrNoTrustedKeys) {
		return err
	}
	where := "the built-in default policy (no policy in the config)"
	if policyFile != "" {
		where = "policy " + policyFile
	}
	return fmt.Errorf("%w: %s trusts no key: list cosign public keys under `keys:` (or keyless signers under `identities:`) in a policy file and name it in the config's policy (or the source's policy), or turn the signature and provenance checks off there", server.ErrNotConfigured, where)
}

// warnUntrusted logs, at start-up, each registry verification the config
// enables under a policy that trusts no key: every such request or scan
// would answer "not configured", so say it once, early.
func warnUntrusted(cfg *server.Config, log *slog.Logger) {
	warn := func(what, policyFile string) {
		pol, err := loadPolicy(policyFile)
		if err != nil {
			return // Validate and the first request report a bad policy file
		}
		trust, err := verify.Trust(pol, nil)
		if err == nil && trust.Empty() && (pol.Enabled(check.Signature) || pol.Enabled(check.Provenance)) {
			log.Warn(what + " will not verify: " + noKeys(verify.ErrNoTrustedKeys, policyFile).Error())
		}
	}
	if len(cfg.Registries) > 0 {
		warn("POST /v1/verify of registry refs", cfg.Policy)
	}
	for _, s := range cfg.Sources {
		if s.Registry != "" {
			warn("the registry checks of source "+s.Name, s.Policy)
		}
	}
}
