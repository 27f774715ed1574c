package server

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/gitsource"
	"github.com/pinseal/pinseal/internal/app/service/store"
)

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

func validateGit(where string, g *GitConfig) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if g.URL == "" {
		bad("%s.url: required (https://…, ssh://…, user@host:path or file:///…)", where)
	} else if _, err := gitsource.Scheme(g.URL); err != nil {
		bad("%s.url: %v", where, err)
	}
	if g.Depth < 0 {
		bad("%s.depth: must be positive (default 1)", where)
	}
	if strings.ContainsAny(g.Ref, " ~^:?*[\\") {
		bad("%s.ref %q: want a branch, tag or full ref name", where, g.Ref)
	}
	if cr := g.Credentials; cr != nil {
		for name, f := range map[string]string{"passwordFile": cr.PasswordFile, "sshKeyFile": cr.SSHKeyFile, "knownHostsFile": cr.KnownHostsFile} {
			if f == "" {
				continue
			}
			if fi, err := os.Stat(f); err != nil {
				bad("%s.credentials.%s: %v", where, name, err)
			} else if fi.IsDir() {
				bad("%s.credentials.%s %s: a directory, want a file", where, name, f)
			}
		}
		if cr.PasswordEnv != "" && !envName().MatchString(cr.PasswordEnv) {
			bad("%s.credentials.passwordEnv %q: want the name of an environment variable", where, cr.PasswordEnv)
		}
		if cr.PasswordFile != "" && cr.PasswordEnv != "" {
			bad("%s.credentials: give passwordFile or passwordEnv, not both", where)
		}
	}
	return errs
}

func (c *Config) validateDatabase() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Database != "" {
		if !store.IsPostgresURL(c.Database) {
			bad("database: want a PostgreSQL URL postgres://USER@HOST:PORT/DB (or omit it for the SQLite file in dataDir)")
		} else if u, err := url.Parse(c.Database); err != nil {
			bad("database: %v", err)
		} else if _, ok := u.User.Password(); ok || u.Query().Has("password") {
			bad("database: the URL carries a password: put it in databasePasswordFile or %s instead", DatabasePasswordEnv)
		}
	}
	if c.DatabasePasswordFile != "" {
		if c.Database == "" {
			bad("databasePasswordFile: only with a PostgreSQL database")
		} else if fi, err := os.Stat(c.DatabasePasswordFile); err != nil {
			bad("databasePasswordFile: %v", err)
		} else if fi.IsDir() {
			bad("databasePasswordFile %s: a directory, want a file holding the password", c.DatabasePasswordFile)
		}
	}
	r := c.Replicas
	if r.LeaseTTL < 0 || (r.LeaseTTL > 0 && r.LeaseTTL.D() < 500*time.Millisecond) {
		bad("replicas.leaseTTL %s: want at least 500ms (default 10s)", r.LeaseTTL.D())
	}
	if r.MaxConcurrentScans < 0 {
		bad("replicas.maxConcurrentScans: must be positive (default 4)")
	}
	if (r != ReplicasConfig{}) && c.Database == "" {
		bad("replicas: only with a PostgreSQL database (SQLite serves one process)")
	}
	return errs
}

// readSecret reads a secret from file (trimmed) or, when file is "", the
// environment variable env.
func readSecret(file, env string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(b)), nil
	}
	if env != "" {
		return os.Getenv(env), nil
	}
	return "", nil
}
