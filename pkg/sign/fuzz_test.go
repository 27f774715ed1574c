package sign

import (
	"context"
	"strings"

	"bytes"
	"github.com/opencontainers/go-digest"
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

// FuzzParseBundle: any bytes stored as a Sigstore bundle layer either parse
// into a bundle or are an error; verifying what parses never panics.
func FuzzParseBundle(f *testing.F) {
	k := testKey(f)
	good, err := keyBundle(context.Background(), k, []byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":"`+strings.Repeat("a", 64)+`"}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{}}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
	f.Add([]byte(`{}`))
	subject := digest.Digest("sha256:" + strings.Repeat("a", 64))
	trust := Trust{Keys: []*PublicKey{k.Public()}}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, version, err := parseBundle(data)
		if err != nil {
			return
		}
		if version == "" {
			t.Fatalf("parsed a bundle without a version")
		}
		checkBundle(storedBundle{b: b, version: version}, subject, trust)
	})
}
