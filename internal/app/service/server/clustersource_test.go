package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterSourceConfig: a cluster source takes a kubeconfig file or
// inCluster, and a tree that is a path source or a directory.
func TestClusterSourceConfig(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "tree"), 0o755)
	os.WriteFile(filepath.Join(dir, "kc"), []byte("apiVersion: v1\nkind: Config\n"), 0o600)
	base := "dataDir: data\nsources:\n- name: tree\n  path: tree\n- name: g\n  git: {url: \"https://h/r\"}\n- name: prod\n"
	for _, tt := range []struct {
		name, yaml, wantErr string
	}{
		{"kubeconfig and tree source", base + "  cluster: {kubeconfig: kc, tree: tree}\n", ""},
		{"in cluster, tree directory", base + "  cluster: {inCluster: true, tree: tree, context: x}\n", ""},
		{"no tree", base + "  cluster: {kubeconfig: kc}\n", ""},
		{"both", base + "  cluster: {kubeconfig: kc, inCluster: true}\n", "not both"},
		{"neither", base + "  cluster: {context: x}\n", "give kubeconfig"},
		{"missing kubeconfig", base + "  cluster: {kubeconfig: nope}\n", "sources[2].cluster.kubeconfig"},
		{"tree a git source", base + "  cluster: {kubeconfig: kc, tree: g}\n", ""},
		{"tree a cluster source", base + "  cluster: {kubeconfig: kc}\n- name: other\n  cluster: {kubeconfig: kc, tree: prod}\n", "not a path or git source"},
		{"tree missing", base + "  cluster: {kubeconfig: kc, tree: nope}\n", "neither the name of a path or git source nor a directory"},
		{"with a path", base + "  path: tree\n  cluster: {kubeconfig: kc}\n", "takes no path"},
		{"token inline", base + "  cluster: {kubeconfig: kc, token: x}\n", "unknown field"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, "serve.yaml")
			os.WriteFile(p, []byte(tt.yaml), 0o600)
			c, err := LoadConfig(p)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				cl := c.Sources[2].Cluster
				if cl.Kubeconfig != "" && cl.Kubeconfig != filepath.Join(dir, "kc") {
					t.Errorf("kubeconfig %q not relative to the config file", cl.Kubeconfig)
				}
				if tree := c.clusterTree(cl.Tree); cl.Tree != "" && cl.Tree != "g" && tree != filepath.Join(dir, "tree") {
					t.Errorf("tree %q is %q, want the tree directory", cl.Tree, tree)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}
