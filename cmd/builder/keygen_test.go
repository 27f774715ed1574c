package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/sign"
)

// TestKeygenExistingSaysFlag: the library refuses to overwrite a key
// (sign.ErrKeyExists, naming no flag); the builder adds its flag.
func TestKeygenExistingSaysFlag(t *testing.T) {
	t.Setenv("COSIGN_PASSWORD", "pw")
	keys := filepath.Join(t.TempDir(), "release")
	if _, stderr, err := runBuildTestCmd(t, "keygen", "--output-key-prefix", keys); err != nil {
		t.Fatalf("keygen: %v\n%s", err, stderr)
	}
	_, _, err := runBuildTestCmd(t, "keygen", "--output-key-prefix", keys)
	if !errors.Is(err, sign.ErrKeyExists) || !strings.Contains(err.Error(), keys+".key") || !strings.HasSuffix(err.Error(), "; choose another --output-key-prefix") {
		t.Fatalf("keygen over an existing key: %v, want sign.ErrKeyExists naming the file and the flag", err)
	}
}
