package snapshot_test

import (
	"fmt"

	"github.com/pinseal/pinseal/internal/snapshot"
)

type node struct {
	Name string
	Next *node
}

func ExampleEncode() {
	a := &node{Name: "a"}
	a.Next = &node{Name: "b", Next: a} // a cycle
	data, err := snapshot.Encode(a)
	if err != nil {
		panic(err)
	}
	var got node
	if err := snapshot.Decode(data, &got); err != nil {
		panic(err)
	}
	fmt.Println(got.Name, got.Next.Name, got.Next.Next == &got)
	// Output: a b true
}
