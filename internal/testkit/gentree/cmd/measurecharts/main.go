// Command measurecharts measures the charts of a tree chart by chart, as
// gentree's monorepo shape was measured, and says how the verifier's
// loader takes each one:
//
//	go run ./internal/testkit/gentree/cmd/measurecharts -root COZYSTACK/packages
//
// It prints the rows of gentree's measured table (monorepo_measured.go)
// and the statistics docs/performance.md shows beside the generated tree.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/internal/testkit/gentree/loadpath"
	"github.com/pinseal/pinseal/pkg/render"
)

func main() {
	render.MaybeRunChild()
	root := flag.String("root", "", "the tree to measure (a checkout's packages/)")
	rows := flag.Bool("rows", true, "print the rows of the measured table")
	flag.Parse()
	if *root == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: measurecharts -root DIR")
		os.Exit(2)
	}
	charts, err := gentree.MeasureCharts(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	paths := make([]string, len(charts))
	for i, c := range charts {
		paths[i] = c.Path
	}
	took, err := loadpath.Charts(context.Background(), *root, paths)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *rows {
		for _, c := range charts {
			p := took[c.Path]
			if p.Took == gentree.TookProvider {
				continue
			}
			certs, hashes := 0, 0
			if p.Took != gentree.TookSettled {
				if certs, hashes, err = loadpath.Secrets(filepath.Join(*root, filepath.FromSlash(c.Path))); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
			}
			fmt.Println(gentree.MeasuredRow(c, p, certs, hashes))
		}
	}
	fmt.Print(gentree.Summarize(charts, took))
}
