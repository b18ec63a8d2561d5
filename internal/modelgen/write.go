package modelgen

import (
	"io"
	"math/rand/v2"
	"strconv"
)

// designerKey is the dashboard's designer attribute seen in real models.
const designerKey = "_26411a1861294160833743e45d0eaad9"

// writer writes one of the two models. The snapshot and incoming writers run
// the same code with the same random streams; the incoming one skips removed
// apps and drops references and subscriptions to them.
type writer struct {
	p        *plan
	e        *enc
	incoming bool
	pcg      *rand.PCG
	rng      *rand.Rand
	buf      []byte
	refs     refSet
	deps     []dep
	appDeps  []dep

	envName  string
	envNet   ID
	region1  ID
	region2  ID
	reg1Net  ID
	reg2Net  ID
	survivor int // rank of the next surviving app
	// dangling bookkeeping (incoming only)
	naturalSeen int
	dangling    int
}

type dep struct {
	subscriber ID
	handler    string // "" is written as null
}

func newWriter(p *plan, w io.Writer, incoming bool) *writer {
	pcg := rand.NewPCG(0, 0)
	return &writer{
		p:        p,
		e:        newEnc(w, p.cfg.Indent),
		incoming: incoming,
		pcg:      pcg,
		rng:      rand.New(pcg),
		buf:      make([]byte, 0, 128),
		deps:     make([]dep, 0, 8),
		appDeps:  make([]dep, 0, 8),
	}
}

func (w *writer) fixedID(ord int) ID { return makeID(w.p.salt, fixedKey(ord)) }

// model writes the whole tree and flushes.
func (w *writer) model() error {
	w.pcg.Seed(w.p.cfg.Seed^streamFixed, 0)
	rng := w.rng
	e := w.e
	w.envName = "env-" + string(w.alnum(6))
	envID := w.fixedID(ordEnv)
	w.envNet = w.fixedID(ordEnvNet)
	w.region1 = w.fixedID(ordRegion1)
	w.reg1Net = w.fixedID(ordRegion1Net)
	w.region2 = w.fixedID(ordRegion2)
	w.reg2Net = w.fixedID(ordRegion2Net)

	headerLast := rng.IntN(4) == 0
	legacy := w.legacy()
	e.beginObj()
	envHeader := func() {
		w.header(clsEnvironment, envID, legacy, nil, "", "deploy")
	}
	if !headerLast {
		envHeader()
	}
	e.kStr("name", w.envName)
	e.kStr("region", "RegionOne")
	e.key("defaultNetworks")
	e.beginObj()
	e.key("environment")
	w.network(w.envNet, "RegionOne", ID{})
	e.kNull("flat")
	e.endObj()
	e.key("regions")
	e.beginObj()
	e.key("")
	w.region(w.region1, w.reg1Net, "RegionOne")
	e.kID("RegionOne", w.region1)
	e.key("RegionTwo")
	w.region(w.region2, w.reg2Net, "RegionTwo")
	e.endObj()
	e.key("applications")
	e.beginArr()
	for i := range w.p.apps {
		if e.err != nil {
			return e.err // the writer failed: stop generating
		}
		a := &w.p.apps[i]
		if a.removed {
			if !w.incoming {
				e.item()
				w.app(i, -1)
				e.chunk()
			}
			continue
		}
		e.item()
		w.app(i, w.survivor)
		w.survivor++
		e.chunk()
	}
	e.endArr()
	if headerLast {
		envHeader()
	}
	e.endObj()
	e.b = append(e.b, '\n')
	return e.flush()
}

// legacy decides the header style of the next object: about 15% use the bare
// class name with classVersion and package header keys.
func (w *writer) legacy() bool { return w.rng.IntN(100) < 15 }

// header writes the "?" member.
func (w *writer) header(c *class, id ID, legacy bool, deps []dep, designer string, action string) {
	e := w.e
	e.objects++
	e.key("?")
	e.beginObj()
	if legacy {
		e.kID("id", id)
		e.kStr("type", c.name)
		e.kStr("classVersion", c.version)
		e.kStr("package", c.pkg)
	} else {
		e.kStr("type", c.typ)
		e.kID("id", id)
		e.kNull("name")
	}
	if len(deps) > 0 {
		e.key("dependencies")
		e.beginObj()
		e.key("onDestruction")
		e.beginArr()
		for _, d := range deps {
			e.item()
			e.beginObj()
			e.kID("subscriber", d.subscriber)
			if d.handler == "" {
				e.kNull("handler")
			} else {
				e.kStr("handler", d.handler)
			}
			e.endObj()
		}
		e.endArr()
		e.endObj()
	}
	if designer != "" {
		e.key(designerKey)
		e.beginObj()
		e.kStr("name", designer)
		e.endObj()
	}
	if action != "" {
		e.key("_actions")
		e.beginObj()
		w.buf = id.appendHex(w.buf[:0])
		w.buf = append(w.buf, '_')
		w.buf = append(w.buf, action...)
		e.sep()
		e.strBytes(w.buf)
		if e.indent {
			e.b = append(e.b, ": "...)
		} else {
			e.b = append(e.b, ':')
		}
		e.beginObj()
		e.kBool("enabled", true)
		e.kStr("name", action)
		e.kStr("title", action)
		e.endObj()
		e.endObj()
	}
	e.endObj()
}

// network writes a NeutronNetwork; a non-zero subscriber (its region) is
// notified of its destruction with a null handler, as in the API reference.
func (w *writer) network(id ID, region string, subscriber ID) {
	e, rng := w.e, w.rng
	legacy := w.legacy()
	headerLast := rng.IntN(2) == 0
	w.deps = w.deps[:0]
	if subscriber != (ID{}) {
		w.deps = append(w.deps, dep{subscriber: subscriber})
	}
	e.beginObj()
	if !headerLast {
		w.header(clsNeutronNet, id, legacy, w.deps, "", "")
	}
	e.key("name")
	w.buf = append(append(w.buf[:0], w.envName...), "-network"...)
	e.strBytes(w.buf)
	e.kBool("autoUplink", true)
	e.kBool("autogenerateSubnet", true)
	e.key("subnetCidr")
	if rng.IntN(2) == 0 {
		e.null()
	} else {
		w.buf = append(w.buf[:0], "10.0."...)
		w.buf = strconv.AppendInt(w.buf, int64(rng.IntN(250)), 10)
		w.buf = append(w.buf, ".0/24"...)
		e.strBytes(w.buf)
	}
	e.key("dnsNameservers")
	e.beginArr()
	if rng.IntN(2) == 0 {
		e.item()
		e.str("8.8.8.8")
	}
	e.endArr()
	e.key("externalRouterId")
	w.maybeUUID(50)
	e.key("openstackId")
	w.maybeUUID(70)
	e.kStr("regionName", region)
	if headerLast {
		w.header(clsNeutronNet, id, legacy, w.deps, "", "")
	}
	e.endObj()
}

func (w *writer) region(id, net ID, name string) {
	e := w.e
	legacy := w.legacy()
	e.beginObj()
	e.key("defaultNetworks")
	e.beginObj()
	e.key("environment")
	w.network(net, name, id)
	e.kNull("flat")
	e.endObj()
	e.kStr("name", name)
	w.header(clsCloudRegion, id, legacy, nil, "", "")
	e.endObj()
}

// app writes application i; survivorRank is its rank among surviving apps
// (-1 for a removed app).
func (w *writer) app(i int, survivorRank int) {
	p, e, rng := w.p, w.e, w.rng
	a := &p.apps[i]
	k := &kinds[a.kind]
	w.pcg.Seed(p.cfg.Seed^streamRefs, uint64(i))
	p.drawRefs(rng, i, &w.refs)
	refs := w.refs.r[:w.refs.n]

	ord := 0
	appID := makeID(p.salt, objKey(i, ord))
	ord++

	// Subscriptions: the referenced app is notified when this app goes.
	w.appDeps = w.appDeps[:0]
	for _, r := range refs {
		if !r.subscribe || w.incoming && p.apps[r.target].removed {
			continue
		}
		w.appDeps = append(w.appDeps, dep{subscriber: p.appID(int(r.target)), handler: r.handler})
	}
	legacy := w.legacy()
	headerLast := rng.IntN(4) == 0
	designer := ""
	if rng.IntN(100) < 70 {
		designer = k.display
	}
	action := ""
	if rng.IntN(100) < 30 {
		action = "restartVM"
	}
	e.beginObj()
	if !headerLast {
		w.header(k.cls, appID, legacy, w.appDeps, designer, action)
	}
	w.appScalars(a.kind)

	// References to other apps.
	for prop := uint8(0); prop < numProps; prop++ {
		if prop == propBackends {
			w.backends(refs)
			continue
		}
		for _, r := range refs {
			if r.prop != prop {
				continue
			}
			e.key(propNames[prop])
			if r.target >= 0 && w.keepRef(r.target) {
				e.id(p.appID(int(r.target)))
			} else {
				e.null()
			}
		}
	}
	if survivorRank >= 0 {
		if n := p.forcedFor(survivorRank); n > 0 {
			e.key("dependsOn")
			e.beginArr()
			for j := 0; j < n; j++ {
				t := p.removed[rng.IntN(len(p.removed))]
				e.item()
				e.id(p.appID(int(t)))
				if w.incoming {
					w.dangling++
				}
			}
			e.endArr()
		}
	}

	// Instances.
	asArray := a.nInst > 1 || rng.IntN(5) == 0
	if asArray {
		e.key("instances")
		e.beginArr()
	} else {
		e.key("instance")
	}
	for j := 0; j < int(a.nInst); j++ {
		if asArray {
			e.item()
		}
		ord = w.instance(i, ord, appID, int(a.vols[j]), int(a.ports[j]))
	}
	if asArray {
		e.endArr()
	}
	if headerLast {
		w.header(k.cls, appID, legacy, w.appDeps, designer, action)
	}
	e.endObj()
}

func (w *writer) backends(refs []ref) {
	e, p := w.e, w.p
	has := false
	for _, r := range refs {
		if r.prop == propBackends {
			has = true
			break
		}
	}
	if !has {
		return
	}
	e.key("backends")
	e.beginArr()
	for _, r := range refs {
		if r.prop == propBackends && w.keepRef(r.target) {
			e.item()
			e.id(p.appID(int(r.target)))
		}
	}
	e.endArr()
}

// keepRef reports whether a reference to app t is written. In the incoming
// model a surviving app keeps only the first naturalKeep references to
// removed apps; the kept ones are the dangling references.
func (w *writer) keepRef(t int32) bool {
	if !w.incoming || !w.p.apps[t].removed {
		return true
	}
	if w.naturalSeen < w.p.naturalKeep {
		w.naturalSeen++
		w.dangling++
		return true
	}
	return false
}

var (
	dbNames   = [...]string{"wordpress", "zabbix", "petclinic", "appdb", "inventory", "billing"}
	users     = [...]string{"admin", "root", "app_user", "murano", ""}
	passwords = [...]string{"*** SANITIZED ***", "Passw0rd.", "Adminadmin#1", "S3cr3t!pass"}
	flavors   = [...]string{"m1.small", "m1.small", "m1.medium", "m1.large", "m1.tiny", "m1.xlarge"}
	images    = [...]string{"murano-ubuntu", "ubuntu14.04-x64-kubernetes", "debian-8-m-agent.qcow2", "", "fedora-23-murano"}
	keynames  = [...]string{"", "", "kate", "deploy-key", "ci"}
)

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

func (w *writer) appScalars(kind uint8) {
	e, rng := w.e, w.rng
	switch kind {
	case kMySQL, kPostgres:
		if kind == kMySQL {
			e.kStr("name", "MySqlDB")
		} else {
			e.kStr("name", "PostgreSqlDB")
		}
		e.kStr("database", pick(rng, dbNames[:]))
		e.kStr("username", pick(rng, users[:]))
		e.kStr("password", pick(rng, passwords[:]))
	case kApache:
		e.kStr("name", "ApacheHttpServer")
		e.kBool("enablePHP", rng.IntN(2) == 0)
	case kTomcat:
		e.kStr("name", "Tomcat")
	case kWordPress:
		e.kStr("name", "WordPress")
		e.kStr("dbName", "wordpress")
		e.kStr("dbUser", "wp_user")
		e.kStr("dbPassword", pick(rng, passwords[:]))
	case kPetClinic:
		e.kStr("name", "PetClinic")
		e.kStr("dbName", "pet_db")
		e.kStr("dbUser", "pet_user")
		e.kStr("dbPassword", pick(rng, passwords[:]))
		e.kStr("warLocation", "https://dl.dropboxusercontent.com/u/1684617/petclinic.war")
	case kZabbixServer:
		e.kStr("name", "ZabbixServer")
		e.kStr("database", "zabbix")
		e.kStr("username", pick(rng, users[:]))
		e.kStr("password", pick(rng, passwords[:]))
	case kZabbixAgent:
		e.kStr("name", "ZabbixAgent")
		e.key("hostname")
		e.strBytes(w.alnum(10))
		e.kStr("probe", "ICMP")
	case kHAProxy:
		e.kStr("name", "HAProxy")
		e.kInt("port", 80+rng.IntN(2)*363)
		e.kStr("algorithm", "roundrobin")
	}
}

// instance writes a LinuxMuranoInstance owning a security group, ports and
// volumes; it returns the next free ordinal.
func (w *writer) instance(app, ord int, appID ID, nVols, nPorts int) int {
	p, e, rng := w.p, w.e, w.rng
	id := makeID(p.salt, objKey(app, ord))
	ord++
	legacy := w.legacy()
	headerLast := rng.IntN(4) == 0
	subscribesApp := rng.IntN(5) == 0
	action := ""
	if rng.IntN(100) < 10 {
		action = "restartVM"
	}
	instHeader := func() {
		w.deps = w.deps[:0]
		if subscribesApp {
			w.deps = append(w.deps, dep{subscriber: appID, handler: "onInstanceDestroyed"})
		}
		w.header(clsInstance, id, legacy, w.deps, "", action)
	}
	e.beginObj()
	if !headerLast {
		instHeader()
	}
	e.key("name")
	e.strBytes(w.alnum(14))
	e.kStr("flavor", pick(rng, flavors[:]))
	e.key("image")
	if rng.IntN(3) == 0 {
		w.uuid()
	} else {
		e.str(pick(rng, images[:]))
	}
	if kn := pick(rng, keynames[:]); kn != "" {
		e.kStr("keyname", kn)
	}
	e.kStr("availabilityZone", "nova")
	floating := rng.IntN(2) == 0
	e.kBool("assignFloatingIp", floating)
	e.key("floatingIpAddress")
	fip := 0
	if floating {
		fip = 2 + rng.IntN(250)
		w.ip("172.24.4.", fip)
	} else {
		e.null()
	}
	e.key("ipAddresses")
	e.beginArr()
	e.item()
	w.ip2("10.0.", rng.IntN(250), 2+rng.IntN(250))
	if fip > 0 {
		e.item()
		w.ip("172.24.4.", fip)
	}
	e.endArr()
	e.key("networks")
	e.beginObj()
	useEnv := rng.IntN(10) < 8
	e.kBool("useEnvironmentNetwork", useEnv)
	e.kBool("useFlatNetwork", false)
	e.key("primaryNetwork")
	if useEnv {
		e.id(w.envNet)
	} else {
		e.null()
	}
	e.key("customNetworks")
	e.beginArr()
	if rng.IntN(4) == 0 {
		e.item()
		e.id(w.reg2Net)
	}
	e.endArr()
	e.endObj()
	e.key("sharedIps")
	e.beginArr()
	e.endArr()
	e.key("openstackId")
	w.maybeUUID(80)

	// Owned objects.
	e.key("securityGroup")
	ord = w.securityGroup(app, ord)
	e.key("ports")
	e.beginArr()
	for j := 0; j < nPorts; j++ {
		e.item()
		ord = w.port(app, ord, id, j)
	}
	e.endArr()
	e.key("volumes")
	e.beginArr()
	for j := 0; j < nVols; j++ {
		e.item()
		ord = w.volume(app, ord, id, j)
	}
	e.endArr()
	if headerLast {
		instHeader()
	}
	e.endObj()
	return ord
}

var ruleSets = [...][]struct {
	proto    string
	from, to int
}{
	{{"tcp", 22, 22}},
	{{"tcp", 80, 80}, {"tcp", 443, 443}},
	{{"tcp", 3306, 3306}},
	{{"tcp", 8080, 8080}},
	{{"icmp", -1, -1}},
	{{"tcp", 10050, 10051}},
}

func (w *writer) securityGroup(app, ord int) int {
	p, e, rng := w.p, w.e, w.rng
	id := makeID(p.salt, objKey(app, ord))
	legacy := w.legacy()
	e.beginObj()
	w.header(clsSecurityGroup, id, legacy, nil, "", "")
	e.key("name")
	w.buf = append(append(w.buf[:0], "MuranoSecurityGroup-"...), w.envName...)
	e.strBytes(w.buf)
	e.key("rules")
	e.beginArr()
	for _, r := range ruleSets[rng.IntN(len(ruleSets))] {
		e.item()
		e.beginObj()
		e.kStr("IpProtocol", r.proto)
		e.kInt("FromPort", r.from)
		e.kInt("ToPort", r.to)
		e.kBool("External", rng.IntN(3) != 0)
		e.endObj()
	}
	e.endArr()
	e.key("openstackId")
	w.maybeUUID(60)
	e.endObj()
	return ord + 1
}

func (w *writer) port(app, ord int, inst ID, j int) int {
	p, e, rng := w.p, w.e, w.rng
	id := makeID(p.salt, objKey(app, ord))
	legacy := w.legacy()
	w.deps = w.deps[:0]
	if rng.IntN(2) == 0 {
		w.deps = append(w.deps, dep{subscriber: inst})
	}
	e.beginObj()
	w.header(clsNeutronPort, id, legacy, w.deps, "", "")
	e.key("name")
	w.buf = append(w.buf[:0], "port-"...)
	w.buf = strconv.AppendInt(w.buf, int64(j), 10)
	e.strBytes(w.buf)
	e.key("network")
	if j == 0 || rng.IntN(2) == 0 {
		e.id(w.envNet)
	} else {
		e.id(w.reg2Net)
	}
	e.key("fixedIp")
	w.ip2("10.0.", rng.IntN(250), 2+rng.IntN(250))
	e.key("macAddress")
	w.buf = append(w.buf[:0], "fa:16:3e"...)
	x := rng.Uint32()
	for k := 0; k < 3; k++ {
		b := byte(x >> (8 * k))
		w.buf = append(w.buf, ':', hexDigits[b>>4], hexDigits[b&0xf])
	}
	e.strBytes(w.buf)
	e.key("openstackId")
	w.maybeUUID(70)
	e.endObj()
	return ord + 1
}

var (
	volumeTypes = [...]string{"", "", "lvmdriver-1", "ceph", "ssd"}
	volumeSizes = [...]int{1, 5, 10, 20, 50, 100}
)

func (w *writer) volume(app, ord int, inst ID, j int) int {
	p, e, rng := w.p, w.e, w.rng
	id := makeID(p.salt, objKey(app, ord))
	legacy := w.legacy()
	w.deps = append(w.deps[:0], dep{subscriber: inst, handler: "onVolumeDestroyed"})
	headerLast := rng.IntN(4) == 0
	e.beginObj()
	if !headerLast {
		w.header(clsCinderVolume, id, legacy, w.deps, "", "")
	}
	e.key("name")
	w.buf = append(w.buf[:0], "vol-"...)
	w.buf = append(w.buf, w.alnum(8)...)
	e.strBytes(w.buf)
	e.kInt("size", pick(rng, volumeSizes[:]))
	e.kStr("availabilityZone", "nova")
	if vt := pick(rng, volumeTypes[:]); vt != "" {
		e.kStr("volumeType", vt)
	}
	if j == 0 && rng.IntN(4) == 0 {
		e.kInt("bootIndex", 0)
	}
	e.key("openstackId")
	w.maybeUUID(70)
	if headerLast {
		w.header(clsCinderVolume, id, legacy, w.deps, "", "")
	}
	e.endObj()
	return ord + 1
}

// Value helpers.

const alnumChars = "abcdefghijklmnopqrstuvwxyz0123456789"

// alnum returns n random lowercase letters and digits in a scratch buffer
// (valid until the next call).
func (w *writer) alnum(n int) []byte {
	var b [32]byte
	x := w.rng.Uint64()
	for i := 0; i < n; i++ {
		if i == 12 {
			x = w.rng.Uint64()
		}
		b[i] = alnumChars[x%36]
		x /= 36
	}
	w.buf = append(w.buf[:0], b[:n]...)
	return w.buf
}

// uuid writes a random dashed UUID string (not an object id).
func (w *writer) uuid() {
	hi, lo := w.rng.Uint64(), w.rng.Uint64()
	var h [32]byte
	ID{Hi: hi&^(0xf<<12) | 0x4<<12, Lo: lo&^(0x3<<62) | 0x2<<62}.appendHex(h[:0])
	w.buf = append(w.buf[:0], h[0:8]...)
	w.buf = append(w.buf, '-')
	w.buf = append(w.buf, h[8:12]...)
	w.buf = append(w.buf, '-')
	w.buf = append(w.buf, h[12:16]...)
	w.buf = append(w.buf, '-')
	w.buf = append(w.buf, h[16:20]...)
	w.buf = append(w.buf, '-')
	w.buf = append(w.buf, h[20:32]...)
	w.e.strBytes(w.buf)
}

// maybeUUID writes a UUID with probability pct%, else null.
func (w *writer) maybeUUID(pct int) {
	if w.rng.IntN(100) < pct {
		w.uuid()
	} else {
		w.e.null()
	}
}

func (w *writer) ip(prefix string, last int) {
	w.buf = append(w.buf[:0], prefix...)
	w.buf = strconv.AppendInt(w.buf, int64(last), 10)
	w.e.strBytes(w.buf)
}

func (w *writer) ip2(prefix string, a, b int) {
	w.buf = append(w.buf[:0], prefix...)
	w.buf = strconv.AppendInt(w.buf, int64(a), 10)
	w.buf = append(w.buf, '.')
	w.buf = strconv.AppendInt(w.buf, int64(b), 10)
	w.e.strBytes(w.buf)
}
