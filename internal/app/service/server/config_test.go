package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestExampleConfigFileLoads(t *testing.T) {
	cfg, err := LoadConfig("../../../../examples/serve.yaml")
	if err != nil {
		t.Fatal(err)
	}
	examples, _ := filepath.Abs("../../../../examples")
	if len(cfg.Sources) != 1 || cfg.Sources[0].Path != examples || cfg.Sources[0].Interval.D() != time.Hour {
		t.Fatalf("sources %+v, want examples every hour", cfg.Sources)
	}
	if want := filepath.Join(examples, "../.cache/serve"); cfg.DataDir != want {
		t.Fatalf("dataDir %s, want %s (relative to the file)", cfg.DataDir, want)
	}
	if cfg.Limits.MaxTarBytes != 512<<20 || cfg.Limits.RequestTimeout.D() != time.Minute || cfg.Listen != DefaultListen {
		t.Fatalf("limits %+v", cfg.Limits)
	}
	// The file shows every bound at its default: it stays in step with
	// applyDefaults.
	def := ExampleConfig(examples, t.TempDir())
	if cfg.Limits != def.Limits || cfg.Retention != def.Retention {
		t.Fatalf("examples/serve.yaml shows limits %+v retention %+v; the defaults are %+v %+v", cfg.Limits, cfg.Retention, def.Limits, def.Retention)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "tree"), 0o755)
	os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte("apiVersion: pinseal/v1\nkind: Policy\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "broken-policy.yaml"), []byte("apiVersion: pinseal/v1\nkind: Policy\nchecks: {no-such-check: error}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "tokens"), []byte("0123456789abcdef0123\n"), 0o600)
	base := "dataDir: data\nsources:\n- name: tree\n  path: tree\n  interval: 1h\n"
	tests := []struct {
		name    string
		yaml    string
		wantErr string
		check   func(t *testing.T, c *Config)
	}{
		{"minimal", base, "", func(t *testing.T, c *Config) {
			if c.DataDir != filepath.Join(dir, "data") || c.Sources[0].Path != filepath.Join(dir, "tree") {
				t.Errorf("paths not relative to the file: %+v", c)
			}
			if c.Listen != "127.0.0.1:8080" || c.Limits.MaxBodyBytes != 64<<20 || c.Limits.MaxTarFiles != 10000 ||
				c.Limits.ReadHeaderTimeout.D() != 10*time.Second || c.Limits.MaxConcurrentVerifies != 4 {
				t.Errorf("defaults: %+v", c)
			}
		}},
		{"everything", base + `listen: 127.0.0.1:9999
tokensFile: tokens
publicReads: true
policy: policy.yaml
registries: [127.0.0.1:5000/capi, ghcr.io]
limits: {maxBodyBytes: 1000, maxTarFiles: 5, maxTarBytes: 2000, requestTimeout: 5s, scanTimeout: 1m}
webhook: {url: "https://hooks.example/x?token=1", timeout: 2s}
`, "", func(t *testing.T, c *Config) {
			if c.TokensFile != filepath.Join(dir, "tokens") || !c.PublicReads || c.Limits.MaxBodyBytes != 1000 ||
				c.Webhook.Timeout.D() != 2*time.Second || c.Limits.ScanTimeout.D() != time.Minute {
				t.Errorf("config %+v", c)
			}
		}},
		{"retention", base + "  retention: {maxScans: 5}\n- name: other\n  path: tree\nretention: {maxScans: 50, maxAge: 24h}\n", "", func(t *testing.T, c *Config) {
			if r := c.RetentionFor("tree"); r.MaxScans != 5 || r.MaxAge.D() != 24*time.Hour {
				t.Errorf("retention of tree %+v, want its own maxScans and the global maxAge", r)
			}
			if r := c.RetentionFor("other"); r.MaxScans != 50 || r.MaxAge.D() != 24*time.Hour {
				t.Errorf("retention of other %+v, want the global one", r)
			}
		}},
		{"retention defaults", base, "", func(t *testing.T, c *Config) {
			if r := c.RetentionFor("tree"); r.MaxScans != 1000 || r.MaxAge.D() != 90*24*time.Hour {
				t.Errorf("default retention %+v", r)
			}
			if l := c.Limits; l.MaxTarDepth != 32 || l.MaxTarPathBytes != 1024 || l.VerifyQueueTimeout.D() != 30*time.Second {
				t.Errorf("default limits %+v", l)
			}
		}},
		{"negative retention", base + "retention: {maxScans: -1}\n", "retention.maxScans", nil},
		{"short retention", base + "  retention: {maxAge: 1s}\n", "sources[0].retention.maxAge", nil},
		{"unknown retention key", base + "retention: {keep: 1}\n", "unknown field", nil},
		{"negative depth", base + "limits: {maxTarDepth: -1}\n", "positive", nil},
		{"negative queue timeout", base + "limits: {verifyQueueTimeout: -1s}\n", "verifyQueueTimeout", nil},
		{"unknown key", base + "listenn: x\n", "unknown field", nil},
		{"duplicate key", base + "dataDir: other\n", "already set", nil},
		{"no dataDir", "sources: []\n", "dataDir: required", nil},
		{"bad listen", base + "listen: localhost\n", "listen", nil},
		{"bad duration", base + "limits: {requestTimeout: 5}\n", "duration", nil},
		{"bad source name", strings.Replace(base, "name: tree", "name: Tree!", 1), "sources[0].name", nil},
		{"duplicate source", base + "- name: tree\n  path: tree\n", "duplicate", nil},
		{"missing path", strings.Replace(base, "path: tree", "path: nope", 1), "not a directory", nil},
		{"short interval", strings.Replace(base, "interval: 1h", "interval: 10ms", 1), "at least 1s", nil},
		{"registry outside allowlist", base + "  registry: evil.example/x\nregistries: [127.0.0.1:5000]\n", "allowlist", nil},
		{"registry with scheme", base + "registries: [\"https://ghcr.io\"]\n", "without a scheme", nil},
		{"registry with tag", base + "registries: [\"ghcr.io/x:v1\"]\n", "repository prefix", nil},
		{"missing policy", base + "policy: nope.yaml\n", "policy", nil},
		{"broken policy", base + "policy: broken-policy.yaml\n", "broken-policy.yaml", nil},
		{"broken source policy", base + "  policy: broken-policy.yaml\n", "sources[0].policy: policy " + filepath.Join(dir, "broken-policy.yaml"), nil},
		{"missing tokens file", base + "tokensFile: nope\n", "tokensFile", nil},
		{"tokens file a directory", base + "tokensFile: tree\n", "tokensFile", nil},
		{"webhook scheme", base + "webhook: {url: \"file:///etc/passwd\"}\n", "webhook.url", nil},
		{"webhook relative", base + "webhook: {url: \"/hook\"}\n", "webhook.url", nil},
		{"webhook userinfo", base + "webhook: {url: \"https://u:p@hooks.example/\"}\n", "user:password", nil},
		{"negative limit", base + "limits: {maxTarFiles: -1}\n", "positive", nil},
		{"git source", base + "- name: g\n  git: {url: \"https://github.com/o/r.git\", ref: main, credentials: {passwordFile: tokens}}\ndatabase: postgres://u@db:5432/p\ndatabasePasswordFile: tokens\nreplicas: {leaseTTL: 3s}\n", "", func(t *testing.T, c *Config) {
			g := c.Sources[1].Git
			if g == nil || g.Credentials.PasswordFile != filepath.Join(dir, "tokens") || c.Replicas.LeaseTTL.D() != 3*time.Second || c.DatabasePasswordFile != filepath.Join(dir, "tokens") {
				t.Errorf("git source %+v, config %+v", g, c)
			}
		}},
		{"path and git", base + "- name: g\n  path: tree\n  git: {url: \"file:///x\"}\n", "not both", nil},
		{"neither path nor git", base + "- name: g\n  interval: 1h\n", "give path", nil},
		{"git bad scheme", base + "- name: g\n  git: {url: \"ftp://h/r\"}\n", "sources[1].git.url", nil},
		{"git password in URL", base + "- name: g\n  git: {url: \"https://u:pw@h/r\"}\n", "carries a password", nil},
		{"git credentials missing file", base + "- name: g\n  git: {url: \"https://h/r\", credentials: {sshKeyFile: nope}}\n", "sshKeyFile", nil},
		{"git password file and env", base + "- name: g\n  git: {url: \"https://h/r\", credentials: {passwordFile: tokens, passwordEnv: X}}\n", "not both", nil},
		{"database not postgres", base + "database: mysql://h/db\n", "PostgreSQL URL", nil},
		{"database password in URL", base + "database: postgres://u:secret@h/db\n", "carries a password", nil},
		{"replicas without postgres", base + "replicas: {leaseTTL: 5s}\n", "only with a PostgreSQL", nil},
		{"lease TTL too short", base + "database: postgres://u@h/db\nreplicas: {leaseTTL: 10ms}\n", "leaseTTL", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, "serve.yaml")
			os.WriteFile(p, []byte(tt.yaml), 0o600)
			c, err := LoadConfig(p)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestRegistryAllowed(t *testing.T) {
	c := &Config{Registries: []string{"127.0.0.1:5000/capi", "ghcr.io", "Registry.Example/a/b"}}
	tests := []struct {
		repo string
		want bool
	}{
		{"127.0.0.1:5000/capi", true},
		{"127.0.0.1:5000/capi/core-cluster-api", true},
		{"127.0.0.1:5000/capix/core", false},
		{"127.0.0.1:5000/other", false},
		{"127.0.0.1:5001/capi/core", false},
		{"ghcr.io/anything/at/all", true},
		{"ghcr.io.evil.example/x", false},
		{"registry.example/a/b/c", true},
		{"registry.example/a", false},
	}
	for _, tt := range tests {
		if got := c.registryAllowed(tt.repo); got != tt.want {
			t.Errorf("registryAllowed(%s) = %v, want %v", tt.repo, got, tt.want)
		}
	}
}
