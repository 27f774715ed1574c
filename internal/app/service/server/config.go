package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/pinseal/pinseal/internal/app/service/gitsource"
	"github.com/pinseal/pinseal/internal/app/service/server/untar"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/remote"
	"github.com/pinseal/pinseal/pkg/render"
	"github.com/pinseal/pinseal/pkg/verify"
)

// Config is the service configuration, read from a strict YAML file
// (examples/serve.yaml documents every key). Relative paths in the file are
// relative to the file's directory.
type Config struct {
	// Listen is the address to serve on, e.g. 127.0.0.1:8080.
	Listen string `json:"listen"`
	// DataDir holds the SQLite database and temporary upload directories.
	DataDir string `json:"dataDir"`
	// TokensFile holds the bearer tokens that may POST, one a line (blank
	// lines and lines starting with # are ignored). Tokens may also come
	// from the environment variable PINSEAL_TOKENS (comma or newline
	// separated).
	TokensFile string `json:"tokensFile,omitempty"`
	// PublicReads lets GET requests through without a token.
	PublicReads bool `json:"publicReads,omitempty"`
	// Policy is the verification policy of POST /v1/verify ("" = default).
	Policy string `json:"policy,omitempty"`
	// Registries are the registries (HOST[:PORT]) or repository prefixes
	// (HOST[:PORT]/PATH) that references may point into; nothing else is
	// ever fetched.
	Registries []string `json:"registries,omitempty"`
	// Sources are the trees scanned on a schedule.
	Sources []SourceConfig `json:"sources,omitempty"`
	// Limits bound requests and scans.
	Limits Limits `json:"limits"`
	// Retention bounds the scan history kept for each source (a source's
	// own retention overrides it field by field).
	Retention Retention `json:"retention,omitempty"`
	// Webhook is told about scans that find new error findings.
	Webhook *WebhookConfig `json:"webhook,omitempty"`
	// Database is "" for the SQLite file in dataDir (one process), or a
	// PostgreSQL URL postgres://USER@HOST:PORT/DB?sslmode=… shared by any
	// number of replicas. The password never goes in the URL: it comes from
	// databasePasswordFile or the environment variable
	// PINSEAL_DATABASE_PASSWORD (or PGPASSWORD).
	Database string `json:"database,omitempty"`
	// DatabasePasswordFile holds the PostgreSQL password.
	DatabasePasswordFile string `json:"databasePasswordFile,omitempty"`
	// Replicas tunes how replicas share the sources (PostgreSQL only).
	Replicas ReplicasConfig `json:"replicas,omitempty"`
	// Admission turns on the validating admission webhook (POST /admit on
	// a TLS listener of its own; docs/admission.md).
	Admission *AdmissionConfig `json:"admission,omitempty"`
}

// ReplicasConfig tunes the per-source leases of replicas.
type ReplicasConfig struct {
	// LeaseTTL: a replica that stops renewing its lease on a source (killed,
	// crashed, cut off) loses it after this long, and another replica takes
	// the source over. Default 10s.
	LeaseTTL Duration `json:"leaseTTL,omitempty"`
	// MaxConcurrentScans bounds the scans one replica runs at once. Default 4.
	MaxConcurrentScans int `json:"maxConcurrentScans,omitempty"`
}

// DatabasePasswordEnv is the environment variable with the PostgreSQL password.
const DatabasePasswordEnv = "PINSEAL_DATABASE_PASSWORD"

// SourceConfig is one scanned tree.
type SourceConfig struct {
	// Name identifies the source in the API ([a-z0-9][a-z0-9._-]*).
	Name string `json:"name"`
	// Path is the checkout to scan (or give git).
	Path string `json:"path,omitempty"`
	// Git is a repository ref to fetch and scan at each scan (or give path).
	Git *GitConfig `json:"git,omitempty"`
	// Cluster is a live cluster to scan (instead of path or git).
	Cluster *ClusterSourceConfig `json:"cluster,omitempty"`
	// Interval between scheduled scans (e.g. 1h); 0 or omitted: only
	// on demand (POST /v1/scans).
	Interval Duration `json:"interval,omitempty"`
	// Registry is the registry prefix for the registry checks
	// (HOST[:PORT]/PATH, within Registries); omitted: no registry checks.
	Registry string `json:"registry,omitempty"`
	// Policy is the verification policy file ("" = default).
	Policy string `json:"policy,omitempty"`
	// Retention overrides the global retention for this source; omitted
	// fields are the global ones.
	Retention *Retention `json:"retention,omitempty"`
}

// Retention bounds the scan history of a source: scans (with their reports
// and what they opened and resolved) beyond the newest MaxScans, or that
// finished more than MaxAge ago, are deleted after each scan of the source
// and hourly. The newest successful scan and a running scan are always
// kept.
type Retention struct {
	// MaxScans is how many of a source's newest scans are kept. Default
	// 1000.
	MaxScans int `json:"maxScans,omitempty"`
	// MaxAge is how long a finished scan is kept. Default 2160h (90 days).
	MaxAge Duration `json:"maxAge,omitempty"`
}

// Defaults of Retention.
const (
	DefaultRetentionMaxScans = 1000
	DefaultRetentionMaxAge   = 90 * 24 * time.Hour
)

// RetentionFor is the retention of source name: its own fields, else the
// global ones.
func (c *Config) RetentionFor(name string) Retention {
	r := c.Retention
	for _, src := range c.Sources {
		if src.Name == name && src.Retention != nil {
			if src.Retention.MaxScans != 0 {
				r.MaxScans = src.Retention.MaxScans
			}
			if src.Retention.MaxAge != 0 {
				r.MaxAge = src.Retention.MaxAge
			}
		}
	}
	return r
}

// GitConfig is a git source: each scan fetches ref (shallow) and scans
// the tree at that commit.
type GitConfig struct {
	// URL is https://…, ssh://…, user@host:path or file:///… (no password).
	URL string `json:"url"`
	// Ref is a branch, tag or full ref name; "" means the default branch.
	Ref string `json:"ref,omitempty"`
	// Depth is the history fetched; default 1.
	Depth int `json:"depth,omitempty"`
	// Credentials authenticate the fetch, from files or the environment.
	Credentials *GitCredentials `json:"credentials,omitempty"`
}

// GitCredentials name where the secrets of a git source are; the secrets
// themselves never go in the config.
type GitCredentials struct {
	// Username for https (default "git"), or for ssh when the URL has none.
	Username string `json:"username,omitempty"`
	// PasswordFile or PasswordEnv hold the https password or token.
	PasswordFile string `json:"passwordFile,omitempty"`
	PasswordEnv  string `json:"passwordEnv,omitempty"`
	// SSHKeyFile is a PEM private key for ssh URLs; KnownHostsFile the
	// known_hosts to check the server's key against.
	SSHKeyFile     string `json:"sshKeyFile,omitempty"`
	KnownHostsFile string `json:"knownHostsFile,omitempty"`
}

// Limits bound what one request or scan may use.
type Limits struct {
	// MaxBodyBytes bounds a request body (413 beyond). Default 64 MiB.
	MaxBodyBytes int64 `json:"maxBodyBytes,omitempty"`
	// MaxTarFiles bounds the entries of an uploaded tree. Default 10000.
	MaxTarFiles int `json:"maxTarFiles,omitempty"`
	// MaxTarBytes bounds the uncompressed size of an uploaded tree.
	// Default 512 MiB.
	MaxTarBytes int64 `json:"maxTarBytes,omitempty"`
	// MaxTarDepth bounds the path elements of an entry of an uploaded
	// tree (a/b/c is 3). Default 32.
	MaxTarDepth int `json:"maxTarDepth,omitempty"`
	// MaxTarPathBytes bounds the length of an entry's path and of a link
	// target in an uploaded tree. Default 1024.
	MaxTarPathBytes int `json:"maxTarPathBytes,omitempty"`
	// RequestTimeout bounds one request. Default 60s.
	RequestTimeout Duration `json:"requestTimeout,omitempty"`
	// ReadHeaderTimeout bounds reading request headers. Default 10s.
	ReadHeaderTimeout Duration `json:"readHeaderTimeout,omitempty"`
	// ScanTimeout bounds one scan. Default 30m.
	ScanTimeout Duration `json:"scanTimeout,omitempty"`
	// ShutdownTimeout is how long shutdown waits for requests and scans
	// before it fails the scans still running. Default 30s.
	ShutdownTimeout Duration `json:"shutdownTimeout,omitempty"`
	// MaxConcurrentVerifies bounds verifications running at once (uploads
	// and references); more wait. Default 4.
	MaxConcurrentVerifies int `json:"maxConcurrentVerifies,omitempty"`
	// VerifyQueueTimeout bounds the wait for a verification slot; then
	// the answer is 503 with Retry-After. Default 30s.
	VerifyQueueTimeout Duration `json:"verifyQueueTimeout,omitempty"`
	// VerifyCacheEntries bounds the cache of artifact verifications.
	// Default 1024.
	VerifyCacheEntries int `json:"verifyCacheEntries,omitempty"`
	// VerifyCacheTTL bounds how long a verdict is served from the cache
	// (a verdict relying on a waiver only until the waiver expires; one
	// with a signature, provenance or registry-digest finding is not
	// cached at all). Default 1h.
	VerifyCacheTTL Duration `json:"verifyCacheTTL,omitempty"`
	// RenderTimeout bounds rendering one chart (uploads and scans); a
	// chart over it is a package-load finding. Default 10s.
	RenderTimeout Duration `json:"renderTimeout,omitempty"`
	// RenderMaxMemory bounds the memory rendering one chart takes, in
	// bytes (the render process's address space beyond its start).
	// Default 512 MiB.
	RenderMaxMemory int64 `json:"renderMaxMemory,omitempty"`
	// RenderMaxOutput bounds the rendered manifests of one chart, in
	// bytes. Default 64 MiB.
	RenderMaxOutput int64 `json:"renderMaxOutput,omitempty"`
	// GitMaxFiles bounds the files, directories and links of a git
	// source's checkout; GitMaxBytes the bytes of its files (and, apart,
	// the git data fetched). Measured from the commit's tree before
	// anything is written; beyond, the scan fails naming the bound.
	// Defaults 100000 and 1 GiB.
	GitMaxFiles int   `json:"gitMaxFiles,omitempty"`
	GitMaxBytes int64 `json:"gitMaxBytes,omitempty"`
	// GitMaxFileBytes bounds one file of a git source's checkout, read
	// from the blob's header before anything is written. Default 64 MiB.
	GitMaxFileBytes int64 `json:"gitMaxFileBytes,omitempty"`
}

// Render is the chart render bounds these limits set.
func (l Limits) Render() render.Limits {
	return render.Limits{Timeout: l.RenderTimeout.D(), MaxMemory: l.RenderMaxMemory, MaxOutput: l.RenderMaxOutput}
}

// WebhookConfig is the one URL the service POSTs events to.
type WebhookConfig struct {
	// URL is an absolute http or https URL. Redirects are not followed.
	URL string `json:"url"`
	// Timeout bounds one call. Default 5s.
	Timeout Duration `json:"timeout,omitempty"`
}

// Duration is a time.Duration written as "90s", "1h".
type Duration time.Duration

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"30s\" or \"1h\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// D is the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// DefaultListen is where the service listens unless told otherwise.
const DefaultListen = "127.0.0.1:8080"

// LoadConfig reads and validates a config file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	// sigs.k8s.io/yaml into the JSON-tagged Config: the Helm chart writes
	// this file with toYaml, the same library (docs/architecture.md, "YAML libraries").
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c.resolvePaths(base)
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return &c, nil
}

// ExampleConfig is what `verifier serve` runs with no config: the example
// tree under examplesDir, scanned hourly, served on 127.0.0.1.
func ExampleConfig(examplesDir, dataDir string) *Config {
	c := &Config{
		Listen:      DefaultListen,
		DataDir:     dataDir,
		PublicReads: true,
		Sources:     []SourceConfig{{Name: "examples", Path: examplesDir, Interval: Duration(time.Hour)}},
	}
	c.applyDefaults()
	return c
}

func (c *Config) resolvePaths(base string) {
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(base, *p)
		}
	}
	abs(&c.DataDir)
	abs(&c.TokensFile)
	abs(&c.Policy)
	abs(&c.DatabasePasswordFile)
	if a := c.Admission; a != nil {
		abs(&a.Policy)
		abs(&a.TLS.CertFile)
		abs(&a.TLS.KeyFile)
		if a.TLS.SelfSigned != nil {
			abs(&a.TLS.SelfSigned.Dir)
		}
	}
	for i := range c.Sources {
		abs(&c.Sources[i].Path)
		abs(&c.Sources[i].Policy)
		if cl := c.Sources[i].Cluster; cl != nil {
			c.resolveClusterPaths(base, cl)
		}
		if g := c.Sources[i].Git; g != nil && g.Credentials != nil {
			abs(&g.Credentials.PasswordFile)
			abs(&g.Credentials.SSHKeyFile)
			abs(&g.Credentials.KnownHostsFile)
		}
	}
}

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	l := &c.Limits
	setInt64(&l.MaxBodyBytes, 64<<20)
	setInt64(&l.MaxTarBytes, 512<<20)
	setInt(&l.MaxTarFiles, 10000)
	setInt(&l.MaxTarDepth, untar.DefaultMaxDepth)
	setInt(&l.MaxTarPathBytes, untar.DefaultMaxPathBytes)
	setDur(&l.VerifyQueueTimeout, 30*time.Second)
	setInt(&l.MaxConcurrentVerifies, 4)
	setInt(&l.VerifyCacheEntries, 1024)
	setDur(&l.VerifyCacheTTL, time.Hour)
	setDur(&l.RequestTimeout, 60*time.Second)
	setDur(&l.ReadHeaderTimeout, 10*time.Second)
	setDur(&l.ScanTimeout, 30*time.Minute)
	setDur(&l.ShutdownTimeout, 30*time.Second)
	setDur(&l.RenderTimeout, render.DefaultTimeout)
	setInt64(&l.RenderMaxMemory, render.DefaultMaxMemory)
	setInt64(&l.RenderMaxOutput, render.DefaultMaxOutput)
	setInt(&l.GitMaxFiles, gitsource.DefaultMaxFiles)
	setInt64(&l.GitMaxBytes, gitsource.DefaultMaxBytes)
	setInt64(&l.GitMaxFileBytes, gitsource.DefaultMaxFileBytes)
	if c.Webhook != nil {
		setDur(&c.Webhook.Timeout, 5*time.Second)
	}
	c.Admission.applyDefaults(c.DataDir)
	setInt(&c.Retention.MaxScans, DefaultRetentionMaxScans)
	setDur(&c.Retention.MaxAge, DefaultRetentionMaxAge)
}

func setInt(p *int, v int) {
	if *p == 0 {
		*p = v
	}
}

func setInt64(p *int64, v int64) {
	if *p == 0 {
		*p = v
	}
}

func setDur(p *Duration, v time.Duration) {
	if *p == 0 {
		*p = Duration(v)
	}
}

// sourceName is a source's name, compiled on first use, not at init:
// every process start (each verifier check, each render child) would pay
// for it.
var sourceName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`) })

// Validate fills in defaults and reports every problem at once.
func (c *Config) Validate() error {
	c.applyDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen %q: want HOST:PORT such as %s", c.Listen, DefaultListen)
	}
	if c.DataDir == "" {
		bad("dataDir: required (the directory for the database)")
	}
	for _, r := range c.Registries {
		if err := verify.ValidAllowEntry(r); err != nil {
			bad("registries: %v", err)
		}
	}
	seen := map[string]bool{}
	for i, s := range c.Sources {
		errs = append(errs, c.validateSource(fmt.Sprintf("sources[%d]", i), s, seen)...)
	}
	errs = append(errs, c.Retention.validate("retention")...)
	if c.Policy != "" {
		if _, err := policy.Load(c.Policy); err != nil {
			bad("policy: %v", err)
		}
	}
	if c.TokensFile != "" {
		if fi, err := os.Stat(c.TokensFile); err != nil {
			bad("tokensFile: %v (one bearer token a line; or give tokens in %s)", err, TokensEnv)
		} else if fi.IsDir() {
			bad("tokensFile %s: a directory, want a file with one bearer token a line", c.TokensFile)
		}
	}
	errs = append(errs, c.validateDatabase()...)
	errs = append(errs, c.Limits.validate()...)
	errs = append(errs, c.Webhook.validate()...)
	errs = append(errs, c.validateAdmission()...)
	return errors.Join(errs...)
}

// validateSource checks one source; seen holds the names of the sources
// before it.
func (c *Config) validateSource(where string, s SourceConfig, seen map[string]bool) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !sourceName().MatchString(s.Name) {
		bad("%s.name %q: want lower-case letters, digits, '.', '_', '-'", where, s.Name)
	} else if seen[s.Name] {
		bad("%s.name %q: duplicate", where, s.Name)
	}
	seen[s.Name] = true
	switch {
	case s.Cluster != nil:
		errs = append(errs, c.validateCluster(where, s)...)
	case s.Path == "" && s.Git == nil:
		bad("%s: give path (a directory) or git (a repository)", where)
	case s.Path != "" && s.Git != nil:
		bad("%s: give path or git, not both", where)
	case s.Git != nil:
		errs = append(errs, validateGit(where+".git", s.Git)...)
	default:
		if fi, err := os.Stat(s.Path); err != nil || !fi.IsDir() {
			bad("%s.path %s: not a directory", where, s.Path)
		}
	}
	if s.Interval < 0 || (s.Interval > 0 && s.Interval.D() < time.Second) {
		bad("%s.interval %s: want at least 1s (or omit it for on-demand scans only)", where, s.Interval.D())
	}
	if s.Registry != "" {
		if _, err := artifact.ParsePrefix(s.Registry); err != nil {
			bad("%s.registry: %v", where, err)
		} else if !c.registryAllowed(s.Registry) {
			bad("%s.registry %q: not within the registries allowlist", where, s.Registry)
		}
	}
	if s.Policy != "" {
		if _, err := policy.Load(s.Policy); err != nil {
			bad("%s.policy: %v", where, err)
		}
	}
	if s.Retention != nil {
		errs = append(errs, s.Retention.validate(where+".retention")...)
	}
	return errs
}

func (l Limits) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if l.MaxBodyBytes < 0 || l.MaxTarBytes < 0 || l.MaxTarFiles < 0 || l.MaxTarDepth < 0 || l.MaxTarPathBytes < 0 ||
		l.MaxConcurrentVerifies < 0 || l.VerifyCacheEntries < 0 || l.RenderMaxMemory < 0 || l.RenderMaxOutput < 0 ||
		l.GitMaxFiles < 0 || l.GitMaxBytes < 0 || l.GitMaxFileBytes < 0 {
		bad("limits: values must be positive")
	}
	for name, d := range map[string]Duration{"requestTimeout": l.RequestTimeout, "readHeaderTimeout": l.ReadHeaderTimeout,
		"scanTimeout": l.ScanTimeout, "shutdownTimeout": l.ShutdownTimeout, "verifyQueueTimeout": l.VerifyQueueTimeout,
		"verifyCacheTTL": l.VerifyCacheTTL, "renderTimeout": l.RenderTimeout} {
		if d < 0 {
			bad("limits.%s: must be positive", name)
		}
	}
	return errs
}

// validate checks the webhook settings, if any.
func (w *WebhookConfig) validate() []error {
	if w == nil {
		return nil
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	u, err := url.Parse(w.URL)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		bad("webhook.url: want an absolute http or https URL")
	case u.Scheme != "http" && u.Scheme != "https":
		bad("webhook.url: scheme %q: want http or https", u.Scheme)
	case u.User != nil:
		bad("webhook.url: must not carry user:password (put secrets in the path or query)")
	}
	if w.Timeout < 0 || w.Timeout.D() > time.Minute {
		bad("webhook.timeout: want between 0 and 1m")
	}
	return errs
}

func (r *Retention) validate(where string) []error {
	var errs []error
	if r.MaxScans < 0 {
		errs = append(errs, fmt.Errorf("%s.maxScans %d: want at least 1 (the newest scans kept per source)", where, r.MaxScans))
	}
	if r.MaxAge < 0 || (r.MaxAge > 0 && r.MaxAge.D() < time.Minute) {
		errs = append(errs, fmt.Errorf("%s.maxAge %s: want at least 1m (e.g. 720h)", where, r.MaxAge.D()))
	}
	return errs
}

// RegistryHosts are the hosts (HOST[:PORT]) of the registries allowlist:
// the only hosts the service's registry clients contact, token realms and
// redirect targets included.
func (c *Config) RegistryHosts() []string {
	var hosts []string
	for _, entry := range c.Registries {
		host, _, _ := strings.Cut(entry, "/")
		hosts = append(hosts, host)
	}
	return hosts
}

// registryAllowed says whether repository (HOST[:PORT]/PATH) lies within the
// allowlist (remote.Allowed, the rule the registry checks apply too).
func (c *Config) registryAllowed(repository string) bool {
	return remote.Allowed(repository, c.Registries)
}
