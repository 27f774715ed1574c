package verify

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

// TestBlobYAMLReadsTheSame: one change to a provider's YAML, made once in
// the tree (vendored YAML beside the untouched blob) and once in the
// registry copy (YAML layer beside the untouched components.gz), gives a
// blob-yaml finding with the same first difference and the same excerpt.
func TestBlobYAMLReadsTheSame(t *testing.T) {
	ctx := context.Background()
	key := remotetest.Key(t)
	root := remotetest.CopyExamples(t)
	pfx := remotetest.Layout(t)
	rel := remotetest.Publish(t, root, pfx, remotetest.Both(key))["v0.7.7-infraprovider-proxmox"]
	edit := func(b []byte) []byte {
		return bytes.Replace(b, []byte("kind: Namespace"), []byte("kind: Secret"), 1)
	}
	if bytes.Equal(edit(rel.YAML), rel.YAML) {
		t.Fatal("the fixture YAML has no Namespace to change")
	}

	// The registry copy: same tag, YAML layer changed.
	changed := rel.Release
	changed.YAML = edit(rel.YAML)
	remotetest.Finish(t, remotetest.Overwrite(t, pfx, changed), remotetest.Both(key))
	r, _, err := Ref(ctx, rel.Ref(), RefOptions{Registry: remotetest.Options, Keys: []*sign.PublicKey{key.Public()}})
	if err != nil {
		t.Fatal(err)
	}
	fromRegistry := blobYAMLFinding(t, r)

	// The tree: the vendored file the blob was built from, changed.
	edited := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Equal(b, rel.YAML) {
			edited++
			err = os.WriteFile(p, edit(b), 0o644)
		}
		return err
	})
	if err != nil || edited != 1 {
		t.Fatalf("editing the vendored YAML: %v (%d files)", err, edited)
	}
	_, r, err = Run(ctx, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fromTree := blobYAMLFinding(t, r)

	first := func(msg string) string {
		_, after, ok := strings.Cut(msg, ": first difference at ")
		if !ok {
			t.Fatalf("blob-yaml finding names no first difference: %s", msg)
		}
		return after
	}
	if first(fromTree.Message) != first(fromRegistry.Message) || fromTree.Line != fromRegistry.Line {
		t.Errorf("first difference differs:\ntree:     %s (line %d)\nregistry: %s (line %d)", fromTree.Message, fromTree.Line, fromRegistry.Message, fromRegistry.Line)
	}
	if fromTree.Detail == "" || fromTree.Detail != fromRegistry.Detail {
		t.Errorf("excerpts differ:\ntree:\n%s\nregistry:\n%s", fromTree.Detail, fromRegistry.Detail)
	}
	if !strings.Contains(fromTree.Detail, "-kind: Secret\n") || !strings.Contains(fromTree.Detail, "+kind: Namespace\n") {
		t.Errorf("excerpt does not show the change:\n%s", fromTree.Detail)
	}
}

// blobYAMLFinding is the one blob-yaml finding of r.
func blobYAMLFinding(t *testing.T, r *report.Report) report.Finding {
	t.Helper()
	var out []report.Finding
	for _, f := range r.Findings {
		if f.Check == check.BlobYAML {
			out = append(out, f)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d blob-yaml findings, want 1: %s", len(out), findings(r))
	}
	return out[0]
}
