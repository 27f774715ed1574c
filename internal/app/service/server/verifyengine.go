package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/pinseal/pinseal/internal/app/history"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/render"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// VerifyEngine is the production Engine: trees are verified by pkg/verify
// exactly as `verifier check` does, registry artifacts exactly as
// `verifier verify` does.
type VerifyEngine struct {
	// Registry are the registry client options (plain HTTP, allowed hosts).
	Registry artifact.Options
	// Render bounds every chart render.
	Render render.Limits
	// Sandbox renders the charts of every scan, its children kept warm
	// between scans; whoever made the engine closes it. nil: each scan
	// starts its own.
	Sandbox *render.Sandbox
	// Allow is the registries allowlist: where providers'
	// spec.fetchConfig.oci may be read from in scheduled scans.
	Allow []string
}

// NewVerifyEngine is the engine the config describes: its registries
// allowlist and render limits, and a render sandbox the caller closes
// (Sandbox.Close) when it is done; plainHTTP reaches registries over plain
// HTTP (a loopback registry).
func NewVerifyEngine(cfg *Config, plainHTTP bool, log *slog.Logger) VerifyEngine {
	return VerifyEngine{
		Registry: artifact.Options{PlainHTTP: plainHTTP, AllowedHosts: cfg.RegistryHosts(), Retries: fetch.DefaultRetries},
		Render:   cfg.Limits.Render(),
		Sandbox:  render.New(log),
		Allow:    cfg.Registries,
	}
}

func orDefault(pol *policy.Policy) *policy.Policy {
	if pol == nil {
		return policy.Default()
	}
	return pol
}

// settingNames name the settings a finding's hint asks to change in the
// service's terms: its config keys, the policy, the serve flag. The
// service has no inflate limit to raise, so it names none.
var settingNames = map[report.Setting]string{
	report.SettingPlainHTTP:       "verifier serve --plain-http",
	report.SettingAllowRegistry:   "the config's registries",
	report.SettingTrustedKeys:     "`keys:` in the policy file",
	report.SettingRenderTimeout:   "the config's limits.renderTimeout",
	report.SettingRenderMaxMemory: "the config's limits.renderMaxMemory",
	report.SettingRenderMaxOutput: "the config's limits.renderMaxOutput",
}

// named names the settings of rep's hints in the service's terms.
func named(rep *report.Report, err error) (*report.Report, error) {
	if rep != nil {
		rep.NameSettings(settingNames)
	}
	return rep, err
}

// CheckTree implements Engine.
func (e VerifyEngine) CheckTree(ctx context.Context, root string, opts CheckOptions) (*report.Report, error) {
	vo := verify.Options{Options: load.Options{Render: e.Render, Sandbox: e.Sandbox}, Policy: orDefault(opts.Policy), OnlyExtra: opts.RegistryOnly && opts.Registry != ""}
	if opts.Registry != "" {
		prefix, err := artifact.ParsePrefix(opts.Registry)
		if err != nil {
			return nil, fmt.Errorf("registry %q: %w", opts.Registry, err)
		}
		if vo.Registry, err = verify.NewRegistry(vo.Policy, verify.RegistryOptions{Prefix: prefix, Registry: e.Registry, Allow: e.Allow}); err != nil {
			return nil, fmt.Errorf("registry checks against %s: %w", opts.Registry, err)
		}
	}
	vo.Extra = history.Checks(opts.Base)
	t, rep, err := verify.Run(ctx, root, vo)
	if err == nil && opts.Releases != nil {
		opts.Releases(history.Take(t, ""))
	}
	return named(rep, err)
}

// Resolve implements Engine.
func (e VerifyEngine) Resolve(ctx context.Context, ref string) (string, error) {
	return verify.ResolveRef(ctx, ref, e.Registry)
}

// VerifyArtifact implements Engine.
func (e VerifyEngine) VerifyArtifact(ctx context.Context, ref string, opts VerifyOptions) (*report.Report, error) {
	rep, _, err := verify.Ref(ctx, ref, verify.RefOptions{Policy: orDefault(opts.Policy), Registry: e.Registry, Tag: opts.Tag})
	return named(rep, err)
}

// configHint adds to an engine error what to change in the service's
// configuration: for a policy that trusts no key (verify.ErrNoTrustedKeys),
// ErrNotConfigured (503) naming the policy file; for a host the registry
// sent the service to (artifact.ErrHostNotAllowed), the config's
// registries. (Library errors name no interface; the CLIs add their flags
// instead.)
func configHint(err error, policyFile string) error {
	if errors.Is(err, artifact.ErrHostNotAllowed) {
		return fmt.Errorf("%w; if it is the registry's own token service or storage, list it in the config's registries", err)
	}
	if !errors.Is(err, verify.ErrNoTrustedKeys) {
		return err
	}
	where := "the built-in default policy (no policy in the config)"
	if policyFile != "" {
		where = "policy " + policyFile
	}
	return fmt.Errorf("%w: %s trusts no key: list cosign public keys under `keys:` (or keyless signers under `identities:`) in a policy file and name it in the config's policy (or the source's policy), or turn the signature and provenance checks off there", ErrNotConfigured, where)
}

// warnUntrusted logs, at start-up, each registry verification the config
// enables under a policy that trusts no key: every such request or scan
// would answer "not configured", so say it once, early.
func (s *Server) warnUntrusted() {
	warn := func(what, policyFile string, w *policyWatch) {
		pol, _, err := w.Current()
		if err != nil {
			return // New refuses a policy that cannot be read
		}
		if _, err := verify.TrustedBy(pol, nil); errors.Is(err, verify.ErrNoTrustedKeys) {
			s.log.Warn(what + " will not verify: " + configHint(verify.ErrNoTrustedKeys, policyFile).Error())
		}
	}
	if len(s.cfg.Registries) > 0 {
		warn("POST /v1/verify of registry refs", s.cfg.Policy, s.policy)
	}
	for _, src := range s.cfg.Sources {
		if src.Registry != "" {
			warn("the registry checks of source "+src.Name, src.Policy, s.srcPolicy[src.Name])
		}
	}
}
