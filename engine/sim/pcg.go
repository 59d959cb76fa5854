package sim

import "math/bits"

// pcg is math/rand/v2's PCG-DXSM generator, bit for bit (rand.NewPCG with
// the same seeds yields the same words), held by value in the Sim so a draw
// is an inlined multiply rather than a call through rand.Rand's Source
// interface: the simulator draws two or three words per request.
type pcg struct{ hi, lo uint64 }

func newPCG(seed1, seed2 uint64) pcg { return pcg{seed1, seed2} }

// Uint64 is rand.PCG.Uint64: an LCG step on 128 bits, then DXSM.
func (p *pcg) Uint64() uint64 {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	hi, lo := bits.Mul64(p.lo, mulLo)
	hi += p.hi*mulLo + p.lo*mulHi
	lo, c := bits.Add64(lo, incLo, 0)
	hi, _ = bits.Add64(hi, incHi, c)
	p.lo, p.hi = lo, hi
	hi ^= hi >> 32
	hi *= cheapMul
	hi ^= hi >> 48
	hi *= lo | 1
	return hi
}

// Float64 is rand.Rand.Float64 on this source: 53 random bits in [0, 1).
func (p *pcg) Float64() float64 {
	return float64(p.Uint64()<<11>>11) / (1 << 53)
}
