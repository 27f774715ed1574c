package layout_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/layout"
)

// TestReadFile: a package file is read whole when it is inside the package
// and within the limit; a missing file, one over the limit and one a
// symlink leads out of the package are refused, naming the file.
func TestReadFile(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"files/a.yaml": "0123456789", "files/big.yaml": "01234567890"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "files", "out.yaml")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct {
		rel, want, err string
	}{
		{rel: "files/a.yaml", want: "0123456789"},
		{rel: "files/missing.yaml", err: "files/missing.yaml does not exist"},
		{rel: "files/big.yaml", err: "files/big.yaml is larger than 10 bytes"},
		{rel: "files/out.yaml", err: "read files/out.yaml"},
		{rel: "../secret.yaml", err: "read ../secret.yaml"},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			b, err := layout.ReadFile(root, tc.rel, 10)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ReadFile(%s) = %q, %v; want error containing %q", tc.rel, b, err, tc.err)
				}
				return
			}
			if err != nil || string(b) != tc.want {
				t.Fatalf("ReadFile(%s) = %q, %v; want %q", tc.rel, b, err, tc.want)
			}
		})
	}
}
