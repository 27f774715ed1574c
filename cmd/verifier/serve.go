package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/app/service/server"
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
gracefully: running requests and scans finish within
limits.shutdownTimeout, or requests are stopped and answered 503 with
Retry-After and scans recorded as failed. Every policy (the config's and each source's) is
parsed once at start-up (a policy that does not parse is a start-up error
naming the file); SIGHUP reads the policies and the key files they name
again and drops cached verdicts (a changed policy or key file is also
noticed at the next request or scan).`,
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
	// Helm logs through the standard log package, which slog.SetDefault
	// sends into this log, quoted.
	slog.SetDefault(log)

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

	engine := server.NewVerifyEngine(cfg, o.plainHTTP, log)
	// Ends the render children when the service stops.
	defer engine.Sandbox.Close()
	srv, err := server.New(ctx, cfg, engine, log)
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
