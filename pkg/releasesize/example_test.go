package releasesize_test

import (
	"fmt"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/pinseal/pinseal/pkg/releasesize"
)

// The release of a small chart lies far below the release-size check's
// lines, so its size is a bound, found without compressing anything.
func ExampleInput_Size() {
	in := &releasesize.Input{
		Chart: &chart.Chart{
			Metadata:  &chart.Metadata{Name: "demo", Version: "0.1.0", APIVersion: "v2"},
			Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n")}},
		},
		Name: "demo", Namespace: "default",
	}
	in.AddManifest("demo/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo")
	size := in.Size()
	fmt.Println(size.Exact, size.Bytes < 10<<10, len(size.Files))
	// Output: false true 1
}
