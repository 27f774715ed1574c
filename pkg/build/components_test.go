package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// TestBuildComponentsField: a talos-style components file name
// (files/bootstrap-components-talos.yaml) is the blob's source when
// pin.yaml's components field names it, or when it is the provider's only
// source that is not its metadata (the package layout's rule); when two
// sources could be, the build says to name it.
func TestBuildComponentsField(t *testing.T) {
	up := t.TempDir()
	comp := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cabpt-system\n")
	meta := []byte("kind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 6\n  contract: v1beta1\n")
	os.WriteFile(filepath.Join(up, "bootstrap-components.yaml"), comp, 0o644)
	os.WriteFile(filepath.Join(up, "metadata.yaml"), meta, 0o644)
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	pinYAML := fmt.Sprintf(`providers:
- kind: BootstrapProvider
  name: talos
  version: v0.6.12
  release: v0.6.12-bootstrap-talos
  sources:
  - url: file://%[1]s/bootstrap-components.yaml
    sha256: %[2]s
    to: files/bootstrap-components-talos.yaml
  - url: file://%[1]s/metadata.yaml
    sha256: %[3]s
    to: files/metadata-talos.yaml
  COMPONENTS
  blob: files/components-talos.gz
`, filepath.ToSlash(up), sum(comp), sum(meta))
	// A second source that could be the components file too.
	os.WriteFile(filepath.Join(up, "crds.yaml"), comp, 0o644)
	second := fmt.Sprintf("  - url: file://%s/crds.yaml\n    sha256: %s\n    to: files/crds-talos.yaml\n", filepath.ToSlash(up), sum(comp))
	ambiguous := strings.Replace(strings.Replace(pinYAML, "  COMPONENTS\n", "", 1), "  blob:", second+"  blob:", 1)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pin.yaml"), []byte(ambiguous), 0o644)
	if _, err := Build(context.Background(), dir, Options{Fetcher: &fetch.Fetcher{}}); err == nil || !strings.Contains(err.Error(), "components") {
		t.Errorf("two candidate sources, no components field: err = %v", err)
	}
	for _, withField := range []bool{false, true} {
		dir := t.TempDir()
		y := strings.Replace(pinYAML, "  COMPONENTS\n", "", 1)
		if withField {
			y = strings.Replace(pinYAML, "COMPONENTS", "components: files/bootstrap-components-talos.yaml", 1)
		}
		os.WriteFile(filepath.Join(dir, "pin.yaml"), []byte(y), 0o644)
		if _, err := Build(context.Background(), dir, Options{Fetcher: &fetch.Fetcher{}}); err != nil {
			t.Fatalf("components field %v: %v", withField, err)
		}
		gz, err := os.ReadFile(filepath.Join(dir, "files", "components-talos.gz"))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := blob.CompressBytes(comp)
		if !bytes.Equal(gz, want) {
			t.Error("the blob is not the components file compressed")
		}
	}
}
