package vendor_test

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/pinseal/pinseal/internal/app/vendor"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// Vendor a CoreProvider that has no spec.fetchConfig (the chart switches
// it to a mirror's artifact when its registry value is set) into a
// ConfigMap package: the operator's default download, here from a
// stand-in of GitHub on 127.0.0.1 reached through a mirror, pinned by
// the asset digests the releases API gives.
func Example() {
	root, err := os.MkdirTemp("", "vendor-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	if err := fixture.WriteFetched(root); err != nil {
		panic(err)
	}
	core := fixture.FetchedProviders[0]
	host := releaseapi.Start()
	defer host.Close()
	comp, meta := fixture.FetchedRelease(core)
	host.Add(core.Repo, releaseapi.Release{Tag: core.Version, Files: []releaseapi.File{{Name: core.Asset, Data: comp}, {Name: "metadata.yaml", Data: meta}}})
	mirror, err := fetch.ParseMirror(host.Mirror())
	if err != nil {
		panic(err)
	}

	dir := fixture.FetchedChartDir(root, core.Chart)
	res, err := vendor.Vendor(context.Background(), dir, vendor.Options{
		APIURL:     host.URL(),
		Mirrors:    []fetch.Mirror{mirror},
		AllowHosts: []string{host.ObjectsHost()},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Provider, res.Source, res.Release, "->", res.Form, res.ConfigMap)
	for _, d := range res.Digests {
		fmt.Println("pinned", path.Base(d.URL), "from", d.From)
	}
	for _, f := range res.Files {
		fmt.Println("wrote", f)
	}
	tmpl, err := os.ReadFile(filepath.Join(dir, "templates", "providers.yaml"))
	if err != nil {
		panic(err)
	}
	fmt.Print(string(tmpl))
	// Output:
	// CoreProvider/cluster-api default v1.10.1 -> configmap v1.10.1-core-cluster-api
	// pinned core-components.yaml from asset-digest
	// pinned metadata.yaml from asset-digest
	// wrote files/core-cluster-api-components.yaml
	// wrote files/core-cluster-api-metadata.yaml
	// wrote files/core-cluster-api-components.gz
	// wrote templates/core-cluster-api-configmap.yaml
	// wrote pin.yaml
	// wrote templates/providers.yaml
	// ---
	// apiVersion: operator.cluster.x-k8s.io/v1alpha2
	// kind: CoreProvider
	// metadata:
	//   name: cluster-api
	//   namespace: {{ .Release.Namespace }}
	// spec:
	//   version: v1.10.1
	//   fetchConfig:
	//     selector:
	//       matchLabels:
	//         vendor.pinseal.dev/provider: core-cluster-api
}
