package server

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkPolicyFingerprint is what every POST /v1/verify {"ref"} pays
// to notice a changed policy or key file: a stat per file when nothing
// changed.
func BenchmarkPolicyFingerprint(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "release.pub"), []byte("-----BEGIN PUBLIC KEY-----\nx\n-----END PUBLIC KEY-----\n"), 0o600)
	pol := filepath.Join(dir, "policy.yaml")
	os.WriteFile(pol, []byte("apiVersion: pinseal/v1\nkind: Policy\nkeys: [release.pub]\n"), 0o600)
	w := &policyWatch{path: pol}
	if _, err := w.Fingerprint(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := w.Fingerprint(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPolicyReload is what a changed file (or SIGHUP) costs once.
func BenchmarkPolicyReload(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "release.pub"), []byte("-----BEGIN PUBLIC KEY-----\nx\n-----END PUBLIC KEY-----\n"), 0o600)
	pol := filepath.Join(dir, "policy.yaml")
	os.WriteFile(pol, []byte("apiVersion: pinseal/v1\nkind: Policy\nkeys: [release.pub]\n"), 0o600)
	w := &policyWatch{path: pol}
	for range b.N {
		if _, err := w.Reload(); err != nil {
			b.Fatal(err)
		}
	}
}
