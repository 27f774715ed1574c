package loadpath_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pinseal/pinseal/internal/testkit/gentree/loadpath"
)

// A chart whose templates hold no provider marker is settled from its
// templates, never rendered.
func ExampleCharts() {
	root, err := os.MkdirTemp("", "loadpath-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	chart := filepath.Join(root, "apps", "web")
	_ = os.MkdirAll(filepath.Join(chart, "templates"), 0o755)
	_ = os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: web\nversion: 0.1.0\n"), 0o644)
	_ = os.WriteFile(filepath.Join(chart, "templates", "service.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n"), 0o644)
	took, err := loadpath.Charts(context.Background(), root, []string{"apps/web"})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := took["apps/web"]
	fmt.Println(p.Took, p.Child)
	// Output: settled false
}
