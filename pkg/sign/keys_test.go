package sign

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeyPairRoundTrip(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "cosign")
	keyPath, pubPath, err := WriteKeyPair(prefix, []byte("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(keyPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode %v (%v), want 0600", fi.Mode(), err)
	}
	b, _ := os.ReadFile(keyPath)
	if blk, _ := pem.Decode(b); blk == nil || blk.Type != "ENCRYPTED SIGSTORE PRIVATE KEY" {
		t.Fatalf("private key is not in cosign's encrypted format: %q", b)
	}
	priv, err := LoadPrivateKey(keyPath, []byte("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := LoadPublicKey(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	if !priv.Public().Equal(pub) || pub.Source != pubPath {
		t.Fatalf("public key %s (%s) does not match the private key's %s", pub.ID, pub.Source, priv.Public().ID)
	}
	if _, _, err := WriteKeyPair(prefix, nil); err == nil {
		t.Fatal("WriteKeyPair overwrote an existing key")
	}
	_, err = LoadPrivateKey(keyPath, []byte("wrong"))
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Reason != KeyWrongPassword || ke.Path != keyPath {
		t.Fatalf("wrong password: %v, want KeyError wrong-password naming the file", err)
	}
}

func pemOf(t *testing.T, typ string, der []byte) []byte {
	t.Helper()
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func TestParsePublicKeyTypes(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	edDER, _ := x509.MarshalPKIXPublicKey(edPub)
	x, _ := ecdh.X25519().GenerateKey(rand.Reader)
	xDER, _ := x509.MarshalPKIXPublicKey(x.PublicKey())
	// An SPKI with an algorithm OID nobody knows (DSA, GOST, ...): take the
	// X25519 one and change the OID's last byte.
	unknownDER := append([]byte(nil), xDER...)
	unknownDER[8] ^= 0x7f
	ecPrivDER, _ := x509.MarshalECPrivateKey(ec)

	tests := []struct {
		name string
		pem  []byte
		want KeyReason // "" = ok
	}{
		{"ecdsa", pemOf(t, "PUBLIC KEY", ecDER), ""},
		{"ed25519", pemOf(t, "PUBLIC KEY", edDER), ""},
		{"x25519", pemOf(t, "PUBLIC KEY", xDER), KeyUnknownType},
		{"unknown algorithm", pemOf(t, "PUBLIC KEY", unknownDER), KeyUnknownType},
		{"certificate block", pemOf(t, "CERTIFICATE", ecDER), KeyUnknownType},
		{"private key", pemOf(t, "EC PRIVATE KEY", ecPrivDER), KeyUnknownType},
		{"encrypted cosign private key", pemOf(t, "ENCRYPTED SIGSTORE PRIVATE KEY", []byte("x")), KeyUnknownType},
		{"not pem", []byte("ssh-ed25519 AAAA"), KeyMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ParsePublicKey(tt.pem)
			if tt.want == "" {
				if err != nil || k.ID == "" {
					t.Fatalf("ParsePublicKey: %v", err)
				}
				return
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Reason != tt.want {
				t.Fatalf("ParsePublicKey = %v, want KeyError %s", err, tt.want)
			}
			if strings.Contains(string(tt.pem), "PRIVATE KEY") && !strings.Contains(err.Error(), "private key") {
				t.Errorf("ParsePublicKey of a private key = %v, want it to say so", err)
			}
		})
	}
}

func TestParsePrivateKeyTypes(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ec)
	pubDER, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	tests := []struct {
		name string
		pem  []byte
		want KeyReason
	}{
		{"unencrypted ec key", pemOf(t, "EC PRIVATE KEY", ecDER), KeyUnknownType},
		{"public key", pemOf(t, "PUBLIC KEY", pubDER), KeyUnknownType},
		{"openssh", pemOf(t, "OPENSSH PRIVATE KEY", []byte{1, 2, 3}), KeyUnknownType},
		{"garbage", []byte("hello"), KeyMalformed},
		{"bad ciphertext", pemOf(t, "ENCRYPTED SIGSTORE PRIVATE KEY", []byte("{}")), KeyWrongPassword},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePrivateKey(tt.pem, []byte("pw"))
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Reason != tt.want {
				t.Fatalf("ParsePrivateKey = %v, want KeyError %s", err, tt.want)
			}
		})
	}
}
