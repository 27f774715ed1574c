package operator

import (
	"slices"
	"strings"
	"testing"
)

func TestDefaultDownload(t *testing.T) {
	d, ok := DefaultDownload("CoreProvider", "cluster-api", "v1.10.1")
	if !ok || d.Problem != "" {
		t.Fatalf("cluster-api core: %+v %v", d, ok)
	}
	want := []string{
		"https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/core-components.yaml",
		"https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/metadata.yaml",
	}
	if !slices.Equal(d.URLs, want) {
		t.Errorf("URLs = %q, want %q", d.URLs, want)
	}
	d, _ = DefaultDownload("InfrastructureProvider", "docker", "v1.12.0")
	if !strings.HasSuffix(d.URLs[0], "/releases/download/v1.12.0/infrastructure-components-development.yaml") {
		t.Errorf("docker: %q", d.URLs)
	}
	d, _ = DefaultDownload("ControlPlaneProvider", "kamaji", "")
	if d.URLs != nil || d.Release != "" || d.Problem != "" {
		t.Errorf("no version: the latest release at install time, no URLs: %+v", d)
	}
	if d, ok := DefaultDownload("ControlPlaneProvider", "kamaji-custom", "v1.0.0"); ok || !strings.Contains(d.Problem, "UnknownProvider") {
		t.Errorf("unknown provider: %+v %v", d, ok)
	}
	// The list as cluster-api v1.12.10 has it: 61 providers.
	if n := len(clusterctlProviders); n != 61 {
		t.Errorf("%d built-in providers, cluster-api v1.12.10 lists 61", n)
	}
	if _, ok := DefaultDownload("BootstrapProvider", "cluster-api", "v1.0.0"); ok {
		t.Error("the list is keyed by type and name: cluster-api is only a core provider")
	}
}

func TestURLDownload(t *testing.T) {
	for _, c := range []struct {
		url, version string
		urls         []string
		problem      string
	}{
		{"https://github.com/o/r/releases/latest/bootstrap-components.yaml", "v0.6.12",
			[]string{"https://github.com/o/r/releases/download/v0.6.12/bootstrap-components.yaml", "https://github.com/o/r/releases/download/v0.6.12/metadata.yaml"}, ""},
		{"https://github.com/o/r/releases/v0.1.0/infrastructure-components.yaml", "",
			[]string{"https://github.com/o/r/releases/download/v0.1.0/infrastructure-components.yaml", "https://github.com/o/r/releases/download/v0.1.0/metadata.yaml"}, ""},
		{"https://gitlab.example.com/api/v4/projects/1/packages/generic/p/v1/c.yaml", "v1.0.0", nil, ""},
		{"http://github.com/o/r/releases/latest/c.yaml", "v1", nil, "https://"},
		{"https://example.com/c.yaml", "v1", nil, "GitLab package URLs"},
		{"https://gitlab.example.com/o/r/releases/v1/c.yaml", "v1", nil, "GitLab package URLs"},
		{"https://github.com/o/r/c.yaml", "v1", nil, "not a GitHub release URL"},
	} {
		d := URLDownload(c.url, c.version)
		if !slices.Equal(d.URLs, c.urls) || (c.problem == "") != (d.Problem == "") || !strings.Contains(d.Problem, c.problem) {
			t.Errorf("URLDownload(%q, %q) = %+v, want URLs %q, problem containing %q", c.url, c.version, d, c.urls, c.problem)
		}
	}
}
