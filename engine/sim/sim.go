package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"outlierlab/engine"
)

// maxRetriesPerRequest bounds num_retries so a request's tried-host list
// is a fixed array (no allocation per request).
const maxRetriesPerRequest = 10

// Report is one call the router made into a host's outlier monitor.
type Report struct {
	AtUs    int64
	Host    int
	Request uint64
	// Attempt is 0 for the first try, n for the n-th retry.
	Attempt int
	Result  engine.Result
	// Code is the HTTP code passed along (0: none).
	Code int
}

// ClusterStats are the cluster's router and LB counters, cumulative.
type ClusterStats struct {
	LbHealthyPanic        uint64 `json:"lb_healthy_panic"`
	UpstreamCxNoneHealthy uint64 `json:"upstream_cx_none_healthy"`
	UpstreamRq            uint64 `json:"upstream_rq_total"`
	RetrySent             uint64 `json:"upstream_rq_retry"`
	RetryOverflow         uint64 `json:"upstream_rq_retry_overflow"`
	RetryLimitExceeded    uint64 `json:"upstream_rq_retry_limit_exceeded"`
	RetrySuccess          uint64 `json:"upstream_rq_retry_success"`
	PerTryTimeout         uint64 `json:"upstream_rq_per_try_timeout"`
	RouteTimeout          uint64 `json:"upstream_rq_timeout"`
	QueueShed             uint64 `json:"upstream_queue_shed"`
}

// HostInterval is what the simulator saw of one host in an interval.
type HostInterval struct {
	// Attempts the LB sent the host in the interval, and attempts on it
	// that ended in a failure in the interval.
	Attempts, Failed uint64
	// InFlight at the end of the interval.
	InFlight       int32
	FailedActiveHC bool
	// DegradedActiveHC: the last passing health check answered
	// x-envoy-degraded (DEGRADED_ACTIVE_HC).
	DegradedActiveHC bool
}

// ClientInterval is what downstream clients saw of the requests that ended
// in the interval.
type ClientInterval struct {
	Requests uint64
	// Failures ended in an error after retries, 503 no healthy upstream
	// and route timeouts included.
	Failures      uint64
	NoHealthy     uint64
	Retries       uint64
	RetryOverflow uint64
	P50Ms, P99Ms  float64
}

// Interval is one detector interval: everything between the previous tick
// and the tick at EndMs, and the state right after that tick. It is owned
// by the Sim and overwritten by the next call to Next.
type Interval struct {
	StartMs, EndMs int64
	Tick           *engine.TickReport
	// Events are the detector's events of the interval, in order:
	// consecutive detections and HC unejections as they happened, then the
	// tick's.
	Events  []engine.Event
	Hosts   []HostInterval
	Clients ClientInterval
	// Panic: the cluster was in panic at some point of the interval;
	// PanicAtEnd: after the tick.
	Panic, PanicAtEnd bool
	Healthy           int
	Cluster           ClusterStats
	Stats             engine.Stats
}

// request is one downstream request; it has at most one attempt in flight
// (no hedging), so the attempt's fields live here too.
type request struct {
	id         uint64
	arrivalUs  int64
	deadlineUs int64 // route timeout; MaxInt64 for none
	attempts   uint8 // attempts dispatched so far
	retryLeft  uint8
	holdsRetry bool // counts in the cluster's active retries
	triedN     uint8
	triedHosts [maxRetriesPerRequest + 1]int16

	// the attempt in flight
	host    int32
	outcome outcome
	// degraded: the response (outResponse, code < 500) carries
	// x-envoy-degraded.
	degraded bool
	code     int16

	nextFree int32 // while the slot is free: the next free slot, -1: none
}

func (r *request) tried(h int32) bool {
	for _, t := range r.triedHosts[:r.triedN] {
		if int32(t) == h {
			return true
		}
	}
	return false
}

// outcome is how an attempt ends.
type outcome uint8

const (
	outResponse      outcome = iota // HTTP response with code
	outConnectFailed                // pool failure, no stream
	outReset                        // stream attached, then reset
	outPerTryTimeout
	outRouteTimeout
)

// Sim runs one cluster against one detector.
type Sim struct {
	c     Cluster
	det   *engine.Detector
	clock engine.ManualClock
	rng   pcg
	lb    balancer
	hosts []host

	q        *eventQueue
	reqs     []request
	free     int32 // first free request slot (linked by nextFree), -1: none
	nextID   uint64
	inFlight int64 // the cluster's active upstream requests
	retries  int64 // the cluster's active retries

	intervalUs  int64 // the first tick's time; tickAtUs(k) for the k-th
	intervalNs  int64 // the interval as the detector's dialect holds it
	endUs       int64
	tick        int64 // ticks done
	nextArrival int64
	meanGapUs   float64
	latencyUs   struct{ base, jitter, tail float64 }
	perTryUs    int64
	routeUs     int64
	queueUs     float64
	hcUs        int64
	tailCut     uint64 // TailShare scaled to 22 bits
	split       bool   // split_external_local_origin_errors
	// batchable: successes may be batched (see flushOK): no attempt is
	// ever retried and the LB does not read in-flight counts.
	batchable bool

	// interval accumulators, and the interval handed to the caller
	clients   ClientInterval
	panicSeen bool
	out       Interval
	hist      histogram
	total     histogram
	totals    ClientInterval
	stats     ClusterStats
	events    []engine.Event
	work      Work

	// OnReport, when set, sees every report the router makes to a host's
	// outlier monitor, in order (tests use it to check §3.4 attempt by
	// attempt).
	OnReport func(Report)

	// refLoop, when set, replaces runUntil: tests run the plain event loop
	// runUntil was derived from and compare the frames.
	refLoop func(tickKey uint64)

	// onRetryAdmission, when set, sees every retry admission check: the
	// cluster's active requests and active retries at the check, and the
	// answer (tests check the budget arithmetic with it).
	onRetryAdmission func(inFlight, retries int64, admitted bool)
}

// New builds a simulation of cluster c with a detector configured by od.
// seed fixes every random choice: arrivals, latencies, random failures, LB
// picks, retry backoff, and (through a second stream) the detector's
// enforcement and jitter draws.
func New(c Cluster, od engine.Config, seed uint64) (*Sim, error) {
	c = c.Clone()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	// Envoy's timer runs on whole milliseconds (it truncates the proto);
	// grpc-go's on the proto's nanoseconds.
	intervalNs := od.IntervalMs * 1_000_000
	if c.Dialect == engine.DialectGRPC {
		intervalNs = od.GRPCIntervalNs()
		if intervalNs == 0 {
			// grpc-go takes 0s (outlierConfigFromCluster asks only ≥ 0) and
			// re-arms its timer with afterFunc(0) after every sweep: sweeps
			// back to back, as many as the CPU allows, which no schedule of
			// ticks stands for (replay takes such a config: its ticks are
			// the trace's).
			return nil, errors.New("interval: 0s: grpc-go accepts it and runs its sweeps back to back (intervalTimerAlgorithm re-arms afterFunc(0)), as many as the CPU allows; the simulator cannot schedule that many sweeps (allowed > 0s in a simulation)")
		}
	}
	if intervalNs <= 0 {
		return nil, fmt.Errorf("interval: %d ms must be positive", od.IntervalMs)
	}
	s := &Sim{c: c, rng: newPCG(seed, 0x6f75746c69657273), q: newEventQueue(), free: -1}
	s.det = engine.NewDialectDetector(c.Dialect, od, &s.clock, rand.New(rand.NewPCG(seed, 0x6465746563746f72)))
	s.intervalNs = intervalNs
	s.intervalUs = s.intervalNs / 1000
	ticks := c.Duration.Nanoseconds() / s.intervalNs
	if ticks < 1 {
		ticks = 1
	}
	s.endUs = s.tickAtUs(ticks)
	s.meanGapUs = 1e6 / c.RPS
	s.latencyUs.base = float64(c.Latency.Base.Microseconds())
	s.latencyUs.jitter = float64(c.Latency.Jitter.Microseconds())
	s.latencyUs.tail = float64(c.Latency.Tail.Microseconds())
	s.perTryUs = c.Retry.PerTryTimeout.Microseconds()
	s.routeUs = c.Retry.RouteTimeout.Microseconds()
	s.queueUs = float64(c.QueueLimit.Microseconds())
	s.hcUs = c.HealthCheck.Interval.Microseconds()
	s.tailCut = uint64(c.Latency.TailShare * (1 << 22))
	s.split = od.SplitExternalLocalOriginErrors
	s.batchable = (c.Retry.NumRetries == 0 || c.Retry.RetryOn == 0) && c.LB != LeastRequest

	s.hosts = make([]host, c.Hosts)
	s.lb = balancer{policy: c.LB, panicThreshold: c.HealthyPanicThreshold}
	if c.Dialect == engine.DialectGRPC {
		// gRPC has no panic threshold: with every host ejected the channel
		// fails RPCs (A50; peers.md §1.10).
		s.lb.panicThreshold = 0
	}
	for i := range s.hosts {
		h := &s.hosts[i]
		h.mon = s.det.AddHost(fmt.Sprintf("h%d", i))
		h.segs = buildSegments(&s.c, i)
		h.seg = &h.segs[0]
		h.faultN = make([]uint64, len(c.Faults))
		h.hcN = make([]uint64, len(c.Faults))
		s.lb.all = append(s.lb.all, int32(i))
	}
	if sizes := c.LevelSizes(); len(sizes) > 1 {
		s.lb.levels = make([]level, len(sizes))
		i := 0
		for k, n := range sizes {
			for range n {
				s.hosts[i].level = k
				s.lb.levels[k].all = append(s.lb.levels[k].all, int32(i))
				i++
			}
		}
	}
	// Envoy seeds each round-robin index with a random number.
	seedRR := s.rng.Uint64()
	s.lb.rrHealthy, s.lb.rrDegraded, s.lb.rrAll = seedRR, seedRR, seedRR
	for k := range s.lb.levels {
		lv := &s.lb.levels[k]
		lv.rrHealthy, lv.rrDegraded, lv.rrAll = seedRR, seedRR, seedRR
	}
	s.lb.recompute(s)
	// Ejections and unejections change the LB's host sets at once, as
	// Envoy's runChangedStateCallbacks → cluster host-set update does.
	s.det.OnHostStateChange = func(*engine.HostMonitor) { s.healthChanged() }

	if c.HealthCheck.Enabled {
		// Checks are staggered over one interval (Envoy jitters them); a
		// host starts healthy, as if its first check passed before t = 0.
		for i := range s.hosts {
			s.q.push(s.hcUs*int64(i)/int64(c.Hosts), classHealthCheck, int32(i))
		}
	}
	s.out.Hosts = make([]HostInterval, c.Hosts)
	s.panicSeen = s.lb.panic
	s.nextArrival = s.arrivalGap()
	if s.nextArrival >= s.endUs {
		s.nextArrival = never
	}
	return s, nil
}

// Detector is the detector the simulation drives.
func (s *Sim) Detector() *engine.Detector { return s.det }

// Cluster is the (validated) cluster being simulated.
func (s *Sim) Cluster() Cluster { return s.c }

// EndMs is when the last interval closes.
func (s *Sim) EndMs() int64 { return s.endUs / 1000 }

// Totals are the client figures over the whole run so far.
func (s *Sim) Totals() ClientInterval {
	t := s.totals
	t.P50Ms, t.P99Ms = s.total.quantileMs(0.5), s.total.quantileMs(0.99)
	return t
}

// Work is what a run does, counted as it runs: the heavy-work budget's
// measure of a run (scenario.Weigh estimates the same counts before it
// runs, and its tests hold the estimate to these). Counts, not time, so a
// run's cost is the same on every machine and under any load.
type Work struct {
	// Arrivals are the downstream requests; Attempts the upstream
	// attempts, retries included; Picks the load balancer's host choices
	// (one per attempt, a previous_hosts re-pick, a pick that found no
	// host).
	Arrivals, Attempts, Picks uint64
	// HealthChecks are the active checks run; Events the detector's
	// events (each kept in its frame), Streaks those that a consecutive_*
	// streak made (the decision log folds their repeats); Rebuilds the
	// hosts visited rebuilding the balancer's host sets (every ejection,
	// return and health change visits every host).
	HealthChecks, Events, Streaks, Rebuilds uint64
	// HostTicks are hosts × ticks (a detector pass per host and a host's
	// row in each frame); FailingHostTicks those in which the host failed
	// an attempt (only they may be found wanting, and their events
	// fill the decision log).
	HostTicks, FailingHostTicks uint64
	// Slots is the most requests in flight at once (the simulator keeps a
	// slot for each, never freed during the run), QueueNodes the most
	// events pending at once, FarEvents the events due more than the
	// event ring's half second ahead (a slow or queued attempt, a hang,
	// a health check): each goes through a heap.
	Slots, QueueNodes, FarEvents uint64
}

// Work is what the run did so far.
func (s *Sim) Work() Work {
	w := s.work
	w.Arrivals = s.nextID
	w.Attempts = s.stats.UpstreamRq
	w.Picks += s.stats.UpstreamRq + s.stats.UpstreamCxNoneHealthy
	w.HostTicks = uint64(s.tick) * uint64(len(s.hosts))
	w.Slots = uint64(len(s.reqs))
	w.QueueNodes = uint64(len(s.q.nodes) + cap(s.q.far.items))
	w.FarEvents = s.q.farPushes
	st := s.det.Stats()
	w.Streaks = st[engine.StatEjectionsDetectedConsecutive5xx] + st[engine.StatEjectionsDetectedConsecutiveGatewayFailure] +
		st[engine.StatEjectionsDetectedConsecutiveLocalOriginFailure]
	return w
}

// ClusterStats are the cumulative router and LB counters.
func (s *Sim) ClusterStats() ClusterStats {
	st := s.stats
	st.LbHealthyPanic = s.lb.lbHealthyPanic
	return st
}

func (s *Sim) healthChanged() {
	s.lb.recompute(s)
	if s.lb.panic {
		s.panicSeen = true
	}
}

func (s *Sim) arrivalGap() int64 {
	return int64(expVariate(s.rng.Uint64())*s.meanGapUs + 0.5)
}

// Next runs the simulation to the next detector tick and returns that
// interval, or false when the run is over.
func (s *Sim) Next() (*Interval, bool) {
	if s.tickAtUs(s.tick+1) > s.endUs {
		return nil, false
	}
	tickAt := s.tickAtUs(s.tick + 1)
	if s.refLoop != nil {
		s.refLoop(eventKey(tickAt, classTick))
	} else {
		s.runUntil(eventKey(tickAt, classTick))
	}
	s.tick++
	return s.closeInterval(tickAt), true
}

// tickAtUs is when the k-th tick fires, in the simulator's microseconds:
// k exact intervals (a gRPC interval with a part below the microsecond
// fires at the microsecond it falls in; the detector sees its nanosecond).
// The gRPC dialect models the real clock's lateness itself
// (engine.GRPCRealClock), so the frames keep exact interval boundaries.
func (s *Sim) tickAtUs(k int64) int64 { return k * s.intervalNs / 1000 }

// setClockUs sets the detector's clock to t microseconds.
func (s *Sim) setClockUs(t int64) {
	s.clock.Ms, s.clock.SubMsNs = t/1000, t%1000*1000
}

// closeInterval fires the detector's interval timer and collects the frame.
func (s *Sim) closeInterval(at int64) *Interval {
	ns := s.tick * s.intervalNs // the tick's exact time (s.tick counts it)
	s.clock.Ms, s.clock.SubMsNs = ns/1_000_000, ns%1_000_000
	for i := range s.hosts {
		s.flushOK(&s.hosts[i])
	}
	rep := s.det.Tick()
	iv := &s.out
	iv.StartMs, iv.EndMs = s.tickAtUs(s.tick-1)/1000, at/1000
	iv.Tick = rep
	s.events = s.det.DrainEvents(s.events[:0])
	iv.Events = s.events
	s.work.Events += uint64(len(s.events))
	for i := range s.hosts {
		h := &s.hosts[i]
		iv.Hosts[i] = HostInterval{Attempts: h.attempts, Failed: h.failedAttempts, InFlight: h.active, FailedActiveHC: h.failedHC, DegradedActiveHC: h.degradedHC}
		if h.failedAttempts > 0 {
			s.work.FailingHostTicks++
		}
		h.attempts, h.failedAttempts = 0, 0
	}
	iv.Clients = s.clients
	s.totals.Requests += s.clients.Requests
	s.totals.Failures += s.clients.Failures
	s.totals.NoHealthy += s.clients.NoHealthy
	s.totals.Retries += s.clients.Retries
	s.totals.RetryOverflow += s.clients.RetryOverflow
	iv.Clients.P50Ms, iv.Clients.P99Ms = s.hist.quantileMs(0.5), s.hist.quantileMs(0.99)
	iv.Panic = s.panicSeen
	iv.PanicAtEnd = s.lb.panic
	iv.Healthy = len(s.lb.healthy)
	iv.Cluster = s.ClusterStats()
	iv.Stats = s.det.Stats()
	s.clients = ClientInterval{}
	s.total.merge(&s.hist)
	s.hist.reset()
	s.panicSeen = s.lb.panic
	return iv
}
