package sign

import (
	"bytes"
	"testing"
)

// FuzzParseKeys: key files from anywhere either load or fail with a
// *KeyError; they never panic.
func FuzzParseKeys(f *testing.F) {
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEyy3NHw0/gEx8TMK3bPY1Ag47ucMK\nQ9GSgl2XdWyX0jl6eF3bDm3mSPjgsNN64PXaicgH3SGzr8dFPHcsMnj5XQ==\n-----END PUBLIC KEY-----\n"))
	f.Add([]byte("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\neyJrZGYiOnt9fQ==\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n"))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("not a key"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if k, err := ParsePublicKey(b); err == nil && k.ID == "" {
			t.Fatal("a parsed public key has no ID")
		} else if err != nil {
			if _, ok := err.(*KeyError); !ok {
				t.Fatalf("ParsePublicKey error %T is not a *KeyError: %v", err, err)
			}
		}
		// Skip what would reach scrypt (a second per try): the fuzzer looks
		// at the PEM handling, not at cosign's decryption.
		if !bytes.Contains(b, []byte("ENCRYPTED")) {
			if _, err := ParsePrivateKey(b, nil); err != nil {
				if _, ok := err.(*KeyError); !ok {
					t.Fatalf("ParsePrivateKey error %T is not a *KeyError: %v", err, err)
				}
			}
		}
	})
}
