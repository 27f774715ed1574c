package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
)

func main() {
	if len(os.Args) > 2 {
		f, _ := os.Create(os.Args[2])
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	st := time.Now()
	t, err := load.Tree(context.Background(), os.Args[1], load.Options{Namespace: ""})
	if err != nil {
		panic(err)
	}
	lt := time.Since(st)
	n := 0
	for _, c := range check.Builtin() {
		for _, f := range c.Run(t) {
			n++
			if n < 30 {
				fmt.Printf("%s %s %s: %s\n", f.Check, f.Package, f.Provider, f.Message)
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println("packages", len(t.Packages), "findings", n, "load", lt, "total", time.Since(st), "core", t.Core != nil, "totalalloc MiB", ms.TotalAlloc>>20, "sys MiB", ms.Sys>>20)
}
