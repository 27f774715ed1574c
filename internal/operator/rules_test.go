package operator

import (
	"slices"
	"strings"
	"testing"
)

// clean is a provider as a chart writes it: the tag is spec.version.
var clean = Spec{Kind: "ControlPlaneProvider", Name: "kamaji", Version: "v0.19.0-cozystack.0",
	OCI: "registry.example.com/capi/control-plane-kamaji:v0.19.0-cozystack.0"}

// TestCheckMutations: the clean provider breaks no rule; each mutation
// breaks exactly its rule, and every rule has a mutation.
func TestCheckMutations(t *testing.T) {
	if got := Check(clean); len(got) != 0 {
		t.Fatalf("clean provider: %+v", got)
	}
	noTag := clean
	noTag.OCI = "registry.example.com/capi/control-plane-kamaji"
	if got := Check(noTag); len(got) != 0 {
		t.Fatalf("clean provider without a tag: %+v", got)
	}
	tests := []struct {
		rule   Rule
		mutate func(*Spec)
		want   string // in the message
	}{
		{RuleExclusive, func(s *Spec) { s.Selector = true }, "oci and selector"},
		{RuleExclusive, func(s *Spec) { s.URL = "https://github.com/clastix/cluster-api-control-plane-provider-kamaji/releases" }, "oci and url"},
		{RuleScheme, func(s *Spec) { s.OCI = "https://" + s.OCI }, "no scheme but http://"},
		{RuleUnreadable, func(s *Spec) { s.OCI = strings.Replace(s.OCI, "capi", "CAPI", 1) }, "lowercase"},
		{RuleUnreadable, func(s *Spec) { s.OCI = strings.Replace(s.OCI, "/capi/", "//", 1) }, "cannot parse"},
		{RuleDigest, func(s *Spec) { s.OCI = "registry.example.com/capi/control-plane-kamaji@" + digest }, "splits the value"},
		{RuleDigest, func(s *Spec) {
			s.OCI = "registry.example.com:5000/capi/control-plane-kamaji:v0.19.0-cozystack.0@" + digest
		}, "by digest"},
		{RuleMisread, func(s *Spec) {
			s.OCI = "registry.example.com/capi/control-plane-kamaji:v0.19.0:v0.19.0-cozystack.0"
		}, `drops "v0.19.0"`},
		{RuleTag, func(s *Spec) { s.OCI += "+1" }, "not a tag"},
		{RuleTag, func(s *Spec) { s.OCI = "registry.example.com/capi/control-plane-kamaji:" }, "ends in ':'"},
		{RuleTagVersion, func(s *Spec) { s.Version = "v0.19.0-cozystack.1" }, `fetches tag "v0.19.0-cozystack.0" but installs it as release "v0.19.0-cozystack.1"`},
		{RuleVersion, func(s *Spec) { s.Version = ""; s.OCI = noTag.OCI }, "no tag and the provider has no spec.version"},
		{RuleVersion, func(s *Spec) { s.Version = "" }, "no spec.version"},
		{RuleVersion, func(s *Spec) { s.Version = "latest"; s.OCI = noTag.OCI }, "not a semantic version"},
		{RuleReleaseName, func(s *Spec) { s.Version = "v0.19.0-RC.1"; s.OCI = noTag.OCI }, `"control-plane-kamaji-v0.19.0-RC.1"`},
		{RuleReleaseName, func(s *Spec) { s.Version = "v0.19.0-" + strings.Repeat("a", 60); s.OCI = noTag.OCI }, "not a label value"},
		{RuleReleaseName, func(s *Spec) {
			s.Name = strings.Repeat("k", 230)
			s.OCI = noTag.OCI
		}, "not an object name"},
		{RulePortNoTag, func(s *Spec) { s.OCI = "registry.example.com:5000/capi/control-plane-kamaji" }, `read "5000/capi/control-plane-kamaji" as the tag`},
	}
	covered := map[Rule]bool{RulePreloaded: true} // TestPreloaded; the ConfigMaps are the tree's
	for _, tc := range tests {
		s := clean
		tc.mutate(&s)
		got := Check(s)
		var rules []Rule
		for _, p := range got {
			rules = append(rules, p.Rule)
		}
		if len(got) != 1 || got[0].Rule != tc.rule || !strings.Contains(got[0].Message, tc.want) || got[0].Hint == "" || got[0].Source == "" {
			t.Errorf("%s: oci %q version %q: rules %v, want only %s with %q:\n%+v", tc.rule, s.OCI, s.Version, rules, tc.rule, tc.want, got)
			continue
		}
		if got[0].Warning != (tc.rule == RulePortNoTag) {
			t.Errorf("%s: Warning %v", tc.rule, got[0].Warning)
		}
		covered[tc.rule] = true
	}
	for _, r := range Rules() {
		if !covered[r] {
			t.Errorf("rule %s has no mutation", r)
		}
	}
	if len(Check(Spec{Kind: "CoreProvider", Name: "cluster-api", Version: "v1.10.1"})) != 0 {
		t.Error("a provider without fetchConfig.oci breaks an OCI rule")
	}
}

// TestCheckOperatorInputs: the providers of the operator's own OCI tests,
// as they are written there. They install, but name their content by a
// tag other than spec.version, which pinseal holds an error.
func TestCheckOperatorInputs(t *testing.T) {
	tests := []struct {
		where string
		spec  Spec
		rules []Rule
	}{
		// test/e2e/minimal_configuration_test.go, "custom provider with OCI override".
		{"e2e custom provider", Spec{Kind: "InfrastructureProvider", Name: "docker", Version: "v0.0.1", OCI: "ttl.sh/cluster-api-operator-custom:5m"}, []Rule{RuleTagVersion}},
		// Its upgrade test moves spec.version to v0.0.2 and re-pushes the same tag.
		{"e2e upgrade", Spec{Kind: "InfrastructureProvider", Name: "docker", Version: "v0.0.2", OCI: "ttl.sh/cluster-api-operator-upgrade:5m"}, []Rule{RuleTagVersion}},
		// cmd/plugin/cmd/preload_test.go, "builtin core provider with OCI override".
		{"preload core", Spec{Kind: "CoreProvider", Name: "cluster-api", Version: "v1.10.0-beta.0", OCI: "ttl.sh/cluster-api-operator-manifests:1m"}, []Rule{RuleTagVersion}},
		// The same artifact with its tag dropped: what pinseal asks for.
		{"preload core, tag from spec.version", Spec{Kind: "CoreProvider", Name: "cluster-api", Version: "v1.10.0-beta.0", OCI: "ttl.sh/cluster-api-operator-manifests"}, nil},
		// internal/controller/preflight_checks_test.go, "wrong version,
		// preflight check failed": spec.version "one".
		{"preflight wrong version", Spec{Kind: "InfrastructureProvider", Name: "docker", Version: "one", OCI: "ttl.sh/capd"}, []Rule{RuleVersion}},
		// test/e2e/compressed_manifests_test.go stores infrastructure-oci-v0.12.0.
		{"e2e compressed", Spec{Kind: "InfrastructureProvider", Name: "oci", Version: "v0.12.0", OCI: "ttl.sh/capoci:v0.12.0"}, nil},
	}
	for _, tc := range tests {
		var rules []Rule
		for _, p := range Check(tc.spec) {
			rules = append(rules, p.Rule)
		}
		if !slices.Equal(rules, tc.rules) {
			t.Errorf("%s: rules %v, want %v", tc.where, rules, tc.rules)
		}
	}
}

func TestPreloaded(t *testing.T) {
	if Preloaded("v1", nil) != nil {
		t.Error("no ConfigMap, a problem")
	}
	one := Preloaded("v1", []string{`"infrastructure-oci-v1" (templates/cm.yaml:1)`})
	two := Preloaded("v1", []string{`"a"`, `"b"`})
	if one == nil || one.Rule != RulePreloaded || !one.Warning || !strings.Contains(one.Message, "never fetches") {
		t.Errorf("one: %+v", one)
	}
	if two == nil || two.Rule != RulePreloaded || two.Warning || !strings.Contains(two.Message, "more than one") {
		t.Errorf("two: %+v", two)
	}
	l := StoreLabels("infrastructure", "oci", "v0.12.0")
	if len(l) != 5 || l[LabelSource] != "oci" || l[LabelManaged] != "true" || l[LabelVersion] != "v0.12.0" {
		t.Errorf("store labels %v", l)
	}
}
