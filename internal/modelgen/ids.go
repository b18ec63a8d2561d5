package modelgen

// ID is a generated object id: 128 bits written as 32 lowercase hex digits,
// with the uuid4 version nibble, like the ids Murano's dashboard creates.
type ID struct{ Hi, Lo uint64 }

const hexDigits = "0123456789abcdef"

// String returns the 32-digit lowercase hex form.
func (x ID) String() string {
	var b [32]byte
	return string(x.appendHex(b[:0]))
}

func (x ID) appendHex(b []byte) []byte {
	var out [32]byte
	for i := 0; i < 16; i++ {
		out[i] = hexDigits[(x.Hi>>(60-4*uint(i)))&0xf]
		out[16+i] = hexDigits[(x.Lo>>(60-4*uint(i)))&0xf]
	}
	return append(b, out[:]...)
}

// mix64 is the splitmix64 finalizer: a bijection on uint64 with good
// avalanche.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// Object keys. Every generated object has a key that is unique within one
// configuration: apps and everything inside them use (app index + 1) << 8 |
// local ordinal (an app holds at most 22 objects); the environment and its
// networks and regions use app slot 0.
const localBits = 8

func objKey(app int, ordinal int) uint64 {
	return uint64(app+1)<<localBits | uint64(ordinal)
}

func fixedKey(ordinal int) uint64 { return uint64(ordinal) }

// makeID turns an object key into its id. Lo is a bijection of the key
// (key + seed salt, then mix64), so distinct keys always give distinct ids;
// Hi only makes the text look random.
func makeID(seedSalt, key uint64) ID {
	lo := mix64(key + seedSalt)
	hi := mix64(lo ^ 0x6a09e667f3bcc909)
	hi = hi&^(0xf<<12) | 0x4<<12 // uuid4 version nibble (13th hex digit)
	return ID{Hi: hi, Lo: lo}
}
