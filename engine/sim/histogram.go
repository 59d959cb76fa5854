package sim

import "math/bits"

// histogram is a fixed-bucket, log-linear latency histogram in
// microseconds: 16 linear sub-buckets per power of two, so a quantile is
// within about 3% of the true value without keeping or sorting samples.
type histogram struct {
	counts [histBuckets]uint32
	n      uint64
}

const (
	histSub     = 16
	histBuckets = histSub * 40
)

func histBucket(us int64) int {
	if us < histSub {
		if us < 0 {
			return 0
		}
		return int(us)
	}
	e := bits.Len64(uint64(us)) - 5 // us>>e is in [16, 32)
	b := histSub*(e+1) + int(uint64(us)>>e) - histSub
	if b >= histBuckets {
		return histBuckets - 1
	}
	return b
}

// histBounds returns the range [lo, hi) of values a bucket holds.
func histBounds(b int) (lo, hi int64) {
	if b < histSub {
		return int64(b), int64(b) + 1
	}
	e := b/histSub - 1
	m := int64(b%histSub + histSub)
	return m << e, (m + 1) << e
}

func (h *histogram) add(us int64) {
	h.counts[histBucket(us)]++
	h.n++
}

func (h *histogram) reset() { *h = histogram{} }

// merge adds o's samples to h.
func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantileMs is the q-quantile (0 < q ≤ 1) in milliseconds: the midpoint of
// the bucket holding the ⌈q·n⌉-th smallest sample; 0 when empty.
func (h *histogram) quantileMs(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for b, c := range h.counts {
		seen += uint64(c)
		if seen >= rank {
			lo, hi := histBounds(b)
			return float64(lo+hi) / 2 / 1000
		}
	}
	return 0
}
