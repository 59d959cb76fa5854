package sim

import "math"

// expQuantiles is the inverse CDF of the unit exponential distribution,
// -ln(1-u), at u = k/expSteps. Drawing an exponential variate by table
// lookup and linear interpolation costs one random word and no logarithm,
// which matters at two draws per simulated request; the approximation error
// is far below what the lessons can show.
const expBits = 10

const expSteps = 1 << expBits

var expQuantiles = func() [expSteps + 1]float64 {
	var t [expSteps + 1]float64
	for k := range expSteps {
		t[k] = -math.Log1p(-float64(k) / expSteps)
	}
	return t
}()

// expSteps2 holds each step's start and slope side by side, so a draw
// reads one pair.
var expSteps2 = func() [expSteps][2]float64 {
	var t [expSteps][2]float64
	for k := range expSteps - 1 {
		t[k] = [2]float64{expQuantiles[k], expQuantiles[k+1] - expQuantiles[k]}
	}
	return t
}()

// expVariate turns one random word into a unit exponential variate. The
// top bits choose a table step, the next 32 interpolate within it; the last
// step (u ≥ 1 − 1/1024) is computed exactly, so the tail is unbounded.
func expVariate(u uint64) float64 {
	k := u >> (64 - expBits)
	frac := float64(uint32(u>>(32-expBits))) * (1.0 / (1 << 32))
	if k == expSteps-1 {
		x := (float64(k) + frac) / expSteps
		return -math.Log1p(-x)
	}
	st := &expSteps2[k]
	return st[0] + st[1]*frac
}
