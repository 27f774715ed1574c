package artifact

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePrefix(t *testing.T) {
	abs, _ := filepath.Abs("out/oci")
	tests := []struct {
		in      string
		want    Prefix
		repo    string // Repository("core-cluster-api").Name()
		wantErr string
	}{
		{in: "127.0.0.1:5000/capi", want: Prefix{Host: "127.0.0.1:5000", Path: "capi"}, repo: "127.0.0.1:5000/capi/core-cluster-api"},
		{in: "ghcr.io/cozystack/capi/providers/", want: Prefix{Host: "ghcr.io", Path: "cozystack/capi/providers"}, repo: "ghcr.io/cozystack/capi/providers/core-cluster-api"},
		{in: "localhost:5000", want: Prefix{Host: "localhost:5000"}, repo: "localhost:5000/core-cluster-api"},
		{in: "oci-layout:out/oci", want: Prefix{Dir: abs}, repo: "oci-layout:" + filepath.Join(abs, "core-cluster-api")},
		{in: "oci-layout:", wantErr: "names no directory"},
		{in: "http://127.0.0.1:5000/capi", wantErr: "has a URL scheme (plain HTTP is a client option"},
		{in: "127.0.0.1:5000/Capi", wantErr: "not a repository path"},
		{in: "/capi", wantErr: "names no registry"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePrefix(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParsePrefix(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePrefix(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParsePrefix(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			repo, err := got.Repository("core-cluster-api", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if repo.Name() != tt.repo {
				t.Fatalf("repository name %q, want %q", repo.Name(), tt.repo)
			}
		})
	}
}

func TestOpenReference(t *testing.T) {
	tests := []struct {
		in       string
		repo     string
		ref      string
		wantErr  string
		isLayout bool
	}{
		{in: "127.0.0.1:5000/capi/core-cluster-api:v1.10.1-core", repo: "127.0.0.1:5000/capi/core-cluster-api", ref: "v1.10.1-core"},
		{in: "127.0.0.1:5000/capi/core-cluster-api@sha256:" + strings.Repeat("a", 64), repo: "127.0.0.1:5000/capi/core-cluster-api", ref: "sha256:" + strings.Repeat("a", 64)},
		{in: "127.0.0.1:5000/capi/core-cluster-api", repo: "127.0.0.1:5000/capi/core-cluster-api", ref: ""},
		{in: "oci-layout:/tmp/x/core-cluster-api:v1.10.1-core", repo: "oci-layout:/tmp/x/core-cluster-api", ref: "v1.10.1-core", isLayout: true},
		{in: "oci-layout:/tmp/x:y/core-cluster-api", repo: "oci-layout:/tmp/x:y/core-cluster-api", ref: "", isLayout: true},
		{in: "oci-layout:/tmp/x/core-cluster-api@sha256:" + strings.Repeat("b", 64), repo: "oci-layout:/tmp/x/core-cluster-api", ref: "sha256:" + strings.Repeat("b", 64), isLayout: true},
		{in: "https://ghcr.io/x:y", wantErr: "URL scheme"},
		{in: "oci-layout:", wantErr: "names no directory"},
		{in: "host/UPPER:y", wantErr: "is not HOST"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			repo, ref, err := OpenReference(tt.in, Options{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("OpenReference(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenReference(%q): %v", tt.in, err)
			}
			if repo.Name() != tt.repo || ref != tt.ref {
				t.Fatalf("OpenReference(%q) = %q, %q; want %q, %q", tt.in, repo.Name(), ref, tt.repo, tt.ref)
			}
			if _, ok := repo.(*layoutRepo); ok != tt.isLayout {
				t.Fatalf("layout = %v, want %v", ok, tt.isLayout)
			}
		})
	}
}
