package timebound_test

import (
	"fmt"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

func ExampleOver() {
	renderTimeout := 2 * time.Second                           // the configured bound
	fmt.Println(timebound.Over(4*time.Second, renderTimeout))  // late, within Slack
	fmt.Println(timebound.Over(15*time.Second, renderTimeout)) // the bound was not kept
	// Output:
	// false
	// true
}

func ExampleWork() {
	var sum int
	used := timebound.Work(func() {
		for i := range 1000 {
			sum += i
		}
	})
	// A work bound is CPU time: a busy machine does not stretch it.
	fmt.Println(sum, used < time.Second)
	// Output: 499500 true
}
