package sign

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/root"
)

// TLogMode says whether transparency-log inclusion is verified.
type TLogMode string

const (
	// TLogRequired: every signature must carry a transparency-log entry
	// whose inclusion verifies under the trusted root's logs.
	TLogRequired TLogMode = "required"
	// TLogOptional (the default): entries that are there are verified
	// (keyless bundles), none is required.
	TLogOptional TLogMode = "optional"
	// TLogOff: log entries are not looked at; a keyless signature then
	// needs a signed timestamp (RFC 3161) to prove when it was made.
	TLogOff TLogMode = "off"
)

// ParseTLogMode reads required, optional or off ("" is optional).
func ParseTLogMode(s string) (TLogMode, error) {
	switch m := TLogMode(s); m {
	case "":
		return TLogOptional, nil
	case TLogRequired, TLogOptional, TLogOff:
		return m, nil
	}
	return "", fmt.Errorf("tlog %q: use required, optional or off", s)
}

// Identity is a keyless signer the policy trusts: the OIDC issuer of the
// Fulcio certificate and its subject (SAN: e-mail, URI such as a GitHub
// workflow ref), exactly or by regular expression.
type Identity struct {
	Issuer        string `json:"issuer" yaml:"issuer"`
	Subject       string `json:"subject,omitempty" yaml:"subject"`
	SubjectRegExp string `json:"subjectRegExp,omitempty" yaml:"subjectRegExp"`
}

// Validate says what is wrong with the identity.
func (id Identity) Validate() error {
	var problems []string
	if strings.TrimSpace(id.Issuer) == "" {
		problems = append(problems, "issuer is empty: name the OIDC issuer, e.g. https://token.actions.githubusercontent.com")
	}
	switch {
	case id.Subject == "" && id.SubjectRegExp == "":
		problems = append(problems, "give subject or subjectRegExp (the certificate's SAN)")
	case id.Subject != "" && id.SubjectRegExp != "":
		problems = append(problems, "give subject or subjectRegExp, not both")
	case id.SubjectRegExp != "":
		if _, err := regexp.Compile(id.SubjectRegExp); err != nil {
			problems = append(problems, fmt.Sprintf("subjectRegExp: %v", err))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// String names the identity for messages.
func (id Identity) String() string {
	s := id.Subject
	if s == "" {
		s = "~" + id.SubjectRegExp
	}
	return s + " (issuer " + id.Issuer + ")"
}

// matches reports whether a certificate's SAN and issuer are this identity.
func (id Identity) matches(san, issuer string) bool {
	if issuer != id.Issuer {
		return false
	}
	if id.Subject != "" {
		return san == id.Subject
	}
	re, err := regexp.Compile(id.SubjectRegExp)
	return err == nil && re.MatchString(san)
}

// Trust is what signatures and attestations are verified against: public
// keys, keyless identities with the Sigstore trusted root that certifies
// them, and the transparency-log rule.
type Trust struct {
	Keys       []*PublicKey
	Identities []Identity
	// Root holds the Fulcio CAs, timestamp authorities and transparency
	// logs (Sigstore's trusted_root.json); needed for identities and for
	// TLog required.
	Root root.TrustedMaterial
	// RootSource names where Root was read, for messages.
	RootSource string
	TLog       TLogMode
}

// Empty reports whether nothing at all is trusted.
func (t Trust) Empty() bool { return len(t.Keys) == 0 && len(t.Identities) == 0 }

func (t Trust) tlog() TLogMode {
	if t.TLog == "" {
		return TLogOptional
	}
	return t.TLog
}

// maxTrustedRoot bounds a trusted_root.json.
const maxTrustedRoot = 4 << 20

// LoadTrustedRoot reads a Sigstore trusted root (trusted_root.json, the
// format the Sigstore TUF repository distributes).
func LoadTrustedRoot(path string) (*root.TrustedRoot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trusted root %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTrustedRoot+1))
	if err != nil {
		return nil, fmt.Errorf("trusted root %s: %w", path, err)
	}
	if len(b) > maxTrustedRoot {
		return nil, fmt.Errorf("trusted root %s: larger than %d bytes", path, maxTrustedRoot)
	}
	tr, err := root.NewTrustedRootFromJSON(b)
	if err != nil {
		return nil, fmt.Errorf("trusted root %s is not a Sigstore trusted_root.json: %w (get one with `cosign trusted-root create` or from the Sigstore TUF repository)", path, err)
	}
	return tr, nil
}

// PublicGoodRoot is where cosign caches the public-good Sigstore trusted
// root ($TUF_ROOT or ~/.sigstore/root): the default trusted root when it is
// there. Nothing is fetched: "" when there is none.
func PublicGoodRoot() string {
	dir := os.Getenv("TUF_ROOT")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".sigstore", "root")
	}
	p := filepath.Join(dir, "tuf-repo-cdn.sigstore.dev", "targets", "trusted_root.json")
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return p
	}
	return ""
}
