package cluster

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/report"
)

func texts(fs []report.Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Check+" "+f.Message)
	}
	return strings.Join(s, "\n")
}

// TestWorkloadOverrides: an image or replica count the provider sets in
// spec.deployment is what the operator deploys, so a Deployment running it
// passes; one running anything else is still a hand edit, named against
// the override.
func TestWorkloadOverrides(t *testing.T) {
	two := int64(2)
	for _, tc := range []struct {
		name   string
		change func(s *Snapshot)
		want   []string // nil: no finding
	}{
		{"image override applied", func(s *Snapshot) {
			s.Providers[0].Deployment.Images = map[string]string{"manager": "mirror.example/capi:v1.10.1"}
			s.Deployments[0].Containers[0].Image = "mirror.example/capi:v1.10.1"
		}, nil},
		{"image override, other image running", func(s *Snapshot) {
			s.Providers[0].Deployment.Images = map[string]string{"manager": "mirror.example/capi:v1.10.1"}
			s.Deployments[0].Containers[0].Image = "mirror.example/capi:hotfix"
		}, []string{"runs image mirror.example/capi:hotfix", "spec.deployment.containers[manager].imageUrl names mirror.example/capi:v1.10.1", "edited by hand"}},
		{"image override, components image running", func(s *Snapshot) {
			s.Providers[0].Deployment.Images = map[string]string{"manager": "mirror.example/capi:v1.10.1"}
		}, []string{"imageUrl names mirror.example/capi:v1.10.1"}},
		{"override of another Deployment only", func(s *Snapshot) {
			s.Providers[0].Additional = map[string]Override{"capi-controller-manager": {Images: map[string]string{"manager": "mirror.example/capi:v1.10.1"}}}
			s.Deployments[0].Containers[0].Image = "mirror.example/capi:v1.10.1"
		}, []string{"runs image mirror.example/capi:v1.10.1", "installed components"}},
		{"replicas override applied", func(s *Snapshot) {
			s.Providers[0].Deployment.Replicas = &two
			s.Deployments[0].Replicas = &two
		}, nil},
		{"replicas override, other count", func(s *Snapshot) {
			s.Providers[0].Deployment.Replicas = &two
		}, []string{"has 1 replicas, the provider's spec.deployment.replicas says 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap, tree := snapshot(t)
			if fs := run(snap, tree); len(fs) != 0 {
				t.Fatalf("clean: %s", texts(fs))
			}
			tc.change(snap)
			fs := run(snap, tree)
			if tc.want == nil {
				if len(fs) != 0 {
					t.Fatalf("want no finding, got:\n%s", texts(fs))
				}
				return
			}
			if len(fs) != 1 || fs[0].Check != CheckWorkload {
				t.Fatalf("want one %s finding, got:\n%s", CheckWorkload, texts(fs))
			}
			for _, s := range tc.want {
				if !strings.Contains(fs[0].Message, s) {
					t.Errorf("finding does not say %q:\n%s", s, fs[0].Message)
				}
			}
		})
	}
}

// TestOverrideFor: with several Deployments the operator customizes only
// "ca*-controller-manager" ones with spec.deployment, the others with
// their spec.additionalDeployments entry.
func TestOverrideFor(t *testing.T) {
	var pj providerJSON
	if err := json.Unmarshal([]byte(`{"spec":{
		"deployment":{"replicas":3,"containers":[{"name":"manager","imageUrl":"a.example/m:1"}]},
		"additionalDeployments":{"helper":{"deployment":{"containers":[{"name":"helper","imageUrl":"a.example/h:1"}]}}}}}`), &pj); err != nil {
		t.Fatal(err)
	}
	p := pj.provider("CoreProvider")
	if o, f := overrideFor(p, "capi-controller-manager", 2); o.Images["manager"] != "a.example/m:1" || *o.Replicas != 3 || f != "spec.deployment" {
		t.Errorf("manager: %+v %s", o, f)
	}
	if o, _ := overrideFor(p, "only-one", 1); o.Images["manager"] != "a.example/m:1" {
		t.Errorf("single Deployment gets spec.deployment: %+v", o)
	}
	if o, f := overrideFor(p, "helper", 2); o.Images["helper"] != "a.example/h:1" || o.Replicas != nil || !strings.Contains(f, "additionalDeployments[helper]") {
		t.Errorf("helper: %+v %s", o, f)
	}
	if o, _ := overrideFor(p, "other", 2); o.Images != nil {
		t.Errorf("uncustomized Deployment: %+v", o)
	}
}
