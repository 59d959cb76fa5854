package sim

import (
	"math"
	"sort"

	"outlierlab/engine"
)

// segment is one stretch of a host's timeline with a constant fault
// profile: the host's fault windows cut into non-overlapping pieces.
type segment struct {
	endUs int64 // exclusive; math.MaxInt64 for the last segment
	// fault is the index (in Cluster.Faults) of the window that decides
	// failures, -1 when requests do not fail.
	fault   int32
	share   float64
	pattern Pattern
	kind    FailureKind
	addedUs int64
	// baseUs is the cluster's base latency plus addedUs, in µs.
	baseUs float64
	// serviceUs is 1e6/capacity: how long one request occupies the host's
	// queue; 0 when capacity is unlimited.
	serviceUs float64
	// clean: no failing share and no capacity limit, so only timeouts
	// can fail an attempt here.
	clean     bool
	hcFails   bool
	hcFault   int32 // the window whose share the health endpoint shares
	hcShare   float64
	hcPattern Pattern
}

// host is one upstream host as the simulator runs it.
type host struct {
	mon  *engine.HostMonitor
	segs []segment
	cur  int      // segment cursor for dispatches (time only moves forward)
	seg  *segment // &segs[cur]
	// faultN counts the requests this host served under each fault window,
	// for the interleaved pattern; hcN the health checks.
	faultN []uint64
	hcN    []uint64
	// busyUntilUs is when the host's queue drains (capacity model).
	busyUntilUs float64
	// active is the host's rq_active: attempts in flight, which least
	// request compares.
	active int32

	// pendingFail counts the host's attempts in flight that will fail;
	// pendingOK its batched successes not yet given to the monitor.
	pendingFail int32
	pendingOK   uint64

	failedHC bool
	// degradedHC is DEGRADED_ACTIVE_HC: the last passing health check
	// answered x-envoy-degraded (a Degraded fault the health endpoint
	// shares).
	degradedHC bool
	hcFailures uint32 // consecutive failed checks while healthy
	hcSuccess  uint32 // consecutive passed checks while failed

	// level is the host's priority level (0 with one priority).
	level int

	// this interval
	attempts, failedAttempts uint64
}

// buildSegments cuts host i's fault windows into constant segments.
func buildSegments(c *Cluster, i int) []segment {
	n := c.Hosts
	bps := []int64{0}
	var mine []int
	for fi := range c.Faults {
		f := &c.Faults[fi]
		if !f.AppliesTo(i, n) {
			continue
		}
		mine = append(mine, fi)
		bps = append(bps, f.From.Microseconds())
		if f.Until > 0 {
			bps = append(bps, f.Until.Microseconds())
		}
	}
	sort.Slice(bps, func(a, b int) bool { return bps[a] < bps[b] })
	var segs []segment
	for k, start := range bps {
		if k > 0 && start == bps[k-1] {
			continue
		}
		end := int64(math.MaxInt64)
		for _, b := range bps[k+1:] {
			if b > start {
				end = b
				break
			}
		}
		s := segment{endUs: end, fault: -1, hcFault: -1}
		capRPS := c.CapacityRPS
		for _, fi := range mine {
			f := &c.Faults[fi]
			from, until := f.From.Microseconds(), f.Until.Microseconds()
			if start < from || (f.Until > 0 && start >= until) {
				continue
			}
			if s.fault < 0 && f.Share > 0 {
				s.fault, s.share, s.pattern, s.kind = int32(fi), f.Share, f.Pattern, f.Kind
			}
			if f.HealthCheckFails && s.hcFault < 0 {
				s.hcFails, s.hcFault, s.hcShare, s.hcPattern = true, int32(fi), f.Share, f.Pattern
			}
			s.addedUs += f.AddedLatency.Microseconds()
			if f.CapacityRPS > 0 && (capRPS == 0 || f.CapacityRPS < capRPS) {
				capRPS = f.CapacityRPS
			}
		}
		if capRPS > 0 {
			s.serviceUs = 1e6 / capRPS
		}
		s.baseUs = float64(c.Latency.Base.Microseconds()) + float64(s.addedUs)
		s.clean = s.fault < 0 && s.serviceUs == 0
		segs = append(segs, s)
	}
	return segs
}

// segmentAt advances the dispatch cursor to the segment holding t.
func (h *host) segmentAt(t int64) *segment {
	if t < h.seg.endUs {
		return h.seg
	}
	return h.advance(t)
}

func (h *host) advance(t int64) *segment {
	for t >= h.segs[h.cur].endUs {
		h.cur++
	}
	h.seg = &h.segs[h.cur]
	return h.seg
}

// segmentFor finds the segment holding t without moving the cursor.
func (h *host) segmentFor(t int64) *segment {
	k := sort.Search(len(h.segs), func(k int) bool { return h.segs[k].endUs > t })
	return &h.segs[k]
}

// interleavedFails is the evenly interleaved pattern: the n-th request
// (from 0) under a share p fails iff ⌊(n+1)p⌋ > ⌊np⌋, so failures are as
// evenly spaced as the share allows (p = 1/3: every third request).
func interleavedFails(n uint64, p float64) bool {
	const eps = 1e-9 // 3·(1/3) must count as 1
	return math.Floor(float64(n+1)*p+eps) > math.Floor(float64(n)*p+eps)
}
