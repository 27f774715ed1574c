package remote

import "testing"

func TestAllowed(t *testing.T) {
	allow := []string{"ghcr.io/acme", "127.0.0.1:5000", "Registry.Example.com/capi/"}
	tests := map[string]bool{
		"ghcr.io/acme/core":                 true,
		"ghcr.io/acme":                      true,
		"ghcr.io/acmeevil/core":             false,
		"ghcr.io/other/core":                false,
		"127.0.0.1:5000/anything/below":     true,
		"127.0.0.1:5001/capi/core":          false,
		"registry.example.com/capi/core":    true,
		"registry.example.com/capital/core": false,
		"evil.example/ghcr.io/acme/core":    false,
		"":                                  false,
		"/capi/core":                        false,
	}
	for repo, want := range tests {
		if got := Allowed(repo, allow); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", repo, got, want)
		}
	}
	if Allowed("ghcr.io/acme/core", nil) {
		t.Error("allowed with an empty allowlist")
	}
}
