package admission

import (
	"context"
	"errors"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/pinseal/pinseal/pkg/policy"
)

var (
	trusted   = strings.Repeat("a", 40)
	untrusted = strings.Repeat("b", 40)
)

// fakeTrees renders, per source@commit, the releases listed; err fails
// every read.
type fakeTrees struct {
	trees map[string][]TreeRelease
	err   error
	reads []string
}

func (f *fakeTrees) Releases(_ context.Context, source, commit string) ([]TreeRelease, error) {
	f.reads = append(f.reads, source+"@"+commit)
	if f.err != nil {
		return nil, f.err
	}
	return f.trees[source+"@"+commit], nil
}

func trees() *fakeTrees {
	rel := TreeRelease{Identity: "core-cluster-api", Release: "v1.10.1-core", File: "capi/templates/configmap.yaml",
		Components: sum([]byte(components)), Metadata: sum([]byte(metadata))}
	return &fakeTrees{trees: map[string][]TreeRelease{
		"fleet@" + trusted: {rel},
		// The untrusted commit holds another release the policy never names.
		"fleet@" + untrusted: {rel, {Identity: "core-cluster-api", Release: "v1.10.2-core", File: rel.File,
			Components: sum([]byte(components + "# v1.10.2\n")), Metadata: sum([]byte(metadata))}},
	}}
}

func gitPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nadmission:\n  gitSources:\n  - source: fleet\n    commits: ["+trusted+"]\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGitVoucher: a git source's tree at a trusted commit vouches for the
// ConfigMap it renders; each mutation of the clean case breaks exactly the
// rule it names.
func TestGitVoucher(t *testing.T) {
	for name, tt := range map[string]struct {
		mutate func(cm *corev1.ConfigMap, tr *fakeTrees)
		rule   Rule   // "" admitted
		want   string // in the message (or the vouched release)
	}{
		"clean release at the trusted commit": {func(*corev1.ConfigMap, *fakeTrees) {}, "", "git source fleet at " + trusted},
		"components differ from the tree": {func(cm *corev1.ConfigMap, _ *fakeTrees) {
			cm.BinaryData[ComponentsKey] = gz(t, components+"# edited\n")
		}, RuleContent, "as git source fleet at aaaaaaaaaaaa renders it (capi/templates/configmap.yaml)"},
		"metadata differs from the tree": {func(cm *corev1.ConfigMap, _ *fakeTrees) {
			cm.Data[MetadataKey] = metadata + "# edited\n"
		}, RuleContent, "metadata sha256:"},
		"release only at a commit not trusted": {func(cm *corev1.ConfigMap, _ *fakeTrees) {
			cm.Name = "v1.10.2-core"
			cm.BinaryData[ComponentsKey] = gz(t, components+"# v1.10.2\n")
		}, RuleUnsigned, "no trusted commit renders release v1.10.2-core of core-cluster-api"},
		"another provider's release": {func(cm *corev1.ConfigMap, _ *fakeTrees) {
			cm.Labels[IdentityLabel] = "infrastructure-proxmox"
		}, RuleUnsigned, "no trusted commit renders release v1.10.1-core of infrastructure-proxmox"},
		"the tree cannot be fetched": {func(_ *corev1.ConfigMap, tr *fakeTrees) {
			tr.err = errors.New("git fetch: connection refused")
		}, RuleUnverified, "could not read git source fleet at aaaaaaaaaaaa: git fetch: connection refused"},
	} {
		t.Run(name, func(t *testing.T) {
			cm, tr := signedConfigMap(t), trees()
			tt.mutate(cm, tr)
			d := &Decider{Policy: gitPolicy(t), Trees: tr}
			v := d.Decide(context.Background(), request(t, admissionv1.Create, cmKind, cm, nil))
			if tt.rule == "" {
				if !v.Allowed() || !strings.Contains(v.Vouched, tt.want) {
					t.Fatalf("want admitted, vouched by %q: %+v", tt.want, v)
				}
			} else if v.Allowed() || v.Problems[0].Rule != tt.rule || !strings.Contains(v.Problems[0].Message, tt.want) {
				t.Fatalf("want rule %s with %q: %+v", tt.rule, tt.want, v)
			}
			if tt.rule == RuleUnverified && v.Key != "" {
				t.Fatalf("an unread tree's verdict is cached: key %q", v.Key)
			}
			if len(tr.reads) != 1 || tr.reads[0] != "fleet@"+trusted {
				t.Fatalf("read %v, want the trusted commit only", tr.reads)
			}
		})
	}
}

// TestGitAndRegistry: either voucher suffices; a registry that does not
// answer does not refuse what the git source vouches for.
func TestGitAndRegistry(t *testing.T) {
	pol := gitPolicy(t)
	pol.Admission.Registries = []string{prefix}
	for name, tt := range map[string]struct {
		rels  *fakeReleases
		tr    *fakeTrees
		allow bool
		rule  Rule
	}{
		"registry signed, tree holds it": {releases(), trees(), true, ""},
		"registry down, tree holds it":   {&fakeReleases{err: errors.New("down")}, trees(), true, ""},
		"registry signed, tree down":     {releases(), &fakeTrees{err: errors.New("down")}, true, ""},
		"registry empty, tree down":      {&fakeReleases{}, &fakeTrees{err: errors.New("down")}, false, RuleUnverified},
		"registry empty, tree lacks it":  {&fakeReleases{}, &fakeTrees{}, false, RuleUnsigned},
		"registry empty, tree holds it":  {&fakeReleases{}, trees(), true, ""},
		"registry signed, tree lacks it": {releases(), &fakeTrees{}, true, ""},
	} {
		t.Run(name, func(t *testing.T) {
			d := &Decider{Policy: pol, Releases: tt.rels, Trees: tt.tr}
			v := d.Decide(context.Background(), request(t, admissionv1.Create, cmKind, signedConfigMap(t), nil))
			if v.Allowed() != tt.allow || (!tt.allow && v.Problems[0].Rule != tt.rule) {
				t.Fatalf("want allowed %v rule %q: %+v", tt.allow, tt.rule, v)
			}
		})
	}
}
