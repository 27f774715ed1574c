package server

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPathScrubber(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o700)
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	p := newPathScrubber(link)
	for in, want := range map[string]string{
		`{"error":"open ` + link + `/uploads/verify-123/pkg/x.yaml: denied"}`:     `{"error":"open upload/pkg/x.yaml: denied"}`,
		`{"error":"open ` + real + `/uploads/verify-9.upload: no space"}`:         `{"error":"open upload: no space"}`,
		`{"status":"not ready: database: ` + real + `/pinseal.db: locked"}`:       `{"status":"not ready: database: [dataDir]/pinseal.db: locked"}`,
		`{"error":"nothing to hide in /srv/other"}`:                               `{"error":"nothing to hide in /srv/other"}`,
		`{"root":"` + link + `/git/src/abc","x":"` + real + `/uploads/verify-1"}`: `{"root":"[dataDir]/git/src/abc","x":"upload"}`,
	} {
		if got := string(p.scrub([]byte(in))); got != want {
			t.Errorf("scrub(%s)\n = %s\nwant %s", in, got, want)
		}
	}
}
