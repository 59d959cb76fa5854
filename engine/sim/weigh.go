package sim

import (
	"math"
	"slices"
	"time"

	"outlierlab/engine"
)

// Weigh estimates, without running it, the Work a run of cluster c under
// the detector config od will do: the heavy-work budget weighs every run
// by it before the engine starts. It is an estimate meant to err high:
// the tests run extreme combinations of every setting and hold the Work
// each really did to at most a small factor of it (engine/scenario/weigh_test.go).
//
// What makes a run heavy is counted where it comes from, stretch by
// stretch of the run (the faults in force), host group by host group:
//
//   - requests (rps × the run's length);
//   - attempts: every failure a route retries is another attempt, up to
//     num_retries per request, as far as the retry circuit breaker (or the
//     retry budget) lets retries through. A failure is a fault's share on
//     the hosts it covers (least request sends up to twice their share to
//     failing hosts that answer fast), a host past its capacity shedding
//     (the more retries, the more load, the more shedding: solved to its
//     fixed point), or an attempt slower than a timeout. Ejection is left
//     out: it is what the detector may or may not do;
//   - detector events: consecutive_* streaks (as often as a host's
//     failure share makes a streak of that length), each tick's passes
//     (success rate finds at most the share of hosts Cantelli's
//     inequality allows below mean − factor × σ, failure percentage the
//     hosts whose share may reach the threshold), and the returns;
//   - the balancer's picks (previous_hosts picks again), health checks,
//     host-set rebuilds (an ejection or return visits every host), hosts ×
//     ticks, the hosts that fail in a tick, and the requests in flight at
//     once (each holds a slot).
//
// Each count is its mean plus three standard deviations of a Poisson
// count of that mean, which matters for short runs.
//
// A mesh's clients each do their own run (mesh.go): its weight is theirs
// summed, N detectors' worth (client 0 apart when it is hot; the others
// are alike).
func Weigh(c Cluster, od engine.Config) Work {
	n := c.ClientCount()
	if n == 1 {
		w := weigher{c: c, od: od}
		return w.weigh()
	}
	var sum Work
	hot := weigher{c: c.ClientCluster(0), od: od}
	sum.add(hot.weigh(), 1)
	other := weigher{c: c.ClientCluster(1), od: od}
	sum.add(other.weigh(), uint64(n-1))
	return sum
}

type weigher struct {
	c  Cluster
	od engine.Config
	// endS is the run's length in seconds (its last tick), ticks its
	// ticks, intervalS the interval's length.
	endS, ticks, intervalS float64
}

// The estimate's own parameters.
const (
	// weighSigmas is how many standard deviations of a Poisson count the
	// estimate adds to its mean.
	weighSigmas = 3
	// fixedPointSteps bounds the capacity fixed point's iteration (it
	// converges in a few dozen steps; each is cheap).
	fixedPointSteps = 200
)

func (w *weigher) weigh() Work {
	c, od := &w.c, &w.od
	n := float64(max(c.Hosts, 1))
	intervalNs := od.IntervalMs * 1_000_000
	if c.Dialect == engine.DialectGRPC {
		intervalNs = od.GRPCIntervalNs()
	}
	intervalUs := max(intervalNs/1000, 1)
	ticks := max(c.Duration.Microseconds()/intervalUs, 1)
	w.ticks = float64(ticks)
	w.intervalS = float64(intervalUs) / 1e6
	w.endS = w.ticks * w.intervalS

	var sum struct {
		arrivals, attempts, retries, failures, streaks, far float64
		slots, failingHostTicks, passes, hcFailHosts        float64
	}
	lambda := max(c.RPS, 0)
	sgs := w.stretches()
	solved := make([]steadyState, len(sgs))
	for i, sg := range sgs {
		d := sg.to - sg.from
		if d <= 0 {
			continue
		}
		// A fault that comes and goes makes the same stretch again.
		if same := slices.IndexFunc(sgs[:i], func(o stretch) bool { return slices.Equal(o.groups, sg.groups) }); same >= 0 {
			solved[i] = solved[same]
		} else {
			solved[i] = w.steady(sg, lambda)
		}
		st := &solved[i]
		// The ticks the stretch covers; one it only touches counts whole.
		ticks := d/w.intervalS + 1
		sum.arrivals += lambda * d
		sum.attempts += st.attempts * d
		sum.retries += (st.attempts - lambda) * d
		sum.failures += st.attempts * st.fail * d
		sum.streaks += st.attempts * st.streaks * d
		// The ring's window runs from the last event it let go, so at a
		// low rate a request comes after the ring has sat idle past its
		// window, and its attempts go to the heap as well: as often as a
		// gap between requests passes the window.
		// Requests that come after such a gap are λ·e^(−λ·window) a
		// second, at most 1/(e·window) (at λ = 1/window); counted at that
		// most past it, the count grows with the rate.
		idle := lambda * math.Exp(-lambda*farWindowS)
		if lambda > 1/farWindowS {
			idle = 1 / (math.E * farWindowS)
		}
		sum.far += (st.attempts*st.far + st.attempts/max(lambda, 1e-9)*idle) * d
		sum.slots = max(sum.slots, st.inFlight)
		sum.failingHostTicks += st.failingHosts * ticks
		sum.passes += st.passes * ticks
		sum.hcFailHosts = max(sum.hcFailHosts, sg.hcFailHosts)
	}
	poisson := func(mean float64) float64 { return mean + weighSigmas*math.Sqrt(max(mean, 0)) + 1 }
	arrivals := poisson(sum.arrivals)
	attempts := poisson(sum.attempts)
	failures := poisson(sum.failures)
	retries := poisson(sum.retries)
	streaks := 0.0
	if sum.streaks > 0 {
		// At most a streak every k failures per detector.
		streaks = min(poisson(sum.streaks), failures*w.streaksPer(hostGroup{}, 1))
	}
	// A host fails in a tick only if it fails some attempt there.
	failingHostTicks := min(sum.failingHostTicks, failures)

	checks := 0.0
	if c.HealthCheck.Enabled && c.HealthCheck.Interval > 0 {
		checks = n * math.Ceil(w.endS/c.HealthCheck.Interval.Seconds()+1)
	}
	passes := w.passCap(poisson(sum.passes), attempts, failingHostTicks)
	// Events due past the ring's window: slow attempts, and each health
	// check's next (its interval), and retries whose backoff may be that
	// long.
	far := poisson(sum.far)
	if c.HealthCheck.Enabled && c.HealthCheck.Interval.Seconds() >= farWindowS {
		far += checks
	}
	if c.Retry.BackoffMax.Seconds() >= farWindowS {
		far += retries
	}
	ejections := w.ejections(streaks+passes, checks)
	hcChanges := checks * sum.hcFailHosts / n
	picks := max(attempts, arrivals)
	if c.Retry.PreviousHosts {
		picks += retries * float64(c.Retry.HostSelectionRetryMaxAttempts)
	}
	return Work{
		Arrivals:     ceilU(arrivals),
		Attempts:     ceilU(attempts),
		Picks:        ceilU(picks),
		HealthChecks: ceilU(checks),
		// Every detection, and a return for every ejection.
		Events:  ceilU(streaks + passes + ejections),
		Streaks: ceilU(streaks),
		// The set is built once at the start, then at every ejection, return
		// and health change.
		Rebuilds:         ceilU(n * (1 + 2*ejections + hcChanges)),
		HostTicks:        ceilU(n * w.ticks),
		FailingHostTicks: ceilU(failingHostTicks),
		Slots:            ceilU(poisson(sum.slots)),
		// A pending event per request in flight and a check per host; the
		// far heap's slice may hold twice what it held at most.
		QueueNodes: ceilU(2 * (poisson(sum.slots) + n)),
		FarEvents:  ceilU(far),
	}
}

// passCap bounds the passes' detections by what each needs: a host
// that failed in the tick (success rate below the mean, a failure
// percentage past a threshold above 0), or with a threshold of 0 a host
// with traffic (at most a host a tick and an attempt), each origin's
// passes apart.
func (w *weigher) passCap(passes, attempts, failingHostTicks float64) float64 {
	od := &w.od
	origins := 1.0
	if od.SplitExternalLocalOriginErrors {
		origins = 2
	}
	fp := failingHostTicks
	if w.fpThresholdZero() {
		fp = min(float64(max(w.c.Hosts, 1))*w.ticks, attempts)
	}
	return min(passes, origins*(failingHostTicks+fp))
}

// fpThresholdZero: failure percentage finds every host with traffic
// wanting (Envoy compares ≥ threshold; grpc-go compares >).
func (w *weigher) fpThresholdZero() bool {
	return w.od.FailurePercentageThreshold == 0 && w.c.Dialect != engine.DialectGRPC
}

// ejections bounds the ejections (and so the returns) among the
// detections: a host ejected stays out until a tick at least
// base_ejection_time later, or a passing health check that unejects it;
// two passes may eject a host in one tick (success rate and failure
// percentage: Envoy does not check that it is out already).
func (w *weigher) ejections(detections, checks float64) float64 {
	od := &w.od
	n := float64(max(w.c.Hosts, 1))
	perHost := 1 + w.endS/max(float64(od.BaseEjectionTimeMs)/1000, w.intervalS)
	if od.SuccessfulActiveHealthCheckUnejectHost {
		perHost += checks / n
	}
	return min(detections, 2*n*perHost)
}

// stretch is a part of the run with one set of faults in force, its
// hosts grouped by what the faults make of them (a fleet of fifty is one
// or two groups, so the fixed point's steps cost little).
type stretch struct {
	from, to float64 // seconds
	groups   []hostGroup
	// hcFailHosts is how many hosts' health checks fail here.
	hcFailHosts float64
}

// hostGroup is n hosts alike: the failing share (the first failing
// window's, as the simulator takes it), its pattern and kind, the added
// latency (s) and the capacity (0: unlimited).
type hostGroup struct {
	n        float64
	share    float64
	pattern  Pattern
	kind     FailureKind
	addedS   float64
	capacity float64
}

// stretches cuts the run at every fault window's edges.
func (w *weigher) stretches() []stretch {
	c := &w.c
	cuts := []float64{0, w.endS}
	for _, f := range c.Faults {
		cuts = append(cuts, f.From.Seconds())
		if f.Until > 0 {
			cuts = append(cuts, f.Until.Seconds())
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	// Each host's own windows, in list order (the order decides which
	// failing window a host takes).
	mine := make([][]int, c.Hosts)
	for fi := range c.Faults {
		for h := range c.Hosts {
			if c.Faults[fi].AppliesTo(h, c.Hosts) {
				mine[h] = append(mine[h], fi)
			}
		}
	}
	var out []stretch
	for i := 0; i+1 < len(cuts); i++ {
		from, to := cuts[i], min(cuts[i+1], w.endS)
		if from >= w.endS {
			break
		}
		sg := stretch{from: from, to: to}
		for h := range c.Hosts {
			g := hostGroup{n: 1, capacity: c.CapacityRPS}
			failing, hcFails := false, false
			for _, fi := range mine[h] {
				f := &c.Faults[fi]
				if from < f.From.Seconds() || (f.Until > 0 && from >= f.Until.Seconds()) {
					continue
				}
				if !failing && f.Share > 0 {
					failing, g.share, g.pattern, g.kind = true, f.Share, f.Pattern, f.Kind
				}
				hcFails = hcFails || f.HealthCheckFails
				g.addedS += f.AddedLatency.Seconds()
				if f.CapacityRPS > 0 && (g.capacity == 0 || f.CapacityRPS < g.capacity) {
					g.capacity = f.CapacityRPS
				}
			}
			if hcFails {
				sg.hcFailHosts++
			}
			// A group of hosts alike but for their count.
			if k := slices.IndexFunc(sg.groups, func(o hostGroup) bool { o.n = 1; return o == g }); k >= 0 {
				sg.groups[k].n++
			} else {
				sg.groups = append(sg.groups, g)
			}
		}
		out = append(out, sg)
	}
	return out
}

// steadyState is a stretch's traffic once retries and shedding settle.
type steadyState struct {
	shares
	attempts float64 // attempts per second
	inFlight float64 // requests in flight at once
	// failingHosts are the hosts that may fail an attempt in a tick;
	// passes the detections a tick's passes may make.
	failingHosts, passes float64
}

// shares are what part of a stretch's attempts fail, what part the
// route retries (never more than fail), what part goes to a host that
// hangs, and how many consecutive_* streaks an attempt completes.
type shares struct {
	fail, retried, hang, streaks float64
	// far is the part of attempts that end more than the event ring's
	// window after they start (farWindowS): they wait in the far heap.
	far float64
	// groups are each group's own, in the stretch's order.
	groups []groupShare
}

// groupShare is a host group at the stretch's steady state: the part of
// all attempts its hosts take, and the chance an attempt on one fails.
type groupShare struct {
	weight, fail float64
}

// steady solves a stretch's attempt rate: A = λ·(attempts per request),
// where the retried share depends on A through shedding. It starts from
// the most attempts there can be and comes down to the greatest fixed
// point, so it never settles below the one the run finds.
func (w *weigher) steady(sg stretch, lambda float64) steadyState {
	c := &w.c
	retries := 0
	if c.Retry.NumRetries > 0 && c.Retry.RetryOn != 0 {
		retries = int(c.Retry.NumRetries)
	}
	a := lambda * float64(retries+1)
	for range fixedPointSteps {
		next := lambda * w.perRequest(w.shares(sg, a).retried, retries, lambda)
		done := math.Abs(next-a) <= 1e-7*max(a, 1)
		a = next
		if done {
			break
		}
	}
	st := steadyState{shares: w.shares(sg, a), attempts: a}
	st.inFlight = lambda * w.requestLife(sg, st, lambda)
	for k, g := range sg.groups {
		if st.groups[k].fail > 0 {
			st.failingHosts += g.n
		}
	}
	st.passes = w.passes(sg, st)
	return st
}

// perRequest is the attempts per request with a retried share p and at
// most retries retries each, as far as the retry breaker lets them:
// Little's law holds its retries in flight (rate × how long each is held,
// its backoff at least) to max_retries, or to the retry budget's share of
// the requests in flight.
func (w *weigher) perRequest(p float64, retries int, lambda float64) float64 {
	per := 1.0
	for k, pk := 1, p; k <= retries; k, pk = k+1, pk*p {
		per += pk
	}
	if lambda <= 0 {
		return per
	}
	rp := &w.c.Retry
	hold := backoffMeanS(rp.BackoffBase.Milliseconds())
	limit := math.Inf(1) // retries per second the breaker lets through
	switch {
	case hold <= 0:
	case rp.Budget:
		if q := rp.BudgetPercent / 100; q < 1 {
			limit = lambda*q/(1-q) + float64(rp.MinRetryConcurrency)/hold
		}
	default:
		limit = float64(rp.MaxRetries) / hold
	}
	return 1 + min(per-1, limit/lambda)
}

// backoffMeanS is the mean of the first retry's backoff (random % base
// ms), in seconds: the least time a retry holds its place in the breaker.
func backoffMeanS(baseMs int64) float64 {
	if baseMs <= 1 {
		return 0
	}
	return float64(baseMs-1) / 2 / 1000
}

// shares is what part of a stretch's attempts fail at a attempts per
// second, and what part the route retries.
func (w *weigher) shares(sg stretch, a float64) shares {
	c := &w.c
	n := float64(max(c.Hosts, 1))
	perHost := a / w.serving(sg)
	// Least request may send hosts that fail fast up to twice their
	// share (either of its two samples); the others take what is left.
	covered := 0.0
	for _, g := range sg.groups {
		if g.share > 0 {
			covered += g.n
		}
	}
	m := covered / n
	// With priority levels a level may take all the load (P0 while it is
	// healthy, P1 once it is not), so a failing host may get up to a
	// share of the smallest level, not of the cluster: weighed so.
	nFail := n
	if lv := c.LevelSizes(); len(lv) > 1 {
		nFail = float64(slices.Min(lv))
	}
	boost, rest := 1.0, 1.0
	if c.LB == LeastRequest && covered > 0 {
		boost = 2 - m
		if m < 1 {
			rest = (1 - m*boost) / (1 - m)
		}
	}
	// Shedding's 503s and per-try timeouts (a local reset) are retried
	// under every retry_on but connect-failure alone; a route timeout
	// ends the request.
	retriesSlow := c.Retry.RetryOn&(RetryOn5xx|RetryOnGatewayError|RetryOnReset) != 0
	perTry, route := c.Retry.PerTryTimeout.Seconds(), c.Retry.RouteTimeout.Seconds()
	var sh shares
	sh.groups = make([]groupShare, len(sg.groups))
	for k, g := range sg.groups {
		weight := g.n / n * rest
		if g.share > 0 {
			weight = min(1, g.n/nFail*boost)
		}
		lat := c.Latency.Base.Seconds() + g.addedS
		var shed, timedOut, routeOut float64
		if g.capacity > 0 && perHost > 0 {
			// The host as an M/M/1 queue holding K = capacity × the
			// queue's limit: its losses are shed (with Poisson arrivals
			// a host sheds well before its mean load reaches capacity),
			// and an attempt waits past x when x·capacity are ahead of it.
			// M/M/1 varies more than the simulator's fixed service time,
			// so both err high.
			rho := perHost / g.capacity
			k := max(1, g.capacity*c.QueueLimit.Seconds())
			shed = 1 / (k + 1)
			if math.Abs(rho-1) > 1e-9 {
				shed = (1 - rho) * math.Pow(rho, k) / (1 - math.Pow(rho, k+1))
			}
			if math.IsNaN(shed) { // ρ^k past float64: all but capacity is shed
				shed = 1 - 1/rho
			}
			// No attempt waits past the queue's limit: it is shed instead.
			waits := func(x float64) float64 {
				if x >= c.QueueLimit.Seconds() {
					return 0
				}
				return min(1, math.Pow(rho, max(0, x)*g.capacity))
			}
			if perTry > 0 {
				timedOut = (1 - shed) * waits(perTry-lat)
			}
			if route > 0 {
				routeOut = (1 - shed) * waits(route-lat)
			}
		}
		if perTry > 0 {
			timedOut += slowerThan(perTry-lat, c.Latency)
		}
		if route > 0 {
			routeOut += slowerThan(route-lat, c.Latency)
		}
		slow := min(1, shed+timedOut)
		fail := min(1, g.share+slow+routeOut)
		retried := 0.0
		if w.retriable(g.kind) {
			retried = g.share
		}
		if retriesSlow {
			retried += slow
		}
		retried = min(retried, fail)
		sh.groups[k] = groupShare{weight: weight, fail: fail}
		sh.fail += weight * fail
		sh.retried += weight * retried
		if g.kind == Timeout {
			sh.hang += weight * g.share
		}
		sh.streaks += weight * w.streaksPer(g, fail)
		sh.far += weight * w.farShare(g, lat, perHost)
	}
	sh.fail, sh.retried, sh.hang, sh.far = min(1, sh.fail), min(1, sh.retried), min(1, sh.hang), min(1, sh.far)
	return sh
}

// farWindowS is the event ring's window (queue.go: farWindow steps of
// 2^farShift µs): an event due later goes to the far heap.
const farWindowS = float64(farWindow<<farShift) / 1e6

// farShare is the chance an attempt on a host of group g (base latency
// lat, perHost attempts a second) ends past the ring's window: it
// hangs, or its latency or its wait in the host's queue passes the
// window, unless a timeout within the window cuts it first.
func (w *weigher) farShare(g hostGroup, lat, perHost float64) float64 {
	c := &w.c
	cut := math.Inf(1)
	for _, t := range []time.Duration{c.Retry.PerTryTimeout, c.Retry.RouteTimeout} {
		if t > 0 {
			cut = min(cut, t.Seconds())
		}
	}
	if cut < farWindowS {
		return 0
	}
	hang := 0.0
	if g.kind == Timeout {
		hang = g.share
	}
	slow := slowerThan(farWindowS-lat, c.Latency)
	if g.capacity > 0 && farWindowS-lat < c.QueueLimit.Seconds() {
		slow += min(1, math.Pow(perHost/g.capacity, max(0, farWindowS-lat)*g.capacity))
	}
	return hang + (1-hang)*min(1, slow)
}

// serving is the fewest hosts that take a stretch's traffic, so the
// most each may take: the ejection cap lets at most its share out, and
// failed health checks take theirs (ejected hosts shed nothing: they
// take nothing); but with fewer healthy hosts than the panic threshold
// the balancer sends to every host (gRPC has no panic).
func (w *weigher) serving(sg stretch) float64 {
	c := &w.c
	n := float64(max(c.Hosts, 1))
	pct := float64(min(w.od.MaxEjectionPercent, 100))
	out := math.Floor(n * pct / 100)
	if c.Dialect == engine.DialectGRPC {
		out = math.Ceil(n * pct / 100)
	}
	if w.od.AlwaysEjectOneHost {
		out = max(out, 1)
	}
	if c.HealthCheck.Enabled {
		out += sg.hcFailHosts
	}
	healthy := max(n-out, 1)
	if t := float64(min(c.HealthyPanicThreshold, 100)); t > 0 && c.Dialect != engine.DialectGRPC {
		healthy = max(healthy, math.Ceil(n*t/100-1e-9))
	}
	if lv := c.LevelSizes(); len(lv) > 1 {
		// One level may serve everything (see shares).
		healthy = min(healthy, float64(slices.Min(lv)))
	}
	return min(healthy, n)
}

// streaksPer is how many consecutive_* detections an attempt on a host
// of group g completes when it fails with chance p: a streak of k
// failures in a row at random comes (1−p)·p^k/(1−p^k) times an attempt
// (once every k when every attempt fails); a fault spread evenly makes
// runs of at most ⌈s/(1−s)⌉ failures, one run per success. Each
// detector with a threshold counts its own streaks (gRPC has none).
func (w *weigher) streaksPer(g hostGroup, p float64) float64 {
	if w.c.Dialect == engine.DialectGRPC || p <= 0 {
		return 0
	}
	total := 0.0
	for _, t := range []uint32{w.od.Consecutive5xx, w.od.ConsecutiveGatewayFailure, w.od.ConsecutiveLocalOriginFailure} {
		if t == 0 {
			continue
		}
		k := float64(t)
		rate := 1 / k
		if p < 1 {
			pk := math.Pow(p, k)
			rate = (1 - p) * pk / (1 - pk)
		}
		if s := g.share; g.pattern == Interleaved && s > 0 {
			even := 1 / k
			if s < 1 {
				even = min(s, 1-s) * math.Floor(math.Ceil(s/(1-s)-1e-9)/k)
			}
			rate = max(rate, even)
		}
		total += rate
	}
	return total
}

// passes bounds a tick's detections in a stretch: success rate finds
// hosts that failed below the mean, at most the share of the hosts it
// judges that Cantelli's inequality lets lie factor × σ below their mean
// (1/(1+factor²)); failure percentage finds the hosts whose failures
// reach the threshold, each with the Chernoff bound on its count of the
// interval's attempts. A pass needs its minimum of hosts, and judges a
// host only with its request volume (a Poisson count of the host's
// attempts); each origin passes apart in split mode.
func (w *weigher) passes(sg stretch, st steadyState) float64 {
	od, c := &w.od, &w.c
	n := float64(max(c.Hosts, 1))
	origins := 1.0
	if od.SplitExternalLocalOriginErrors {
		origins = 2
	}
	var sr, fp float64
	for k, g := range sg.groups {
		gs := st.groups[k]
		m := st.attempts * w.intervalS * gs.weight / g.n // a host's attempts in a tick
		if gs.fail > 0 && n >= float64(od.SuccessRateMinimumHosts) {
			sr += g.n * atLeast(m, float64(od.SuccessRateRequestVolume))
		}
		if n < float64(od.FailurePercentageMinimumHosts) {
			continue
		}
		judged := atLeast(m, max(float64(od.FailurePercentageRequestVolume), 1))
		t := float64(min(od.FailurePercentageThreshold, 100)) / 100
		switch {
		case w.fpThresholdZero():
			fp += g.n * judged
		case gs.fail <= 0:
		case gs.fail >= t:
			fp += g.n * judged
		default:
			count := max(m, float64(od.FailurePercentageRequestVolume), 1)
			fp += g.n * judged * math.Exp(-count*kl(t, gs.fail))
		}
	}
	if f := od.StdevFactor(); f > 0 {
		sr = min(sr, n/(1+f*f))
	}
	return origins * (sr + fp)
}

// atLeast bounds the chance a Poisson count of mean m reaches v
// (Chernoff: e^−m (e·m/v)^v past the mean; 1 up to it).
func atLeast(m, v float64) float64 {
	if v <= m || v <= 0 {
		return 1
	}
	if m <= 0 {
		return 0
	}
	return min(1, math.Exp(-m+v*(1+math.Log(m/v))))
}

// kl is the Kullback–Leibler divergence of Bernoulli(t) from
// Bernoulli(p), the exponent of a binomial's tail at t.
func kl(t, p float64) float64 {
	d := 0.0
	if t > 0 {
		d += t * math.Log(t/p)
	}
	if t < 1 {
		d += (1 - t) * math.Log((1-t)/(1-p))
	}
	return max(d, 0)
}

// retriable says whether the route retries a fault's failures.
func (w *weigher) retriable(k FailureKind) bool {
	on := w.c.Retry.RetryOn
	switch k {
	case ConnectFailure:
		return on&(RetryOn5xx|RetryOnGatewayError|RetryOnReset|RetryOnConnectFailure) != 0
	case Reset:
		return on&(RetryOn5xx|RetryOnGatewayError|RetryOnReset) != 0
	case Timeout:
		// A hang is retried only once the per-try timeout cuts it.
		return w.c.Retry.PerTryTimeout > 0 && on&(RetryOn5xx|RetryOnGatewayError|RetryOnReset) != 0
	case HTTP500:
		return on&RetryOn5xx != 0
	}
	return on&(RetryOn5xx|RetryOnGatewayError) != 0
}

// slowerThan is the share of responses slower than x seconds past the
// base latency: the exponential jitter, and the tail on its share.
func slowerThan(x float64, l Latency) float64 {
	j := l.Jitter.Seconds()
	tail := func(y float64) float64 {
		switch {
		case y < 0:
			return 1
		case j <= 0:
			return 0
		}
		return math.Exp(-y / j)
	}
	return (1-l.TailShare)*tail(x) + l.TailShare*tail(x-l.Tail.Seconds())
}

// requestLife is how long a request stays in flight on average (its
// slot held): its attempts' latency (queueing included) and backoffs,
// or, on a host that hangs, until a timeout cuts it (the run's end, with
// none); never past the route timeout.
func (w *weigher) requestLife(sg stretch, st steadyState, lambda float64) float64 {
	c := &w.c
	added, queues := 0.0, false
	for _, g := range sg.groups {
		added, queues = max(added, g.addedS), queues || g.capacity > 0
	}
	attempt := c.Latency.Base.Seconds() + c.Latency.Tail.Seconds() + 20*c.Latency.Jitter.Seconds() + added
	if queues {
		attempt += c.QueueLimit.Seconds()
	}
	hang := w.endS
	if c.Retry.PerTryTimeout > 0 {
		attempt = min(attempt, c.Retry.PerTryTimeout.Seconds())
		hang = c.Retry.PerTryTimeout.Seconds()
	}
	per := st.attempts / max(lambda, 1e-9)
	backoff := c.Retry.BackoffMax.Seconds()
	life := per*attempt + (per-1)*backoff
	hung := float64(c.Retry.NumRetries+1)*hang + float64(c.Retry.NumRetries)*backoff
	if c.Retry.RouteTimeout > 0 {
		life = min(life, c.Retry.RouteTimeout.Seconds())
		hung = min(hung, c.Retry.RouteTimeout.Seconds())
	}
	return min((1-st.hang)*life+st.hang*hung, w.endS)
}

// ceilU is a non-negative estimate as a count, saturating far below
// overflow (a budget compares it with ceilings in the tens of millions).
func ceilU(v float64) uint64 {
	switch {
	case !(v > 0):
		return 0
	case v > 1e15:
		return 1e15
	}
	return uint64(math.Ceil(v))
}
