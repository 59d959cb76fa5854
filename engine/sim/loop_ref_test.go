package sim

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"outlierlab/engine"
)

// refRunUntil is the event loop as it was before runUntil wrote the
// queue's operations, the pick and the common paths out (commit bb82c0c):
// every event goes through the queue's methods, every attempt through
// refDispatch, every response through complete. It is the reference the
// written-out loop must match frame for frame.
func (s *Sim) refRunUntil(tickKey uint64) {
	for {
		qKey := s.q.topKey()
		if qKey < tickKey {
			if eventKey(s.nextArrival, classArrival) < qKey {
				s.refArrive(s.nextArrival)
				continue
			}
			e := s.q.pop()
			switch e.class() {
			case classCompletion:
				s.complete(e.idx, e.at())
			case classRetry:
				r := &s.reqs[e.idx]
				if e.at() >= r.deadlineUs {
					s.stats.RouteTimeout++
					s.finish(e.idx, e.at(), true)
					continue
				}
				s.refDispatch(e.idx, e.at())
			case classHealthCheck:
				s.healthCheck(e.idx, e.at())
			}
			continue
		}
		if eventKey(s.nextArrival, classArrival) < tickKey {
			s.refArrive(s.nextArrival)
			continue
		}
		return
	}
}

func (s *Sim) refArrive(t int64) {
	s.nextArrival = t + int64(expVariate(s.rng.Uint64())*s.meanGapUs+0.5)
	if s.nextArrival >= s.endUs {
		s.nextArrival = never
	}
	ri := s.free
	if ri >= 0 {
		s.free = s.reqs[ri].nextFree
	} else {
		s.reqs = append(s.reqs, request{})
		ri = int32(len(s.reqs) - 1)
	}
	r := &s.reqs[ri]
	*r = request{id: s.nextID, arrivalUs: t, deadlineUs: never, retryLeft: uint8(s.c.Retry.NumRetries)}
	if s.routeUs > 0 {
		r.deadlineUs = t + s.routeUs
	}
	s.nextID++
	s.refDispatch(ri, t)
}

func (s *Sim) refDispatch(ri int32, t int64) {
	r := &s.reqs[ri]
	hi := s.lb.pick(s, r)
	if hi < 0 {
		s.stats.UpstreamCxNoneHealthy++
		s.clients.NoHealthy++
		s.finish(ri, t, true)
		return
	}
	r.attempts++
	r.triedHosts[r.triedN] = int16(hi)
	r.triedN++
	r.host = hi
	h := &s.hosts[hi]
	h.active++
	h.attempts++
	s.inFlight++
	s.stats.UpstreamRq++

	seg := h.segmentAt(t)
	fail := false
	if seg.fault >= 0 {
		if seg.pattern == Interleaved {
			n := h.faultN[seg.fault]
			h.faultN[seg.fault] = n + 1
			fail = interleavedFails(n, seg.share)
		} else {
			fail = s.rng.Float64() < seg.share
		}
	}

	var latency int64
	r.outcome, r.code, r.degraded = outResponse, 200, false
	if fail && seg.kind == ConnectFailure {
		r.outcome = outConnectFailed
		latency = connectFailUs
	} else {
		s.report(r, hi, engine.LocalOriginConnectSuccess, 0, t)
		hang := fail && seg.kind == Timeout
		u := s.rng.Uint64()
		lat := s.latencyUs.base + float64(seg.addedUs) + expVariate(u)*s.latencyUs.jitter
		if u&(1<<22-1) < s.tailCut {
			lat += s.latencyUs.tail
		}
		shed := false
		if seg.serviceUs > 0 && !hang {
			start := max(h.busyUntilUs, float64(t))
			wait := start - float64(t)
			if wait > s.queueUs {
				shed = true
			} else {
				h.busyUntilUs = start + seg.serviceUs
				lat += wait
			}
		}
		latency = int64(lat)
		switch {
		case shed:
			s.stats.QueueShed++
			r.code = 503
			latency = int64(s.latencyUs.base)
		case hang:
			latency = never
		case fail && seg.kind == Reset:
			r.outcome = outReset
		case fail && seg.kind == Degraded:
			r.degraded = true
		case fail:
			r.code = int16(seg.kind.httpCode())
		}
	}
	limit, perTry := int64(never), false
	if s.perTryUs > 0 {
		limit, perTry = s.perTryUs, true
	}
	if r.deadlineUs != never {
		if rem := r.deadlineUs - t; rem <= limit {
			limit, perTry = rem, false
		}
	}
	if latency > limit {
		latency = limit
		if perTry {
			r.outcome = outPerTryTimeout
		} else {
			r.outcome = outRouteTimeout
		}
	}
	s.q.push(t+latency, classCompletion, ri)
}

// randomRun draws a cluster and detector config that reach most of the
// simulator's paths: every LB policy and panic, retries with budgets and
// breakers, per-try and route timeouts, capacity queues, every failure kind
// and pattern, health checks, split mode.
func randomRun(rng *rand.Rand) (Cluster, engine.Config) {
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	c := DefaultCluster()
	c.Hosts = 1 + rng.IntN(30)
	c.RPS = pick(30, 300, 1500, 4000)
	c.Duration = time.Duration(5+rng.IntN(15)) * time.Second
	c.LB = LBPolicy(rng.IntN(3))
	c.HealthyPanicThreshold = uint32(pick(0, 50, 80))
	c.Latency.Base = ms(pick(0, 1, 5, 40))
	c.Latency.Jitter = ms(pick(0, 5, 30))
	c.Latency.TailShare = pick(0, 0.01, 0.2)
	c.CapacityRPS = pick(0, 0, 50, 400)
	c.Retry.NumRetries = uint32(pick(0, 0, 0, 1, 3)) // mostly none: successes are batched then
	c.Retry.RetryOn = RetryOn(rng.IntN(16))
	c.Retry.PerTryTimeout = ms(pick(0, 0, 6, 8, 12, 50))
	c.Retry.RouteTimeout = ms(pick(0, 7, 10, 30, 200, 15000))
	c.Retry.PreviousHosts = rng.IntN(2) == 0
	c.Retry.Budget = rng.IntN(3) == 0
	c.Retry.MaxRetries = uint32(pick(0, 3, 1000))
	c.HealthCheck.Enabled = rng.IntN(3) == 0
	c.HealthCheck.Interval = ms(pick(100, 1000))
	for range rng.IntN(3) {
		f := Fault{Hosts: []int{rng.IntN(c.Hosts)}, Share: pick(0.1, 1.0/3, 0.7, 1),
			Pattern: Pattern(rng.IntN(2)), Kind: FailureKind(rng.IntN(len(kindNames))),
			From: ms(float64(rng.IntN(4000))), HealthCheckFails: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			f.Until = f.From + ms(pick(3, 40, 700, 3000))
		}
		if rng.IntN(4) == 0 {
			f.CapacityRPS = pick(20, 200)
		}
		if rng.IntN(3) == 0 {
			f.AddedLatency = ms(pick(20, 300))
		}
		if rng.IntN(4) == 0 {
			f.AllHosts = true
		}
		c.Faults = append(c.Faults, f)
	}
	od := engine.DefaultConfig()
	od.IntervalMs = int64(pick(100, 500, 1000, 3000))
	od.Consecutive5xx = uint32(pick(1, 3, 5))
	od.MaxEjectionPercent = uint32(pick(10, 50, 100))
	od.SplitExternalLocalOriginErrors = rng.IntN(2) == 0
	od.SuccessfulActiveHealthCheckUnejectHost = rng.IntN(2) == 0
	od.DetectDegradedHosts = rng.IntN(2) == 0
	return c, od
}

// batchTraps are runs where a batched success would be reported out of
// order if a batching condition were missing: failures that end within a
// millisecond on a host whose successes take tens (the fault segment must
// be clean), a fault that starts while successes are in flight (they must
// end before the segment does), and consecutive_5xx at 2, so a success
// missing from its place ejects.
func batchTraps() []struct {
	c  Cluster
	od engine.Config
} {
	base := DefaultCluster()
	base.Hosts, base.RPS, base.Duration = 3, 2000, 20*time.Second
	base.Latency = Latency{Base: 2 * time.Millisecond, Jitter: 30 * time.Millisecond, TailShare: 0.05, Tail: 100 * time.Millisecond}
	od := engine.DefaultConfig()
	od.IntervalMs, od.Consecutive5xx, od.MaxEjectionPercent = 1000, 2, 100
	var out []struct {
		c  Cluster
		od engine.Config
	}
	for _, f := range []Fault{
		{Hosts: []int{0}, Share: 0.3, Pattern: Bernoulli, Kind: ConnectFailure},
		{Hosts: []int{0}, Share: 0.5, Pattern: Interleaved, Kind: HTTP503},
		{Hosts: []int{1}, Share: 1, Kind: ConnectFailure, From: 3 * time.Second, Until: 3050 * time.Millisecond},
		{AllHosts: true, Share: 0.2, Pattern: Bernoulli, Kind: Reset, From: 5 * time.Second},
		// Degraded answers between failures: a degraded 200 resets the
		// streak as a success does, so it must not be batched away.
		{Hosts: []int{0}, Share: 0.5, Pattern: Interleaved, Kind: Degraded},
	} {
		c := base.Clone()
		c.Faults = []Fault{f}
		out = append(out, struct {
			c  Cluster
			od engine.Config
		}{c, od})
	}
	return out
}

// The written-out event loop gives the frames the plain loop gives, run by
// run and interval by interval, over the batching traps and random
// clusters and configs.
func TestEventLoopMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	runs := 200
	if testing.Short() {
		runs = 40
	}
	traps := batchTraps()
	for i := range len(traps) + runs {
		var c Cluster
		var od engine.Config
		if i < len(traps) {
			c, od = traps[i].c, traps[i].od
		} else {
			c, od = randomRun(rng)
		}
		seed := uint64(i)
		fast, ref := newSim(t, c, od, seed), newSim(t, c, od, seed)
		ref.refLoop = ref.refRunUntil
		a, b := runAll(t, fast), runAll(t, ref)
		if !reflect.DeepEqual(a, b) {
			for k := range min(len(a), len(b)) {
				if !reflect.DeepEqual(a[k], b[k]) {
					t.Fatalf("run %d (%+v, %+v): interval %d differs:\n%+v\nreference:\n%+v", i, c, od, k, a[k], b[k])
				}
			}
			t.Fatalf("run %d: %d intervals, reference %d", i, len(a), len(b))
		}
		if fast.ClusterStats() != ref.ClusterStats() || fast.Totals() != ref.Totals() || fast.Detector().Stats() != ref.Detector().Stats() {
			t.Fatalf("run %d: totals differ", i)
		}
	}
}
