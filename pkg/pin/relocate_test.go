package pin

import "testing"

func TestRelocationsMapUnmap(t *testing.T) {
	rs := Relocations{
		{From: "registry.k8s.io/cluster-api", To: "mirror.example:5000/capi"},
		{From: "registry.k8s.io", To: "mirror.example:5000/k8s"},
	}
	for _, c := range []struct{ ref, want string }{
		{"registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1", "mirror.example:5000/capi/cluster-api-controller:v1.10.1"},
		{"registry.k8s.io/cluster-api@sha256:aa", "mirror.example:5000/capi@sha256:aa"},
		{"registry.k8s.io/kube-rbac-proxy:v0.1", "mirror.example:5000/k8s/kube-rbac-proxy:v0.1"},
		{"registry.k8s.io/cluster-apix/y:v1", "mirror.example:5000/k8s/cluster-apix/y:v1"}, // the longer From does not cover it
		{"registry.k8s.iox/y:v1", "registry.k8s.iox/y:v1"},
		{"quay.io/x:v1", "quay.io/x:v1"},
	} {
		got, moved := rs.Map(c.ref)
		if got != c.want || moved != (c.ref != c.want) {
			t.Errorf("Map(%s) = %s, %v; want %s", c.ref, got, moved, c.want)
		}
		if back, _ := rs.Unmap(got); back != c.ref {
			t.Errorf("Unmap(%s) = %s, want %s", got, back, c.ref)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	for p, ok := range map[string]bool{
		"registry.k8s.io": true, "registry.k8s.io/cluster-api": true, "127.0.0.1:5000/mirror": true, "localhost:5000": true,
		"": false, "Registry.k8s.io": false, "registry.k8s.io/": false, "quay.io/x:v1": false, "quay.io/x@sha256:00": false,
		"oci://quay.io/x": false, "quay.io//x": false,
	} {
		if err := CheckPrefix(p); (err == nil) != ok {
			t.Errorf("CheckPrefix(%q) = %v, want ok %v", p, err, ok)
		}
	}
}
