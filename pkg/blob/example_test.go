package blob_test

import (
	"fmt"

	"github.com/pinseal/pinseal/pkg/blob"
)

// The reproducible blob of a components YAML: its header embeds no name
// and no time, so the same YAML always gives the same bytes.
func ExampleCompressBytes() {
	yaml := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n")
	gz, err := blob.CompressBytes(yaml)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := blob.ReadHeader(gz)
	if err != nil {
		fmt.Println(err)
		return
	}
	again, _ := blob.CompressBytes(yaml)
	fmt.Println("name:", h.HasName, "mtime:", h.MTime, "same bytes again:", string(gz) == string(again))
	// Output: name: false mtime: 0 same bytes again: true
}
