package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestFromEnv(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "cpu")
	t.Setenv(Env, prefix)
	stop := FromEnv()
	stop()
	fi, err := os.Stat(fmt.Sprintf("%s.%d", prefix, os.Getpid()))
	if err != nil || fi.Size() == 0 {
		t.Fatalf("profile not written: %v", err)
	}
	if got := ChildEnv(); len(got) != 1 || got[0] != Env+"="+prefix {
		t.Fatalf("ChildEnv = %q", got)
	}
}

func TestFromEnvUnset(t *testing.T) {
	t.Setenv(Env, "")
	FromEnv()()
	if got := ChildEnv(); got != nil {
		t.Fatalf("ChildEnv = %q, want nil", got)
	}
}
