package sim

import (
	"math"
	"slices"

	"outlierlab/engine"
)

// Weigh estimates, without running it, the Work a run of cluster c under
// the detector config od will do: the heavy-work budget weighs every run
// by it before the engine starts. It is an estimate meant to err high:
// the tests run extreme combinations of every setting and hold the Work
// each really did to at most a small factor of it (weigh_test.go).
//
// What makes a run heavy is counted where it comes from:
//
//   - requests (rps × the run's length, plus three standard deviations of
//     the Poisson count, which matter for short runs);
//   - attempts: every failure a route retries is another attempt, up to
//     num_retries per request, as far as the retry circuit breaker (or the
//     retry budget) lets retries through. A failure is a fault's share on
//     the hosts it covers (least request sends up to twice its share to a
//     failing host that answers fast), a host past its capacity shedding
//     (the more retries, the more load, the more shedding: solved to its
//     fixed point), or an attempt slower than the per-try timeout. Ejection
//     is left out: it is what the detector may or may not do;
//   - detector events: every consecutive_* streak reached is an event
//     (kept in the frame; an ejection cap that refuses them makes one per
//     streak), plus each pass's detections at the ticks and the returns;
//   - the balancer's picks (previous_hosts picks again), health checks,
//     host-set rebuilds (an ejection or return visits every host), hosts ×
//     ticks, and the requests in flight at once (each holds a slot).
func Weigh(c Cluster, od engine.Config) Work {
	w := weigher{c: c, od: od}
	return w.weigh()
}

type weigher struct {
	c  Cluster
	od engine.Config
	// endS is the run's length in seconds (its last tick), ticks its ticks.
	endS  float64
	ticks float64
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
	w.endS = float64(ticks) * float64(intervalUs) / 1e6

	var out struct {
		arrivals, attempts, retries, failures float64
		slots, failingHostTicks, hcFailHosts  float64
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
		same := slices.IndexFunc(sgs[:i], func(o stretch) bool { return slices.Equal(o.groups, sg.groups) })
		if same >= 0 {
			solved[i] = solved[same]
		} else {
			solved[i] = w.steady(sg, lambda)
		}
		st := solved[i]
		out.arrivals += lambda * d
		out.attempts += st.attempts * d
		out.retries += (st.attempts - lambda) * d
		out.failures += st.attempts * st.fail * d
		out.slots = max(out.slots, st.inFlight)
		// Hosts whose rates a tick's passes may find wanting: those a
		// fault covers, or every host when any attempt may fail.
		out.failingHostTicks += sg.failingHosts(st.shares) * d / w.endS * w.ticks
		out.hcFailHosts = max(out.hcFailHosts, sg.hcFailHosts)
	}
	// Each count with the noise of a Poisson count of its mean.
	poisson := func(mean float64) float64 { return mean + weighSigmas*math.Sqrt(max(mean, 0)) + 1 }
	arrivals := poisson(out.arrivals)
	attempts := poisson(out.attempts)
	failures := poisson(out.failures)
	retries := poisson(out.retries)

	checks := 0.0
	if c.HealthCheck.Enabled && c.HealthCheck.Interval > 0 {
		checks = n * math.Ceil(w.endS/c.HealthCheck.Interval.Seconds()+1)
	}
	events, ejections := w.events(attempts, failures, out.failingHostTicks, checks)
	hcChanges := checks * out.hcFailHosts / n
	picks := max(attempts, arrivals)
	if c.Retry.PreviousHosts {
		picks += retries * float64(c.Retry.HostSelectionRetryMaxAttempts)
	}
	return Work{
		Arrivals:     ceilU(arrivals),
		Attempts:     ceilU(attempts),
		Picks:        ceilU(picks),
		HealthChecks: ceilU(checks),
		Events:       ceilU(events),
		// The set is built once at the start, then at every ejection, return
		// and health change.
		Rebuilds:  ceilU(n * (1 + 2*ejections + hcChanges)),
		HostTicks: ceilU(n * w.ticks),
		Slots:     ceilU(poisson(out.slots)),
		// A pending event per request in flight and a check per host; the
		// far heap's slice may hold twice what it held at most.
		QueueNodes: ceilU(2 * (poisson(out.slots) + n)),
	}
}

// events bounds the detector's events: consecutive streaks (a streak of
// consecutive_X failures on a host is one detection, whatever the cap or
// the enforcement make of it), each tick's passes, and one return per
// ejection. A pass judges only the hosts that had traffic in the
// interval, and finds one wanting only if it failed there (success rate
// below the mean, a failure percentage past a threshold above 0), so a
// pass's detections are at most the failing hosts' ticks and the
// failures; with a failure_percentage_threshold of 0 every host with
// traffic is found wanting, at most once a tick and once an attempt.
// Success rate and failure percentage each pass over the external and,
// in split mode, the local-origin results. ejections bounds the returns:
// a host is ejected again only once returned, at a tick or a check.
func (w *weigher) events(attempts, failures, failingHostTicks, checks float64) (events, ejections float64) {
	od := &w.od
	n := float64(max(w.c.Hosts, 1))
	perFailure := 0.0
	if w.c.Dialect != engine.DialectGRPC { // gRPC has no consecutive detectors
		for _, t := range []uint32{od.Consecutive5xx, od.ConsecutiveGatewayFailure, od.ConsecutiveLocalOriginFailure} {
			if t > 0 {
				perFailure += 1 / float64(t)
			}
		}
	}
	consecutive := failures * perFailure
	origins := 1.0
	if od.SplitExternalLocalOriginErrors {
		origins = 2
	}
	failing := min(failingHostTicks, failures)
	fp := failing
	if od.FailurePercentageThreshold == 0 && w.c.Dialect != engine.DialectGRPC {
		fp = min(n*w.ticks, attempts) // grpc-go compares strictly: > 0
	}
	atTicks := origins * (failing + fp)
	// A host ejected stays out until a tick at least base_ejection_time
	// later, or a passing health check that unejects it.
	perHost := 1 + w.endS/max(float64(od.BaseEjectionTimeMs)/1000, w.endS/w.ticks)
	if od.SuccessfulActiveHealthCheckUnejectHost {
		perHost += checks / n
	}
	// Two passes may eject a host in one tick (success rate and failure
	// percentage: Envoy does not check that it is out already).
	ejections = min(consecutive+atTicks, 2*n*perHost)
	return consecutive + atTicks + ejections, ejections
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
// window's, as the simulator takes it) and its kind, the added latency
// (s) and the capacity (0: unlimited).
type hostGroup struct {
	n        float64
	share    float64
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
					failing, g.share, g.kind = true, f.Share, f.Kind
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
}

// shares are what part of a stretch's attempts fail, and what part the
// route retries (never more than fail); anyFail: every host may fail
// (shedding or timeouts), not only those a fault covers.
type shares struct {
	fail, retried float64
	anyFail       bool
	// hang is the part of attempts sent to a host that never answers.
	hang float64
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
	// Hosts that take traffic: the ejection cap lets at most its share
	// out (ejected hosts shed nothing: they take nothing).
	pct := float64(min(w.od.MaxEjectionPercent, 100))
	out := math.Floor(n * pct / 100)
	if c.Dialect == engine.DialectGRPC {
		out = math.Ceil(n * pct / 100)
	}
	if w.od.AlwaysEjectOneHost {
		out = max(out, 1)
	}
	perHost := a / max(n-out, 1)

	// Faults: the share of attempts on failing hosts that fail, and of
	// those how many the route retries. Least request may send a host
	// that fails fast up to twice its share (both of its samples).
	var faultMass, retriedMass, hangMass, covered, shed, timedOut, routeOut float64
	perTry, route := c.Retry.PerTryTimeout.Seconds(), c.Retry.RouteTimeout.Seconds()
	for _, g := range sg.groups {
		if s := g.share; s > 0 {
			faultMass += g.n * s
			covered += g.n
			if w.retriable(g.kind) {
				retriedMass += g.n * s
			}
			if g.kind == Timeout {
				hangMass += g.n * s
			}
		}
		lat := c.Latency.Base.Seconds() + g.addedS
		share := g.n / n // of the attempts
		if capRPS := g.capacity; capRPS > 0 && perHost > 0 {
			// The host as an M/M/1 queue holding K = capacity × the
			// queue's limit: its losses are shed (with Poisson arrivals
			// a host sheds well before its mean load reaches capacity),
			// and an attempt waits past x when x·capacity are ahead of it.
			// M/M/1 varies more than the simulator's fixed service time,
			// so both err high.
			rho := perHost / capRPS
			k := max(1, capRPS*c.QueueLimit.Seconds())
			loss := 1 / (k + 1)
			if math.Abs(rho-1) > 1e-9 {
				loss = (1 - rho) * math.Pow(rho, k) / (1 - math.Pow(rho, k+1))
			}
			if math.IsNaN(loss) { // ρ^k past float64: all but capacity is shed
				loss = 1 - 1/rho
			}
			shed += share * loss
			served := 1 - loss
			waits := func(x float64) float64 { return min(1, math.Pow(rho, max(0, x)*capRPS)) }
			if perTry > 0 {
				timedOut += share * served * waits(perTry-lat)
			}
			if route > 0 {
				routeOut += share * served * waits(route-lat)
			}
		}
		if perTry > 0 {
			timedOut += share * slowerThan(perTry-lat, c.Latency)
		}
		if route > 0 {
			routeOut += share * slowerThan(route-lat, c.Latency)
		}
	}
	fm, rm, hm := faultMass/n, retriedMass/n, hangMass/n
	if c.LB == LeastRequest && covered > 0 {
		m := covered / n
		fm, rm, hm = fm*(2-m), rm*(2-m), hm*(2-m)
	}
	// Shedding's 503s and per-try timeouts (a local reset) are retried
	// under every retry_on but connect-failure alone; a route timeout
	// ends the request.
	sd := shed + timedOut
	if c.Retry.RetryOn&(RetryOn5xx|RetryOnGatewayError|RetryOnReset) != 0 {
		rm += sd
	}
	fail := min(1, fm+sd+routeOut)
	return shares{fail: fail, retried: min(1, rm, fail), anyFail: sd+routeOut > 0, hang: min(1, hm)}
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

// failingHosts is how many hosts' rates may fall in a stretch.
func (sg stretch) failingHosts(st shares) float64 {
	k := 0.0
	for _, g := range sg.groups {
		if st.anyFail || g.share > 0 {
			k += g.n
		}
	}
	return k
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
