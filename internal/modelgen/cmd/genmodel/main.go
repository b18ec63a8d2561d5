// Command genmodel writes a generated Murano object model pair (snapshot.json
// and incoming.json) for benchmarks and tests of objgc.
//
//	go run ./internal/modelgen/cmd/genmodel -objects 1000000 -model -out /tmp/m
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/objgc/objgc/internal/modelgen"
)

func main() {
	var cfg modelgen.Config
	flag.IntVar(&cfg.Objects, "objects", 100000, "number of objects in the snapshot")
	flag.Float64Var(&cfg.RemoveApps, "remove-apps", 0.1, "fraction of applications removed in the incoming model (0..1)")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "random seed; the same flags always give the same files")
	flag.BoolVar(&cfg.Indent, "indent", true, "pretty-print like the real models (false: compact)")
	flag.IntVar(&cfg.DanglingRefs, "dangling", 0, "references to removed apps left in the incoming model")
	out := flag.String("out", "", "output directory, created if needed (required)")
	tiny := flag.Int("tiny", 0, "instead: write OUT/model.json, an envelope with this many tiny doomed objects (modelgen.Tiny)")
	hostile := flag.String("hostile", "", "instead: write OUT/model.json, an envelope of this hostile shape (modelgen.Hostile: "+shapeNames()+") with -n as its size")
	size := flag.Int("n", 60000, "the size parameter of -hostile")
	hooks := flag.Int("hooks", 0, "instead: write OUT/model.json with this many doomed objects of class "+modelgen.HookClass+", OUT/hooks/"+modelgen.HookClass+"/destroy (a no-op hook) and OUT/ids.txt, the comparison of apply's hooks with xargs (modelgen.WriteHookBench)")
	envelope := flag.Bool("model", false, "also write OUT/model.json, the envelope of the pair (Objects: incoming, ObjectsCopy: snapshot) that objgc plan MODEL reads")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: genmodel [flags]\n\nWrites OUT/snapshot.json and OUT/incoming.json.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	start := time.Now()
	if *hostile != "" {
		s, ok := shapeNamed(*hostile)
		if !ok {
			fmt.Fprintf(os.Stderr, "genmodel: -hostile %q: not one of %s\n", *hostile, shapeNames())
			os.Exit(2)
		}
		name := filepath.Join(*out, "model.json")
		data := modelgen.Hostile(s, *size)
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "genmodel:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "genmodel:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %s, size %d, %d bytes, generated in %v\n", name, s, *size, len(data), time.Since(start).Round(time.Millisecond))
		return
	}
	if *hooks > 0 {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "genmodel:", err)
			os.Exit(1)
		}
		model, hook, ids, err := modelgen.WriteHookBench(*out, *hooks)
		if err != nil {
			fmt.Fprintln(os.Stderr, "genmodel:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d doomed objects; %s: their destroy hook; %s: their ids\n", model, *hooks, hook, ids)
		return
	}
	if *tiny > 0 {
		if err := writeTiny(*out, *tiny); err != nil {
			fmt.Fprintln(os.Stderr, "genmodel:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d tiny doomed objects, generated in %v\n", filepath.Join(*out, "model.json"), *tiny, time.Since(start).Round(time.Millisecond))
		return
	}
	snap, inc, st, err := modelgen.WriteFiles(*out, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genmodel:", err)
		os.Exit(1)
	}
	el := time.Since(start)
	fmt.Printf("%s: %d objects, %d apps, %d bytes\n", snap, st.SnapshotObjects, st.Apps, st.SnapshotBytes)
	fmt.Printf("%s: %d objects, %d apps removed (%d doomed objects), %d dangling references, %d bytes\n",
		inc, st.IncomingObjects, st.AppsRemoved, st.DoomedObjects, st.DanglingRefs, st.IncomingBytes)
	if *envelope {
		path, n, err := modelgen.WriteModel(*out, snap, inc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "genmodel:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: the envelope of both, %d bytes\n", path, n)
	}
	fmt.Printf("generated in %v\n", el.Round(time.Millisecond))
}

func writeTiny(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "model.json"))
	if err != nil {
		return err
	}
	if err := modelgen.Tiny(f, n); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// shapeNamed returns the hostile shape whose String is name.
func shapeNamed(name string) (modelgen.Shape, bool) {
	for _, s := range modelgen.Shapes {
		if s.String() == name {
			return s, true
		}
	}
	return 0, false
}

// shapeNames lists the hostile shapes' names, comma-separated.
func shapeNames() string {
	names := make([]string, len(modelgen.Shapes))
	for k, s := range modelgen.Shapes {
		names[k] = s.String()
	}
	return strings.Join(names, ", ")
}
