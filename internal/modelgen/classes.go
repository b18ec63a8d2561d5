package modelgen

import "math/rand/v2"

// class is a Murano class as written in a header: either the versioned type
// string "name/version@package" or the legacy form (bare name plus
// classVersion and package header keys).
type class struct {
	name, version, pkg string
	typ                string // name/version@package
}

func newClass(name, version, pkg string) *class {
	return &class{name: name, version: version, pkg: pkg, typ: name + "/" + version + "@" + pkg}
}

var (
	clsEnvironment   = newClass("io.murano.Environment", "0.0.0", "io.murano")
	clsCloudRegion   = newClass("io.murano.CloudRegion", "0.0.0", "io.murano")
	clsNeutronNet    = newClass("io.murano.resources.NeutronNetwork", "0.0.0", "io.murano")
	clsInstance      = newClass("io.murano.resources.LinuxMuranoInstance", "0.0.0", "io.murano")
	clsCinderVolume  = newClass("io.murano.resources.CinderVolume", "0.0.0", "io.murano")
	clsNeutronPort   = newClass("io.murano.resources.NeutronPort", "0.0.0", "io.murano")
	clsSecurityGroup = newClass("io.murano.system.NeutronSecurityGroupManager", "0.0.0", "io.murano")
)

// Property slots that hold references to other apps.
const (
	propDatabase   = iota // single
	propServer            // single
	propTomcat            // single
	propDBServer          // single
	propMonitoring        // single
	propBackends          // array
	numProps
)

var propNames = [numProps]string{"database", "server", "tomcat", "dbServer", "monitoring", "backends"}

// App kinds.
const (
	kMySQL = iota
	kPostgres
	kApache
	kTomcat
	kWordPress
	kPetClinic
	kZabbixServer
	kZabbixAgent
	kHAProxy
	numKinds
)

type kindInfo struct {
	cls     *class
	display string // dashboard name in the _26411a... designer key
	weight  int
}

var kinds = [numKinds]kindInfo{
	kMySQL:        {newClass("com.example.databases.MySql", "1.0.0", "com.example.databases.MySql"), "MySQL", 3},
	kPostgres:     {newClass("com.example.databases.PostgreSql", "1.0.0", "com.example.databases.PostgreSql"), "PostgreSQL", 1},
	kApache:       {newClass("com.example.apache.ApacheHttpServer", "1.0.0", "com.example.apache.ApacheHttpServer"), "Apache HTTP Server", 2},
	kTomcat:       {newClass("com.example.apache.Tomcat", "1.0.0", "com.example.apache.Tomcat"), "Apache Tomcat", 2},
	kWordPress:    {newClass("com.example.WordPress", "1.0.0", "com.example.WordPress"), "WordPress", 2},
	kPetClinic:    {newClass("com.example.java.PetClinic", "1.0.0", "com.example.java.PetClinic"), "PetClinic", 1},
	kZabbixServer: {newClass("com.example.ZabbixServer", "1.0.0", "com.example.ZabbixServer"), "Zabbix Server", 1},
	kZabbixAgent:  {newClass("com.example.ZabbixAgent", "1.0.0", "com.example.ZabbixAgent"), "Zabbix Agent", 2},
	kHAProxy:      {newClass("com.example.HAProxy", "1.0.0", "com.example.HAProxy"), "HAProxy", 1},
}

var kindWeightTotal = func() int {
	t := 0
	for _, k := range kinds {
		t += k.weight
	}
	return t
}()

func pickKind(rng *rand.Rand) uint8 {
	x := rng.IntN(kindWeightTotal)
	for i, k := range kinds {
		if x < k.weight {
			return uint8(i)
		}
		x -= k.weight
	}
	return 0
}

// drawShape draws an app's kind and the number of instances, volumes and
// ports (before fitting to the object budget).
func drawShape(rng *rand.Rand) appPlan {
	var a appPlan
	a.kind = pickKind(rng)
	switch x := rng.IntN(100); {
	case x < 60:
		a.nInst = 1
	case x < 85:
		a.nInst = 2
	default:
		a.nInst = 3
	}
	for i := 0; i < int(a.nInst); i++ {
		switch x := rng.IntN(100); {
		case x < 30:
			a.vols[i] = 0
		case x < 70:
			a.vols[i] = 1
		case x < 90:
			a.vols[i] = 2
		default:
			a.vols[i] = 3
		}
		a.ports[i] = 1
		if rng.IntN(4) == 0 {
			a.ports[i] = 2
		}
	}
	return a
}

// ref is one reference from an app to another app, in a property slot.
type ref struct {
	prop      uint8
	target    int32 // app index, -1 for none (written as null)
	subscribe bool  // the target subscribes to the referrer's destruction
	handler   string
}

type refSet struct {
	n int
	r [6]ref
}

func (s *refSet) add(r ref) { s.r[s.n] = r; s.n++ }

// subscriberHandlers are the handler names a referenced app uses, per
// property, to hear that its referrer is being destroyed.
var subscriberHandlers = [numProps][2]string{
	propDatabase:   {"onClientDestroyed", "releaseDatabase"},
	propServer:     {"onClientDestroyed", "releaseResources"},
	propTomcat:     {"undeployApplication", "onClientDestroyed"},
	propDBServer:   {"onClientDestroyed", "releaseDatabase"},
	propMonitoring: {"unregisterHost", "onDependentRemoved"},
	propBackends:   {"removeFromBalancer", "onDependentRemoved"},
}

// drawRefs draws app i's references to earlier apps. It consumes the same
// random numbers whatever the removal plan, so every pass sees the same refs.
func (p *plan) drawRefs(rng *rand.Rand, i int, s *refSet) {
	s.n = 0
	single := func(prop uint8, want uint32) {
		t := p.pickTarget(rng, i, want)
		r := ref{prop: prop, target: t}
		if rng.IntN(100) < 60 {
			r.subscribe = true
			if rng.IntN(2) == 0 {
				r.handler = subscriberHandlers[prop][rng.IntN(2)]
			}
		}
		if t < 0 {
			r.subscribe = false
		}
		s.add(r)
	}
	switch p.apps[i].kind {
	case kWordPress:
		single(propDatabase, 1<<kMySQL)
		single(propServer, 1<<kApache)
	case kPetClinic:
		single(propDatabase, 1<<kMySQL|1<<kPostgres)
		single(propTomcat, 1<<kTomcat)
	case kZabbixServer:
		if rng.IntN(10) < 7 {
			single(propDBServer, 1<<kMySQL)
		}
	case kZabbixAgent:
		single(propServer, 1<<kZabbixServer)
	case kHAProxy:
		n := 1 + rng.IntN(3)
		for j := 0; j < n; j++ {
			single(propBackends, 1<<kApache|1<<kTomcat)
			last := &s.r[s.n-1]
			if last.target < 0 {
				s.n-- // backends lists only existing apps
				continue
			}
			for _, prev := range s.r[:s.n-1] {
				if prev.prop == propBackends && prev.target == last.target {
					s.n-- // no duplicate backends
					break
				}
			}
		}
	default: // databases and servers: sometimes monitored
		if rng.IntN(100) < 15 {
			single(propMonitoring, 1<<kZabbixServer)
		}
	}
}

// pickTarget picks an earlier app of a wanted kind: the nearest one at or
// before a random start in the last refWindow apps, else the nearest after it
// in the window. It always consumes one random number; -1 when no app in the
// window has a wanted kind.
func (p *plan) pickTarget(rng *rand.Rand, i int, want uint32) int32 {
	if i == 0 {
		rng.Uint32()
		return -1
	}
	lo := max(i-refWindow, 0)
	start := i - 1 - rng.IntN(i-lo)
	for j := start; j >= lo; j-- {
		if want&(1<<p.apps[j].kind) != 0 {
			return int32(j)
		}
	}
	for j := start + 1; j < i; j++ {
		if want&(1<<p.apps[j].kind) != 0 {
			return int32(j)
		}
	}
	return -1
}
