package pin_test

import (
	"fmt"

	"github.com/pinseal/pinseal/pkg/pin"
)

// A pin.yaml names each provider's release and the SHA-256 of every
// upstream file it vendors.
func ExampleParse() {
	data := []byte(`providers:
- kind: IPAMProvider
  name: in-cluster
  version: v1.0.2
  release: v1.0.2-ipam
  sources:
  - url: https://github.com/kubernetes-sigs/cluster-api-ipam-provider-in-cluster/releases/download/v1.0.2/ipam-components.yaml
    sha256: 95a8078ebb5b4f663fb64d0c3b7e635d54a4fe36e3cb7f55fdcac1a15471002f
    to: files/ipam-components.yaml
  blob: files/components.gz
`)
	f, err := pin.Parse(data, "pin.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	p := f.Providers[0]
	fmt.Println(p.Kind+"/"+p.Name, p.Release, p.Sources[0].To)
	// Output: IPAMProvider/in-cluster v1.0.2-ipam files/ipam-components.yaml
}
