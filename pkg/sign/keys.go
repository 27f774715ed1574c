// Package sign signs, attests and verifies pinseal artifacts the way cosign
// does.
//
// It signs and attests pinseal artifacts the way cosign does, with
// cosign's own library, and verifies signatures and attestations with
// structured results a policy can act on.
//
// Signatures are stored as cosign stores them (no transparency log by
// default): an OCI image tagged "sha256-<hex>.sig" in the artifact's
// repository whose layers are simple-signing payloads carrying the
// signature in the dev.cosignproject.cosign/signature annotation.
// Attestations are DSSE envelopes around in-toto statements in an image
// tagged "sha256-<hex>.att". `cosign verify --key cosign.pub
// --insecure-ignore-tlog` and `cosign verify-attestation --type
// slsaprovenance1 ...` accept both.
//
// Storage goes through artifact.Repository (oras-go), so signatures work
// the same in a registry and in an OCI image layout directory; cosign's CLI
// itself can only read the registry copy.
package sign

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/options"

	"github.com/pinseal/pinseal/internal/atomicfile"
)

// PasswordEnv is the environment variable holding the private key's
// password, as for cosign.
const PasswordEnv = "COSIGN_PASSWORD"

// Password returns $COSIGN_PASSWORD and whether it is set.
func Password() ([]byte, bool) {
	v, ok := os.LookupEnv(PasswordEnv)
	return []byte(v), ok
}

// KeyReason classifies why a key could not be used.
type KeyReason string

const (
	KeyMalformed     KeyReason = "malformed"        // not PEM, or not a key
	KeyUnknownType   KeyReason = "unknown-key-type" // a PEM block or algorithm cosign cannot sign or verify with
	KeyWrongPassword KeyReason = "wrong-password"   // the encrypted private key did not decrypt
)

// KeyError says which key could not be loaded and why.
type KeyError struct {
	Path   string // file, or "" for bytes
	Reason KeyReason
	Err    error
	Hint   string
}

func (e *KeyError) Error() string {
	where := e.Path
	if where == "" {
		where = "key"
	}
	msg := fmt.Sprintf("%s: %s: %v", where, e.Reason, e.Err)
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

func (e *KeyError) Unwrap() error { return e.Err }

// PublicKey is a key signatures are verified with.
type PublicKey struct {
	// ID is "sha256:<hex>" of the PKIX DER encoding: a stable fingerprint
	// to name the key in results and policies.
	ID string
	// Source is the file the key was read from, if any.
	Source    string
	key       crypto.PublicKey
	verifiers []signature.Verifier
}

// Key is the crypto.PublicKey.
func (k *PublicKey) Key() crypto.PublicKey { return k.key }

// PEM encodes the key as cosign.pub does.
func (k *PublicKey) PEM() ([]byte, error) { return cryptoutils.MarshalPublicKeyToPEM(k.key) }

// PrivateKey is a cosign private key, decrypted.
type PrivateKey struct {
	sv  signature.SignerVerifier
	pub *PublicKey
}

// Public is the key's public half.
func (k *PrivateKey) Public() *PublicKey { return k.pub }

// GenerateKeyPair makes an ECDSA P-256 key pair in cosign's format: the
// private key encrypted with password ("ENCRYPTED SIGSTORE PRIVATE KEY"),
// the public key as PKIX PEM.
func GenerateKeyPair(password []byte) (privatePEM, publicPEM []byte, err error) {
	kb, err := cosign.GenerateKeyPair(func(bool) ([]byte, error) { return password, nil })
	if err != nil {
		return nil, nil, fmt.Errorf("generate key pair: %w", err)
	}
	return kb.PrivateBytes, kb.PublicBytes, nil
}

// ErrKeyExists is returned by WriteKeyPair when a key file is already
// there: keys are never overwritten.
var ErrKeyExists = errors.New("a key file is already there (keys are never overwritten)")

// WriteKeyPair generates a key pair and writes PREFIX.key (mode 0600) and
// PREFIX.pub (0644) atomically, like `cosign generate-key-pair
// --output-key-prefix PREFIX`. Existing files are never overwritten.
func WriteKeyPair(prefix string, password []byte) (keyPath, pubPath string, err error) {
	keyPath, pubPath = prefix+".key", prefix+".pub"
	for _, p := range []string{keyPath, pubPath} {
		if _, err := os.Lstat(p); err == nil {
			return "", "", fmt.Errorf("%s: %w: move it away or choose another prefix", p, ErrKeyExists)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
	}
	priv, pub, err := GenerateKeyPair(password)
	if err != nil {
		return "", "", err
	}
	if err := atomicfile.WriteFiles([]atomicfile.File{
		{Path: keyPath, Data: priv, Perm: 0o600},
		{Path: pubPath, Data: pub, Perm: 0o644},
	}); err != nil {
		return "", "", err
	}
	return keyPath, pubPath, nil
}

// CheckKeyFile reports, before anything is signed, a key file that is not
// there or is a directory; the error names the file and how to make one.
func CheckKeyFile(path string) error {
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		err = errors.New("is a directory")
	}
	if err != nil {
		return fmt.Errorf("%s: %w (make a key pair with `builder keygen` or `cosign generate-key-pair`)", path, err)
	}
	return nil
}

// LoadPrivateKey reads a cosign private key file (from `builder keygen` or
// `cosign generate-key-pair`) and decrypts it with password.
func LoadPrivateKey(path string, password []byte) (*PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePrivateKey(b, password)
	if ke := (*KeyError)(nil); errors.As(err, &ke) {
		ke.Path = path
	}
	return k, err
}

// ParsePrivateKey decodes and decrypts a cosign private key.
func ParsePrivateKey(pemBytes, password []byte) (*PrivateKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, &KeyError{Reason: KeyMalformed, Err: errors.New("not a PEM file"),
			Hint: "pass the cosign.key written by `builder keygen` or `cosign generate-key-pair`"}
	}
	switch block.Type {
	case cosign.SigstorePrivateKeyPemType, cosign.CosignPrivateKeyPemType:
	case "PUBLIC KEY":
		return nil, &KeyError{Reason: KeyUnknownType, Err: errors.New("this is a public key"),
			Hint: "signing takes the private cosign.key"}
	case "EC PRIVATE KEY", "PRIVATE KEY", "RSA PRIVATE KEY":
		return nil, &KeyError{Reason: KeyUnknownType, Err: fmt.Errorf("unencrypted %s", block.Type),
			Hint: "convert it with `cosign import-key-pair --key FILE` first"}
	default:
		return nil, &KeyError{Reason: KeyUnknownType, Err: fmt.Errorf("PEM block %q is not a cosign private key", block.Type),
			Hint: "pass the cosign.key written by `builder keygen` or `cosign generate-key-pair`"}
	}
	sv, err := cosign.LoadPrivateKey(pemBytes, password, nil)
	if err != nil {
		switch {
		case strings.HasPrefix(err.Error(), "decrypt"):
			return nil, &KeyError{Reason: KeyWrongPassword, Err: err,
				Hint: "set " + PasswordEnv + " to the key's password"}
		default:
			return nil, &KeyError{Reason: KeyUnknownType, Err: err,
				Hint: "cosign keys are ECDSA, RSA or Ed25519"}
		}
	}
	return newPrivateKey(sv)
}

// NewPrivateKey wraps an unencrypted ECDSA, RSA or Ed25519 private key the
// way cosign loads one (Ed25519 signs in the pre-hashed Ed25519ph mode).
func NewPrivateKey(priv crypto.PrivateKey) (*PrivateKey, error) {
	sv, err := signature.LoadDefaultSignerVerifier(priv, *cosign.GetDefaultLoadOptions(nil)...)
	if err != nil {
		return nil, &KeyError{Reason: KeyUnknownType, Err: err, Hint: "cosign keys are ECDSA, RSA or Ed25519"}
	}
	return newPrivateKey(sv)
}

func newPrivateKey(sv signature.SignerVerifier) (*PrivateKey, error) {
	pub, err := sv.PublicKey()
	if err != nil {
		return nil, &KeyError{Reason: KeyMalformed, Err: err}
	}
	pk, err := newPublicKey(pub, "")
	if err != nil {
		return nil, err
	}
	return &PrivateKey{sv: sv, pub: pk}, nil
}

// LoadPublicKey reads a PEM public key file (cosign.pub).
func LoadPublicKey(path string) (*PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePublicKey(b)
	if err != nil {
		if ke := (*KeyError)(nil); errors.As(err, &ke) {
			ke.Path = path
		}
		return nil, err
	}
	k.Source = path
	return k, nil
}

// ParsePublicKey decodes a PEM public key. Key types cosign cannot verify
// with (DSA, X25519, unknown algorithms, certificates) are a *KeyError with
// Reason KeyUnknownType.
func ParsePublicKey(pemBytes []byte) (*PublicKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, &KeyError{Reason: KeyMalformed, Err: errors.New("not a PEM file"),
			Hint: "pass the cosign.pub written by `builder keygen` or `cosign generate-key-pair`"}
	}
	if strings.HasSuffix(block.Type, "PRIVATE KEY") {
		return nil, &KeyError{Reason: KeyUnknownType, Err: fmt.Errorf("this is a private key (PEM %q)", block.Type),
			Hint: "pass the public half (cosign.pub, next to cosign.key); never hand out the private key"}
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return nil, &KeyError{Reason: KeyUnknownType, Err: err,
			Hint: "cosign public keys are PEM \"PUBLIC KEY\" blocks holding ECDSA, RSA or Ed25519 keys"}
	}
	return newPublicKey(pub, "")
}

func newPublicKey(pub crypto.PublicKey, source string) (*PublicKey, error) {
	der, err := cryptoutils.MarshalPublicKeyToDER(pub)
	if err != nil {
		return nil, &KeyError{Reason: KeyUnknownType, Err: err}
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, &KeyError{Reason: KeyUnknownType, Err: fmt.Errorf("%T: %w", pub, err),
			Hint: "cosign keys are ECDSA, RSA or Ed25519"}
	}
	vs := []signature.Verifier{v}
	if _, ok := pub.(ed25519.PublicKey); ok {
		// cosign signs with Ed25519ph by default; accept both forms.
		if ph, err := signature.LoadVerifierWithOpts(pub, options.WithED25519ph()); err == nil {
			vs = append(vs, ph)
		}
	}
	sum := sha256.Sum256(der)
	return &PublicKey{ID: "sha256:" + hex.EncodeToString(sum[:]), Source: source, key: pub, verifiers: vs}, nil
}

// Equal reports whether two public keys are the same key.
func (k *PublicKey) Equal(o *PublicKey) bool { return k != nil && o != nil && k.ID == o.ID }

// keyIDs lists the IDs of keys, for messages.
func keyIDs(keys []*PublicKey) string {
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(shortID(k.ID))
		if k.Source != "" {
			b.WriteString(" (" + k.Source + ")")
		}
	}
	return b.String()
}

func shortID(id string) string {
	if len(id) > 19 {
		return id[:19]
	}
	return id
}
