package operator_test

import (
	"fmt"

	"github.com/pinseal/pinseal/internal/operator"
)

// Served reads Cluster API's contract policy (operator.Contracts): a v1.11
// core implements v1beta2 and still serves v1beta1 providers; from v1.16
// it serves v1beta2 alone.
func ExampleServed() {
	for _, core := range []string{"v1.10.1", "v1.11.1", "v1.16.0"} {
		fmt.Println(core, operator.CoreContract(core), operator.Served(core, ""))
	}
	// Output:
	// v1.10.1 v1beta1 [v1beta1]
	// v1.11.1 v1beta2 [v1beta2 v1beta1]
	// v1.16.0 v1beta2 [v1beta2]
}
