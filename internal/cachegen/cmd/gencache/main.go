// Command gencache writes a package cache in murano-engine's layout for
// benchmarks of objgc cache prune (package cachegen), or, with -floor,
// removes its outdated half the way the benchmark's floor does.
//
//	go run ./internal/cachegen/cmd/gencache -n 10000 /tmp/c
//	gencache -floor -n 10000 /tmp/c
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/objgc/objgc/internal/cachegen"
)

func main() {
	n := flag.Int("n", 10000, "number of packages (half of them outdated)")
	floor := flag.Bool("floor", false, "instead: remove the outdated half of the cache DIR that gencache -n N wrote, as the floor under objgc cache prune --outdated")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: gencache [-n N] [-floor] DIR\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	f := cachegen.Write
	if *floor {
		f = cachegen.Floor
	}
	if err := f(flag.Arg(0), *n); err != nil {
		fmt.Fprintln(os.Stderr, "gencache:", err)
		os.Exit(1)
	}
}
