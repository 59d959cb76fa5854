package sim

import (
	"math/rand/v2"
	"testing"
)

// The inlined generator must draw exactly math/rand/v2's words: every run's
// frames depend on it.
func TestPCGMatchesMathRand(t *testing.T) {
	for _, seed := range []uint64{0, 1, 2, 3, 1 << 63, ^uint64(0)} {
		ref := rand.New(rand.NewPCG(seed, 0x6f75746c69657273))
		p := newPCG(seed, 0x6f75746c69657273)
		for i := range 10000 {
			if i%3 == 0 {
				if a, b := p.Float64(), ref.Float64(); a != b {
					t.Fatalf("seed %d draw %d: Float64 %v, math/rand %v", seed, i, a, b)
				}
				continue
			}
			if a, b := p.Uint64(), ref.Uint64(); a != b {
				t.Fatalf("seed %d draw %d: %#x, math/rand %#x", seed, i, a, b)
			}
		}
	}
}
