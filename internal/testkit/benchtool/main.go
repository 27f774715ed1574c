// Command benchtool is the helper of scripts/bench.sh and the example
// generator.
//
// It is the helper scripts/bench.sh and the example
// generator use:
//
//	benchtool gen [-size BYTES] [-seed N] [-provider P -prefix X -group G -kinds A,B -versions V1,V2 -image I] -o FILE
//	    write a realistic provider manifest (internal/testkit/manifestgen)
//	benchtool gzip [-n N] FILE
//	    write blob.CompressBytes(FILE) to stdout: the builder's blob, as a
//	    process, so it can be timed like `gzip -9 -n -c FILE`; -n compresses
//	    N times in the one process (as one builder run builds many packages)
//	    and writes the last result
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
	"github.com/pinseal/pinseal/pkg/blob"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "gzip":
		err = gz(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: benchtool gen [flags] -o FILE | benchtool gzip [-n N] FILE")
	os.Exit(2)
}

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	s := manifestgen.Spec{}
	var kinds, versions, out string
	fs.StringVar(&s.Provider, "provider", "infrastructure-proxmox", "clusterctl provider label")
	fs.StringVar(&s.Prefix, "prefix", "capmox", "object name prefix")
	fs.StringVar(&s.Group, "group", "infrastructure.cluster.x-k8s.io", "API group of the CRDs")
	fs.StringVar(&kinds, "kinds", "ProxmoxCluster,ProxmoxClusterTemplate,ProxmoxMachine,ProxmoxMachineTemplate", "CRD kinds, comma separated")
	fs.StringVar(&versions, "versions", "v1alpha1,v1alpha2", "API versions, comma separated, the last one stored")
	fs.StringVar(&s.Image, "image", "ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.7", "manager image")
	fs.IntVar(&s.Size, "size", 1<<20, "minimum size in bytes (0: just the kinds)")
	fs.Int64Var(&s.Seed, "seed", 1, "random seed")
	fs.StringVar(&out, "o", "", "output file (required)")
	fs.Parse(args)
	if out == "" {
		return fmt.Errorf("gen: -o FILE is required")
	}
	s.Kinds = strings.Split(kinds, ",")
	s.Versions = strings.Split(versions, ",")
	return atomicfile.WriteFile(out, manifestgen.Generate(s), 0)
}

func gz(args []string) error {
	fs := flag.NewFlagSet("gzip", flag.ExitOnError)
	n := fs.Int("n", 1, "compress this many times")
	fs.Parse(args)
	if fs.NArg() != 1 || *n < 1 {
		usage()
	}
	var out []byte
	for range *n {
		// Read each time, as a build of that many packages would.
		in, err := os.ReadFile(fs.Arg(0))
		if err != nil {
			return err
		}
		if out, err = blob.CompressBytes(in); err != nil {
			return err
		}
	}
	_, err := os.Stdout.Write(out)
	return err
}
