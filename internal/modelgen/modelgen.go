// Package modelgen generates large, deterministic object models in OpenStack
// Murano's format, for benchmarks and tests of objgc.
//
// Generate writes two bare object trees: the snapshot (the previous
// deployment) and the incoming model (the same tree with a fraction of the
// applications removed). Both are streamed: memory stays bounded by a few
// bytes per application whatever the size of the model.
//
// The shape follows the real models in Murano's API reference and unit tests:
// an io.murano.Environment with default and per-region networks, a regions
// map with a bare-id alias, and an "applications" array of apps that own
// instances, which own security groups, ports and volumes. Apps reference
// other apps by bare id and subscribe to destruction events through
// "dependencies": {"onDestruction": [...]} in object headers. See
// docs/modelgen.md.
package modelgen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Config describes the model to generate.
type Config struct {
	// Objects is the number of objects in the snapshot. The count is exact
	// when Objects >= 10; smaller values give the fixed environment part
	// (6 objects) plus whatever whole apps fit.
	Objects int
	// RemoveApps is the fraction (0..1) of applications removed in the
	// incoming model; the number removed is round(RemoveApps * apps).
	RemoveApps float64
	// Seed selects the model; the same Config always yields the same bytes.
	Seed uint64
	// Indent pretty-prints with two-space indentation like the real models;
	// otherwise the output is compact.
	Indent bool
	// DanglingRefs is how many references to removed apps are left in
	// surviving objects of the incoming model. All other references and
	// subscriptions to removed apps are dropped from survivors.
	DanglingRefs int
}

// Stats describes what Generate wrote.
type Stats struct {
	SnapshotObjects int   // objects in the snapshot
	IncomingObjects int   // objects in the incoming model
	Apps            int   // applications in the snapshot
	AppsRemoved     int   // applications missing from the incoming model
	DoomedObjects   int   // objects inside removed apps (apps included)
	DanglingRefs    int   // references to removed apps left in the incoming model
	SnapshotBytes   int64 // bytes written to the snapshot writer
	IncomingBytes   int64 // bytes written to the incoming writer
}

// Fixed part of every model: environment, its default network, and two
// regions each with a network.
const (
	ordEnv = iota
	ordEnvNet
	ordRegion1
	ordRegion1Net
	ordRegion2
	ordRegion2Net
	fixedObjects
)

// Application shape limits.
const (
	maxInstances = 3
	maxVolumes   = 3
	maxPorts     = 2
	minAppSize   = 1 + 3                                      // app + instance + security group + port
	maxAppSize   = 1 + maxInstances*(1+1+maxPorts+maxVolumes) // 22
	refWindow    = 64                                         // apps reference apps at most this far back
)

// appPlan is all the generator remembers about one application between the
// planning sweep and the writing passes.
type appPlan struct {
	kind    uint8
	removed bool
	nInst   uint8
	vols    [maxInstances]uint8
	ports   [maxInstances]uint8
}

func (a *appPlan) size() int {
	n := 1
	for i := 0; i < int(a.nInst); i++ {
		n += 2 + int(a.vols[i]) + int(a.ports[i])
	}
	return n
}

// fit grows or shrinks the shape to exactly t objects (minAppSize <= t <=
// maxAppSize).
func (a *appPlan) fit(t int) {
	for a.size() > t {
		switch {
		case a.shrink(a.vols[:a.nInst], 0):
		case a.shrink(a.ports[:a.nInst], 1):
		default:
			a.nInst--
			a.vols[a.nInst], a.ports[a.nInst] = 0, 0
		}
	}
	for a.size() < t {
		d := t - a.size()
		switch {
		case d >= 3 && a.nInst < maxInstances:
			a.addInstance()
		case grow(a.vols[:a.nInst], maxVolumes):
		case grow(a.ports[:a.nInst], maxPorts):
		default:
			// 1 or 2 short, every instance full, fewer than maxInstances
			// (maxAppSize is never short): trade 3-d volumes for an
			// instance (3 objects).
			for k := 0; k < 3-d; k++ {
				a.shrink(a.vols[:a.nInst], 0)
			}
			a.addInstance()
		}
	}
}

// addInstance adds an instance with a security group and one port.
func (a *appPlan) addInstance() {
	a.vols[a.nInst], a.ports[a.nInst] = 0, 1
	a.nInst++
}

// shrink decrements the last counter above floor.
func (a *appPlan) shrink(c []uint8, floor uint8) bool {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i] > floor {
			c[i]--
			return true
		}
	}
	return false
}

func grow(c []uint8, limit uint8) bool {
	for i := range c {
		if c[i] < limit {
			c[i]++
			return true
		}
	}
	return false
}

// RNG streams: every app draws from its own PCG stream so that both passes
// (and the planning sweep) reproduce the same values without remembering
// them.
const (
	streamShape   = 0x5348415045000000 // kind and shape of app i
	streamRefs    = 0x5245465300000000 // references, then property values of app i
	streamFixed   = 0x4649584544000000 // environment, networks, regions
	streamRemoval = 0x52454d4f56450000 // which apps are removed
)

type plan struct {
	cfg      Config
	salt     uint64 // id salt derived from the seed
	apps     []appPlan
	removed  []int32 // indices of removed apps, ascending
	nRemoved int
	// dangling references: survivors keep their first naturalKeep natural
	// references to removed apps (document order), and the first survivors
	// get forced extra ones when there are not enough natural ones.
	naturalKeep int
	forced      int
	survivors   int
	stats       Stats
}

func newPlan(cfg Config) (*plan, error) {
	switch {
	case cfg.Objects < 0:
		return nil, errors.New("modelgen: Objects must not be negative")
	case math.IsNaN(cfg.RemoveApps) || cfg.RemoveApps < 0 || cfg.RemoveApps > 1:
		return nil, fmt.Errorf("modelgen: RemoveApps %v is not in [0, 1]", cfg.RemoveApps)
	case cfg.DanglingRefs < 0:
		return nil, errors.New("modelgen: DanglingRefs must not be negative")
	}
	p := &plan{cfg: cfg, salt: mix64(cfg.Seed ^ 0x243f6a8885a308d3)}
	pcg := rand.NewPCG(0, 0)
	rng := rand.New(pcg)

	// Sweep 1: kinds and shapes, fitted so that the total is exact.
	budget := cfg.Objects - fixedObjects
	p.apps = make([]appPlan, 0, max(budget/7, 0)+1)
	for i := 0; budget >= minAppSize; i++ {
		pcg.Seed(cfg.Seed^streamShape, uint64(i))
		a := drawShape(rng)
		t := a.size()
		if t > budget {
			t = budget
		} else if d := budget - t; d > 0 && d < minAppSize {
			if budget <= maxAppSize {
				t = budget
			} else {
				t = budget - minAppSize
			}
		}
		a.fit(t)
		budget -= t
		p.apps = append(p.apps, a)
	}
	n := len(p.apps)

	// Removal: exactly round(RemoveApps*n) apps, by selection sampling.
	k := int(math.Round(cfg.RemoveApps * float64(n)))
	pcg.Seed(cfg.Seed^streamRemoval, uint64(n))
	for i := 0; i < n && p.nRemoved < k; i++ {
		if rng.IntN(n-i) < k-p.nRemoved {
			p.apps[i].removed = true
			p.removed = append(p.removed, int32(i))
			p.nRemoved++
		}
	}
	p.survivors = n - p.nRemoved

	// Sweep 2: count the natural references from survivors to removed apps.
	natural := 0
	var refs refSet
	for i := range p.apps {
		if p.apps[i].removed {
			continue
		}
		pcg.Seed(cfg.Seed^streamRefs, uint64(i))
		p.drawRefs(rng, i, &refs)
		for _, r := range refs.r[:refs.n] {
			if r.target >= 0 && p.apps[r.target].removed {
				natural++
			}
		}
	}
	d := cfg.DanglingRefs
	if d > 0 && (p.nRemoved == 0 || p.survivors == 0) {
		return nil, fmt.Errorf("modelgen: %d dangling references need at least one removed and one surviving app (have %d removed of %d)", d, p.nRemoved, n)
	}
	p.naturalKeep = min(natural, d)
	p.forced = d - p.naturalKeep

	st := &p.stats
	st.Apps = n
	st.AppsRemoved = p.nRemoved
	st.SnapshotObjects = fixedObjects
	for i := range p.apps {
		s := p.apps[i].size()
		st.SnapshotObjects += s
		if p.apps[i].removed {
			st.DoomedObjects += s
		}
	}
	st.IncomingObjects = st.SnapshotObjects - st.DoomedObjects
	st.DanglingRefs = d
	return p, nil
}

// forcedFor is the number of forced dangling references carried by the
// survivor of rank r (0-based among survivors in document order).
func (p *plan) forcedFor(r int) int {
	if p.forced == 0 || p.survivors == 0 {
		return 0
	}
	n := p.forced / p.survivors
	if r < p.forced%p.survivors {
		n++
	}
	return n
}

func (p *plan) appID(i int) ID { return makeID(p.salt, objKey(i, 0)) }

// Generate writes the snapshot and the incoming model for cfg. Either writer
// may be nil to skip that output (its byte count is then 0). The two outputs
// are written concurrently.
func Generate(snapshot, incoming io.Writer, cfg Config) (Stats, error) {
	p, err := newPlan(cfg)
	if err != nil {
		return Stats{}, err
	}
	st := p.stats
	type result struct {
		objects, dangling int
		bytes             int64
		err               error
	}
	var res [2]result
	var wg sync.WaitGroup
	for i, w := range []io.Writer{snapshot, incoming} {
		if w == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cw := &countWriter{w: w}
			gw := newWriter(p, cw, i == 1)
			err := gw.model()
			res[i] = result{gw.e.objects, gw.dangling, cw.n, err}
		}()
	}
	wg.Wait()
	for i, r := range res {
		if r.err != nil {
			return st, r.err
		}
		name, want := "snapshot", st.SnapshotObjects
		if i == 1 {
			name, want = "incoming", st.IncomingObjects
			if (incoming != nil) && r.dangling != st.DanglingRefs {
				return st, fmt.Errorf("modelgen: internal error: wrote %d dangling references, planned %d", r.dangling, st.DanglingRefs)
			}
		}
		if (i == 0 && snapshot != nil || i == 1 && incoming != nil) && r.objects != want {
			return st, fmt.Errorf("modelgen: internal error: wrote %d %s objects, planned %d", r.objects, name, want)
		}
	}
	st.SnapshotBytes = res[0].bytes
	st.IncomingBytes = res[1].bytes
	return st, nil
}

// WriteFiles generates cfg into dir (created if needed) as snapshot.json and
// incoming.json.
func WriteFiles(dir string, cfg Config) (snapshotPath, incomingPath string, st Stats, err error) {
	if err = os.MkdirAll(dir, 0o755); err != nil {
		return "", "", Stats{}, err
	}
	snapshotPath = filepath.Join(dir, "snapshot.json")
	incomingPath = filepath.Join(dir, "incoming.json")
	sf, err := os.Create(snapshotPath)
	if err != nil {
		return "", "", Stats{}, err
	}
	defer sf.Close()
	inf, err := os.Create(incomingPath)
	if err != nil {
		return "", "", Stats{}, err
	}
	defer inf.Close()
	st, err = Generate(sf, inf, cfg)
	if err != nil {
		return "", "", st, err
	}
	if err = sf.Close(); err != nil {
		return "", "", st, err
	}
	if err = inf.Close(); err != nil {
		return "", "", st, err
	}
	return snapshotPath, incomingPath, st, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// WriteModel writes the envelope of the pair in dir: dir/model.json, a
// Murano model whose Objects is incoming.json and whose ObjectsCopy is
// snapshot.json, byte for byte, the form `objgc plan MODEL` and
// `objgc apply MODEL` read. It returns the envelope's path and size in
// bytes.
func WriteModel(dir, snapshotPath, incomingPath string) (path string, size int64, err error) {
	path = filepath.Join(dir, "model.json")
	f, err := os.Create(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	cw := &countWriter{w: f}
	parts := []struct{ text, file string }{
		{"{\n  \"Objects\": ", incomingPath},
		{",\n  \"ObjectsCopy\": ", snapshotPath},
		{"\n}\n", ""},
	}
	for _, p := range parts {
		if _, err := io.WriteString(cw, p.text); err != nil {
			return "", 0, err
		}
		if p.file == "" {
			continue
		}
		if err := appendFile(cw, p.file); err != nil {
			return "", 0, err
		}
	}
	if err := f.Close(); err != nil {
		return "", 0, err
	}
	return path, cw.n, nil
}

// appendFile copies the file name to w, without its trailing newline, so
// that the envelope's punctuation follows the value directly.
func appendFile(w io.Writer, name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	_, err = w.Write(bytes.TrimRight(data, "\n"))
	return err
}

// BenchPair returns the paths of a generated pair of n objects with a
// tenth of the applications removed (Seed 1, indented), for benchmarks:
// written once into $OBJGC_BENCH_DIR/N, or $TMPDIR/objgc-bench/N, and
// reused by later runs, since a million-object pair takes seconds to
// write.
func BenchPair(n int) (snapshotPath, incomingPath string, err error) {
	dir := os.Getenv("OBJGC_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "objgc-bench")
	}
	dir = filepath.Join(dir, strconv.Itoa(n))
	snapshotPath, incomingPath = filepath.Join(dir, "snapshot.json"), filepath.Join(dir, "incoming.json")
	if _, err := os.Stat(incomingPath); err == nil {
		return snapshotPath, incomingPath, nil
	}
	snapshotPath, incomingPath, _, err = WriteFiles(dir, Config{Objects: n, RemoveApps: 0.1, Seed: 1, Indent: true})
	return snapshotPath, incomingPath, err
}
