package sim

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"outlierlab/engine"
)

// quietCluster is a small cluster with a fixed 10 ms latency and no
// jitter, so tests can reason about every attempt.
func quietCluster(hosts int, rps float64, d time.Duration) Cluster {
	c := DefaultCluster()
	c.Hosts, c.RPS, c.Duration = hosts, rps, d
	c.Latency = Latency{Base: 10 * time.Millisecond}
	return c
}

// runAll runs a simulation to the end and keeps a deep copy of every interval.
func runAll(t testing.TB, s *Sim) []Interval {
	t.Helper()
	var out []Interval
	for {
		iv, ok := s.Next()
		if !ok {
			return out
		}
		c := *iv
		c.Hosts = append([]HostInterval(nil), iv.Hosts...)
		c.Events = append([]engine.Event(nil), iv.Events...)
		c.Tick = nil
		out = append(out, c)
	}
}

func newSim(t testing.TB, c Cluster, od engine.Config, seed uint64) *Sim {
	t.Helper()
	s, err := New(c, od, seed)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func allEvents(ivs []Interval) []engine.Event {
	var out []engine.Event
	for _, iv := range ivs {
		out = append(out, iv.Events...)
	}
	return out
}

type step struct {
	res  engine.Result
	code int
}

func (s step) String() string { return fmt.Sprintf("%d/%d", s.res, s.code) }

// Every attempt reports to its host exactly as Envoy's router does
// (envoy-semantics.md §3.4), and the detector reads each report the way
// non-split mode maps it: a timeout is a 504 and a connect failure a 503
// (both 5xx and gateway errors), a 500 is 5xx only.
func TestRouterReportsPerAttempt(t *testing.T) {
	cs := engine.LocalOriginConnectSuccess
	cases := []struct {
		kind FailureKind
		// the reports of one failing attempt, in order
		want []step
		// the detector's first events for h0 (max_ejection_percent 100)
		events []string
	}{
		{HTTP500, []step{{cs, 0}, {engine.ExtOriginRequestFailed, 500}}, []string{"eject consecutive_5xx"}},
		{HTTP502, []step{{cs, 0}, {engine.ExtOriginRequestFailed, 502}}, []string{"detect consecutive_gateway_failure", "eject consecutive_5xx"}},
		{HTTP503, []step{{cs, 0}, {engine.ExtOriginRequestFailed, 503}}, []string{"detect consecutive_gateway_failure", "eject consecutive_5xx"}},
		{HTTP504, []step{{cs, 0}, {engine.ExtOriginRequestFailed, 504}}, []string{"detect consecutive_gateway_failure", "eject consecutive_5xx"}},
		// A refused connection never attaches a stream.
		{ConnectFailure, []step{{engine.LocalOriginConnectFailed, 0}}, []string{"detect consecutive_gateway_failure", "eject consecutive_5xx"}},
		// A reset comes after the stream attached.
		{Reset, []step{{cs, 0}, {engine.LocalOriginConnectFailed, 0}}, []string{"detect consecutive_gateway_failure", "eject consecutive_5xx"}},
		// The per-try timeout reports a local-origin timeout with 504.
		{Timeout, []step{{cs, 0}, {engine.LocalOriginTimeout, 504}}, []string{"detect consecutive_gateway_failure", "eject consecutive_5xx"}},
	}
	for _, tc := range cases {
		t.Run(tc.kind.String(), func(t *testing.T) {
			c := quietCluster(5, 50, 10*time.Second)
			c.Retry.PerTryTimeout = 200 * time.Millisecond
			c.Faults = []Fault{{Hosts: []int{0}, Share: 1, Kind: tc.kind}}
			od := engine.DefaultConfig()
			od.MaxEjectionPercent = 100
			s := newSim(t, c, od, 1)
			byReq := map[uint64][]step{}
			var order []uint64
			var okOthers int
			s.OnReport = func(r Report) {
				if r.Host != 0 {
					if r.Result == engine.ExtOriginRequestSuccess && r.Code == 200 {
						okOthers++
					}
					return
				}
				if _, seen := byReq[r.Request]; !seen {
					order = append(order, r.Request)
				}
				byReq[r.Request] = append(byReq[r.Request], step{r.Result, r.Code})
				if tc.kind == Timeout && r.Result == engine.LocalOriginTimeout {
					if got := s.ClusterStats().PerTryTimeout; got == 0 {
						t.Errorf("per-try timeout not counted")
					}
				}
			}
			ivs := runAll(t, s)
			if len(order) < 5 {
				t.Fatalf("h0 served %d requests", len(order))
			}
			for _, id := range order[:5] {
				if got := fmt.Sprint(byReq[id]); got != fmt.Sprint(tc.want) {
					t.Fatalf("request %d on h0 reported %s, want %s", id, got, fmt.Sprint(tc.want))
				}
			}
			if okOthers == 0 {
				t.Fatal("healthy hosts reported no 200")
			}
			var got []string
			for _, e := range allEvents(ivs) {
				if e.Host == "h0" && e.Kind != engine.EventUneject && len(got) < len(tc.events) {
					got = append(got, e.Kind.String()+" "+e.Detector.String())
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.events) {
				t.Fatalf("events %v, want %v", got, tc.events)
			}
		})
	}
}

// The timeout fires per_try_timeout after the stream attached.
func TestTimeoutAtPerTryTimeout(t *testing.T) {
	c := quietCluster(5, 50, 10*time.Second)
	c.Retry.PerTryTimeout = 250 * time.Millisecond
	c.Faults = []Fault{{Hosts: []int{0}, Share: 1, Kind: Timeout}}
	s := newSim(t, c, engine.DefaultConfig(), 3)
	attach := map[uint64]int64{}
	n := 0
	s.OnReport = func(r Report) {
		if r.Host != 0 {
			return
		}
		switch r.Result {
		case engine.LocalOriginConnectSuccess:
			attach[r.Request] = r.AtUs
		case engine.LocalOriginTimeout:
			n++
			if d := r.AtUs - attach[r.Request]; d != 250000 {
				t.Fatalf("timeout %d µs after attach, want 250000", d)
			}
		}
	}
	runAll(t, s)
	if n == 0 {
		t.Fatal("no timeouts")
	}
}

// A retry reports to the host it went to, not to the host that failed:
// with previous_hosts and round robin over three hosts the two picks are
// consecutive, so a retry never returns to h0, and every retry reports a
// success on the healthy host that served it.
func TestRetryReportsToItsOwnHost(t *testing.T) {
	c := quietCluster(3, 10, 20*time.Second)
	c.Retry.NumRetries, c.Retry.RetryOn, c.Retry.PreviousHosts = 1, RetryOn5xx, true
	c.Faults = []Fault{{Hosts: []int{0}, Share: 1, Kind: HTTP503}}
	s := newSim(t, c, engine.DefaultConfig(), 1)
	first := map[uint64]int{}
	retries := 0
	perHost := map[int]uint64{}
	s.OnReport = func(r Report) {
		if r.Result == engine.LocalOriginConnectSuccess {
			return
		}
		perHost[r.Host]++
		switch r.Attempt {
		case 0:
			first[r.Request] = r.Host
		case 1:
			retries++
			if h, ok := first[r.Request]; !ok || h != 0 || r.Host == 0 {
				t.Fatalf("request %d: first try on h%d, retry reported on h%d", r.Request, h, r.Host)
			}
			if r.Result != engine.ExtOriginRequestSuccess || r.Code != 200 {
				t.Fatalf("retry on healthy h%d reported %d/%d", r.Host, r.Result, r.Code)
			}
		}
	}
	var requests [3]uint64
	var failures uint64
	for {
		iv, ok := s.Next()
		if !ok {
			break
		}
		for i, h := range iv.Tick.Hosts {
			requests[i] += h.Requests
		}
		failures += iv.Clients.Failures
	}
	st := s.ClusterStats()
	if retries == 0 || st.RetrySent != uint64(retries) || st.RetrySuccess != uint64(retries) {
		t.Fatalf("retries %d, stats %+v", retries, st)
	}
	// The detector counted exactly the reports each host got.
	for i := range requests {
		if requests[i] > perHost[i] || perHost[i]-requests[i] > 1 {
			t.Errorf("h%d: detector counted %d, router reported %d", i, requests[i], perHost[i])
		}
	}
	if failures != 0 {
		t.Fatalf("%d client failures, retries should hide them all", failures)
	}
}

// previous_hosts: with random LB over three hosts a retry lands on the host
// that just failed with probability 1/3 without the predicate and 1/9 with
// it (two picks, the last one wins); with a single host, the last pick is
// used anyway.
func TestPreviousHosts(t *testing.T) {
	share := func(hosts int, predicate bool) (float64, int) {
		c := quietCluster(hosts, 200, 60*time.Second)
		c.LB = Random
		c.Retry.NumRetries, c.Retry.RetryOn, c.Retry.PreviousHosts = 1, RetryOn5xx, predicate
		c.Faults = []Fault{{Hosts: []int{0}, Share: 1, Kind: HTTP503}}
		od := engine.DefaultConfig()
		od.MaxEjectionPercent = 0
		s := newSim(t, c, od, 5)
		same, total := 0, 0
		s.OnReport = func(r Report) {
			if r.Attempt == 1 && r.Result != engine.LocalOriginConnectSuccess {
				total++
				if r.Host == 0 {
					same++
				}
			}
		}
		runAll(t, s)
		return float64(same) / float64(total), total
	}
	if p, n := share(3, false); n < 1000 || p < 0.28 || p > 0.39 {
		t.Errorf("without previous_hosts: %.3f of %d retries back on h0, want ≈ 1/3", p, n)
	}
	if p, n := share(3, true); n < 1000 || p < 0.07 || p > 0.16 {
		t.Errorf("with previous_hosts: %.3f of %d retries back on h0, want ≈ 1/9", p, n)
	}
	if p, n := share(1, true); n == 0 || p != 1 {
		t.Errorf("one host: %.3f of %d retries on h0, want all (last pick wins)", p, n)
	}
}

// The retry budget admits a retry only while active retries are below
// max(budget_percent% of active requests, min_retry_concurrency), and
// counts every refusal in upstream_rq_retry_overflow; without a budget the
// max_retries breaker (3) does.
func TestRetryAdmission(t *testing.T) {
	for _, budget := range []bool{true, false} {
		t.Run(fmt.Sprint("budget=", budget), func(t *testing.T) {
			c := quietCluster(10, 3000, 20*time.Second)
			c.Latency.Base = 40 * time.Millisecond
			c.Retry.NumRetries, c.Retry.RetryOn = 3, RetryOn5xx
			c.Retry.Budget, c.Retry.BudgetPercent, c.Retry.MinRetryConcurrency = budget, 20, 3
			c.Faults = []Fault{{AllHosts: true, Share: 0.5, Pattern: Bernoulli, Kind: HTTP503}}
			od := engine.DefaultConfig()
			od.MaxEjectionPercent = 0
			s := newSim(t, c, od, 9)
			var admitted, refused uint64
			s.onRetryAdmission = func(inFlight, retries int64, ok bool) {
				limit := int64(3)
				if budget {
					limit = max(int64(0.2*float64(inFlight)), 3)
				}
				if ok != (retries < limit) {
					t.Fatalf("inFlight %d retries %d: admitted %v", inFlight, retries, ok)
				}
				if ok {
					admitted++
				} else {
					refused++
				}
			}
			ivs := runAll(t, s)
			st := s.ClusterStats()
			if refused == 0 || admitted == 0 {
				t.Fatalf("admitted %d refused %d: the test does not exercise the limit", admitted, refused)
			}
			var clientRefusals uint64
			for _, iv := range ivs {
				clientRefusals += iv.Clients.RetryOverflow
			}
			if st.RetryOverflow != refused || clientRefusals != refused || st.RetrySent != admitted {
				t.Fatalf("stats %+v, clients' refusals %d, want overflow %d sent %d", st, clientRefusals, refused, admitted)
			}
		})
	}
}

// Panic: with max_ejection_percent 100 and four of six hosts ejected,
// fewer than half are healthy; the LB sends traffic to every host again,
// ejected ones included, and counts lb_healthy_panic per pick.
func TestPanicSendsTrafficToEjectedHosts(t *testing.T) {
	c := quietCluster(6, 600, 60*time.Second)
	c.Faults = []Fault{{Hosts: []int{0, 1, 2, 3}, From: 10 * time.Second, Share: 1, Kind: ConnectFailure}}
	od := engine.DefaultConfig()
	od.MaxEjectionPercent = 100
	s := newSim(t, c, od, 2)
	var wasEjected [6]bool // at the previous tick
	var last uint64
	panicTraffic, ejections := 0, 0
	for {
		iv, ok := s.Next()
		if !ok {
			break
		}
		if iv.Cluster.LbHealthyPanic < last {
			t.Fatal("lb_healthy_panic went down")
		}
		if iv.PanicAtEnd && iv.Healthy*2 >= 6 {
			t.Fatalf("%d ms: panic with %d healthy of 6", iv.EndMs, iv.Healthy)
		}
		for _, e := range iv.Events {
			if e.Kind == engine.EventEject {
				ejections++
			}
		}
		for i, h := range iv.Tick.Hosts {
			// Ejected for the whole interval, yet sent traffic: panic.
			if wasEjected[i] && h.Ejected && iv.Hosts[i].Attempts > 0 {
				if !iv.Panic || iv.Cluster.LbHealthyPanic <= last {
					t.Fatalf("%d ms: ejected h%d got %d attempts outside panic", iv.EndMs, i, iv.Hosts[i].Attempts)
				}
				panicTraffic++
			}
			wasEjected[i] = h.Ejected
		}
		last = iv.Cluster.LbHealthyPanic
	}
	// Four ejections (the fourth makes 2/6 healthy: panic); while ejected
	// the hosts keep failing in panic, but their consecutive detections are
	// ignored, so nothing is ejected twice until they are unejected.
	if panicTraffic < 4 || last == 0 || ejections < 4 {
		t.Fatalf("ejected hosts with panic traffic: %d, lb_healthy_panic %d, ejections %d", panicTraffic, last, ejections)
	}
}

// With healthy_panic_threshold 0 there is no panic: once every host is
// ejected requests fail with 503 no healthy upstream, which is never
// reported to outlier detection.
func TestNoHealthyUpstreamIsNotReported(t *testing.T) {
	c := quietCluster(2, 100, 30*time.Second)
	c.HealthyPanicThreshold = 0
	c.Faults = []Fault{{AllHosts: true, Share: 1, Kind: ConnectFailure}}
	od := engine.DefaultConfig()
	od.MaxEjectionPercent = 100
	s := newSim(t, c, od, 4)
	reports := uint64(0)
	s.OnReport = func(Report) { reports++ }
	ivs := runAll(t, s)
	var requests, noHealthy uint64
	for _, iv := range ivs {
		requests += iv.Clients.Requests
		noHealthy += iv.Clients.NoHealthy
		if iv.Panic {
			t.Fatal("panic with threshold 0")
		}
	}
	st := s.ClusterStats()
	if noHealthy == 0 || st.UpstreamCxNoneHealthy != noHealthy || st.LbHealthyPanic != 0 {
		t.Fatalf("no healthy %d, stats %+v", noHealthy, st)
	}
	// One report per connect failure, none for the 503s Envoy made itself.
	if reports != st.UpstreamRq || requests-noHealthy > st.UpstreamRq+1 {
		t.Fatalf("%d reports, %d upstream attempts, %d requests, %d no healthy", reports, st.UpstreamRq, requests, noHealthy)
	}
}

// Split mode: the stream attaches before the attempt ends, so a host that
// times out every request records local success, failure, success, … and
// sits near 50% local-origin success rate.
func TestSplitModeAttachThenResult(t *testing.T) {
	c := quietCluster(6, 600, 30*time.Second)
	c.Retry.PerTryTimeout = 50 * time.Millisecond
	c.Faults = []Fault{{Hosts: []int{0}, Share: 1, Kind: Timeout}}
	od := engine.DefaultConfig()
	od.SplitExternalLocalOriginErrors = true
	od.MaxEjectionPercent = 0
	s := newSim(t, c, od, 6)
	attached := map[uint64]bool{}
	s.OnReport = func(r Report) {
		if r.Host != 0 {
			return
		}
		switch r.Result {
		case engine.LocalOriginConnectSuccess:
			attached[r.Request] = true
		case engine.LocalOriginTimeout:
			if !attached[r.Request] {
				t.Fatalf("request %d timed out before attaching", r.Request)
			}
		}
	}
	for {
		iv, ok := s.Next()
		if !ok {
			break
		}
		h := iv.Tick.Hosts[0]
		if iv.EndMs >= 20000 && (h.LocalRate < 45 || h.LocalRate > 55 || h.Requests != 0) {
			t.Fatalf("%d ms: h0 local SR %.1f over %d, external requests %d", iv.EndMs, h.LocalRate, h.LocalRequests, h.Requests)
		}
	}
}

// Active health checks: a passing check unejects at once (§8); a host
// whose health endpoint shares the fault turns FAILED_ACTIVE_HC, leaves
// the LB's healthy set and is not unejected by checks.
func TestActiveHealthChecks(t *testing.T) {
	for _, shares := range []bool{false, true} {
		t.Run(fmt.Sprint("shares=", shares), func(t *testing.T) {
			c := quietCluster(6, 300, 60*time.Second)
			c.HealthCheck = HealthCheck{Enabled: true, Interval: time.Second, UnhealthyThreshold: 2, HealthyThreshold: 2}
			c.Faults = []Fault{{Hosts: []int{2}, From: 5 * time.Second, Share: 1, Kind: HTTP500, HealthCheckFails: shares}}
			od := engine.DefaultConfig()
			od.MaxEjectionPercent = 20
			s := newSim(t, c, od, 8)
			ivs := runAll(t, s)
			hcUnejects := 0
			for _, e := range allEvents(ivs) {
				if e.Kind == engine.EventUneject && e.Cause == engine.UnejectActiveHealthCheck {
					hcUnejects++
					if e.EjectedMs > 1000 {
						t.Errorf("HC uneject %d ms after the ejection, want within one HC interval", e.EjectedMs)
					}
				}
			}
			last := ivs[len(ivs)-1]
			if shares {
				if hcUnejects != 0 || !last.Hosts[2].FailedActiveHC || last.Hosts[2].Attempts != 0 {
					t.Fatalf("HC unejects %d, failed HC %v, attempts %d", hcUnejects, last.Hosts[2].FailedActiveHC, last.Hosts[2].Attempts)
				}
			} else if hcUnejects < 10 {
				t.Fatalf("%d HC unejections, want one per ejection", hcUnejects)
			}
		})
	}
}

func TestSameSeedSameRun(t *testing.T) {
	c := DefaultCluster()
	c.LB = LeastRequest
	c.Retry.NumRetries, c.Retry.PreviousHosts, c.Retry.Budget = 2, true, true
	c.HealthCheck.Enabled = true
	c.Faults = []Fault{{Hosts: []int{1}, From: 20 * time.Second, Share: 0.4, Pattern: Bernoulli, Kind: Reset, HealthCheckFails: true}}
	run := func(seed uint64) []Interval { return runAll(t, newSim(t, c, engine.DefaultConfig(), seed)) }
	a, b := run(11), run(11)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different runs")
	}
	if reflect.DeepEqual(a, run(12)) {
		t.Fatal("different seeds, same run")
	}
}

func TestInterleavedPattern(t *testing.T) {
	for _, p := range []float64{1.0 / 3, 0.2, 0.5, 0.4, 1, 0} {
		fails, streak, maxStreak := 0, 0, 0
		const n = 30000
		for i := range uint64(n) {
			if interleavedFails(i, p) {
				fails++
				streak++
				maxStreak = max(maxStreak, streak)
			} else {
				streak = 0
			}
		}
		if want := int(math.Round(p * n)); fails != want {
			t.Errorf("p=%.3f: %d failures in %d, want %d", p, fails, n, want)
		}
		if p <= 0.5 && maxStreak > 1 {
			t.Errorf("p=%.3f: a streak of %d failures", p, maxStreak)
		}
	}
	// One in three: the third, sixth, ninth … request fails.
	for i := range uint64(9) {
		if interleavedFails(i, 1.0/3) != (i%3 == 2) {
			t.Fatalf("request %d", i)
		}
	}
}

// §7.3's table for ten hosts at the default threshold, and the
// overprovisioning gate hiding panic at a threshold of 80.
func TestPanicArithmetic(t *testing.T) {
	cases := []struct {
		healthy   int
		threshold uint32
		panic     bool
	}{
		{8, 50, false}, {7, 50, false}, {5, 50, false}, {4, 50, true}, {0, 50, true},
		{8, 80, false}, {7, 80, true}, {0, 0, false},
	}
	for _, tc := range cases {
		c := quietCluster(10, 10, 10*time.Second)
		c.HealthyPanicThreshold = tc.threshold
		s := newSim(t, c, engine.DefaultConfig(), 1)
		for i := tc.healthy; i < 10; i++ {
			s.hosts[i].failedHC = true
		}
		s.lb.recompute(s)
		if s.lb.panic != tc.panic {
			t.Errorf("%d/10 healthy, threshold %d: panic %v", tc.healthy, tc.threshold, s.lb.panic)
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	for v := int64(1); v <= 100000; v++ {
		h.add(v)
	}
	for _, q := range []float64{0.5, 0.99} {
		want := q * 100 // ms
		if got := h.quantileMs(q); math.Abs(got-want)/want > 0.04 {
			t.Errorf("q%.2f = %.2f ms, want ≈ %.2f", q, got, want)
		}
	}
}

func TestExpVariateMean(t *testing.T) {
	var sum float64
	const n = 1 << 20
	for i := range uint64(n) {
		sum += expVariate(i * 0x9e3779b97f4a7c15)
	}
	if m := sum / n; math.Abs(m-1) > 0.01 {
		t.Fatalf("mean %.4f, want 1", m)
	}
}

func TestFaultHostSelection(t *testing.T) {
	cases := []struct {
		f    Fault
		n    int
		want []int
	}{
		{Fault{Hosts: []int{-1}}, 6, []int{5}},
		{Fault{Hosts: []int{-2, -1}}, 5, []int{3, 4}},
		{Fault{Hosts: []int{3}}, 10, []int{3}},
		{Fault{Hosts: []int{3}}, 3, []int{0}}, // wraps rather than vanishing
		{Fault{HostShare: 0.5}, 10, []int{0, 1, 2, 3, 4}},
		{Fault{HostShare: 0.5}, 5, []int{0, 1, 2}},
		{Fault{AllHosts: true}, 3, []int{0, 1, 2}},
	}
	for _, tc := range cases {
		var got []int
		for i := range tc.n {
			if tc.f.AppliesTo(i, tc.n) {
				got = append(got, i)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%+v over %d hosts: %v, want %v", tc.f, tc.n, got, tc.want)
		}
	}
}

// The gRPC dialect's timer runs on the proto's nanoseconds: grpc-go takes
// an interval below a millisecond (outlierConfigFromCluster asks only
// ≥ 0), and the run ticks at every exact multiple of it; an interval of
// 0 s, which grpc-go also takes, is sweeps back to back (afterFunc(0)),
// which no schedule of ticks stands for, so the simulation refuses it and
// says why. Envoy's reading never gets there (its PGV asks > 0s).
func TestGRPCIntervalBelowAMillisecond(t *testing.T) {
	for _, tc := range []struct {
		name  string
		subNs int32
		ticks int
		err   string
	}{
		{"0.5 ms", 500_000, 20, ""},
		{"0.25 ms", 250_000, 40, ""},
		{"0 s", 0, 0, "interval: 0s: grpc-go accepts it and runs its sweeps back to back (intervalTimerAlgorithm re-arms afterFunc(0))"},
	} {
		c := quietCluster(6, 600, 10*time.Millisecond)
		c.Dialect = engine.DialectGRPC
		od := engine.DefaultConfig()
		od.IntervalMs, od.IntervalSubMsNs = 0, tc.subNs
		s, err := New(c, od, 1)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if ivs := runAll(t, s); len(ivs) != tc.ticks {
			t.Errorf("%s over 10 ms: %d sweeps, want %d", tc.name, len(ivs), tc.ticks)
		}
	}
}

// recalculatePerPriorityState's split of one priority's picks between its
// healthy and degraded hosts (distributeLoad over min(100, 140·n/total)
// availabilities), and recalculatePerPriorityPanic's panic, which counts
// degraded hosts with the healthy ones: ten hosts, default threshold 50.
func TestDegradedLoad(t *testing.T) {
	for _, tc := range []struct {
		healthy, degraded int
		healthyLoad       uint64
		panic             bool
	}{
		{10, 0, 100, false},
		{9, 1, 100, false}, // 140·9/10 ≥ 100: the degraded host gets nothing
		{8, 2, 100, false},
		{7, 3, 98, false}, // 98 healthy, 42 degraded: normalized 100, 98/2
		{5, 5, 70, false},
		{3, 7, 42, false},
		{0, 10, 0, false},
		{2, 3, 40, false}, // 28 + 42 = 70 normalized: 28·100/70 = 40, 60 to degraded; 20% + 30% is not below 50
		{2, 2, 50, true},  // 20% + 20% < 50: panic, every host (the split, 28/28, is moot)
		{4, 0, 100, true},
	} {
		c := quietCluster(10, 10, 10*time.Second)
		od := engine.DefaultConfig()
		s := newSim(t, c, od, 1)
		for i := range 10 {
			switch {
			case i < tc.healthy:
			case i < tc.healthy+tc.degraded:
				s.hosts[i].degradedHC = true
			default:
				s.hosts[i].failedHC = true
			}
		}
		s.lb.recompute(s)
		if s.lb.healthyLoad != tc.healthyLoad || s.lb.panic != tc.panic || len(s.lb.degraded) != tc.degraded {
			t.Errorf("%d healthy, %d degraded of 10: healthy load %d, panic %v, %d degraded; want %d, %v",
				tc.healthy, tc.degraded, s.lb.healthyLoad, s.lb.panic, len(s.lb.degraded), tc.healthyLoad, tc.panic)
		}
	}
}

// A host that answers every request with x-envoy-degraded: without
// detect_degraded_hosts it serves its sixth of the traffic all run long;
// with it, the detector marks it degraded at its first answer
// (setHostDegradedMainThread), and with five healthy hosts of six the
// healthy load is 100 (140·5/6 ≥ 100), so it gets nothing until it is
// undegraded at the first tick 30 s on (checkHostForUndegrade), answers
// degraded again and is out for 60 s (the degrade backoff). Its clients
// never see an error.
func TestDegradedHostLeavesRotation(t *testing.T) {
	c := quietCluster(6, 600, 120*time.Second)
	c.Faults = []Fault{{Hosts: []int{0}, Share: 1, Kind: Degraded}}
	per := func(detect bool) (attempts []uint64, events []engine.Event, failures uint64) {
		od := engine.DefaultConfig()
		od.DetectDegradedHosts = detect
		s := newSim(t, c, od, 1)
		ivs := runAll(t, s)
		for _, iv := range ivs {
			attempts = append(attempts, iv.Hosts[0].Attempts)
			failures += iv.Clients.Failures
		}
		return attempts, allEvents(ivs), failures
	}
	off, offEvents, offFailures := per(false)
	on, onEvents, onFailures := per(true)
	for k, n := range off {
		if n < 900 || n > 1100 {
			t.Errorf("detection off, interval %d: h0 served %d, want its sixth of 6000", k, n)
		}
	}
	if len(offEvents) != 0 || offFailures != 0 || onFailures != 0 {
		t.Errorf("off: events %v; failures off %d, on %d: a degraded answer is an answer", offEvents, offFailures, onFailures)
	}
	var got []string
	for _, e := range onEvents {
		got = append(got, fmt.Sprintf("%s %s %d", e.Host, e.Kind, e.AtMs/10000*10))
	}
	// Degraded at its first answer, a few ms in; undegraded at 40 s (the
	// first tick 30 s later), degraded again by its next answer, a few ms
	// after 40 s; back at 110 s, the first tick 60 s after that.
	want := []string{"h0 degrade 0", "h0 undegrade 40", "h0 degrade 40", "h0 undegrade 110", "h0 degrade 110"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	// The intervals 10–40 s and 50–110 s, all degraded (the others hold
	// the answer that degrades it again).
	for _, k := range []int{1, 2, 3, 5, 6, 7, 8, 9, 10} {
		if on[k] != 0 {
			t.Errorf("detection on, interval %d: degraded h0 served %d, want none while five healthy hosts take the load", k, on[k])
		}
	}
}

// A health endpoint that answers x-envoy-degraded makes the HTTP health
// checker's result Degraded, a pass that sets DEGRADED_ACTIVE_HC
// (handleSuccess(true)): the host leaves rotation as a degraded one,
// without detect_degraded_hosts and without any outlier event.
func TestDegradedHealthCheck(t *testing.T) {
	c := quietCluster(6, 600, 30*time.Second)
	c.HealthCheck.Enabled = true
	c.HealthCheck.Interval = time.Second
	c.Faults = []Fault{{Hosts: []int{0}, Share: 1, Kind: Degraded, HealthCheckFails: true, From: 10 * time.Second}}
	s := newSim(t, c, engine.DefaultConfig(), 1)
	ivs := runAll(t, s)
	if ivs[0].Hosts[0].Attempts < 900 || ivs[0].Hosts[0].FailedActiveHC {
		t.Errorf("before the fault h0 served %d (failed HC %v)", ivs[0].Hosts[0].Attempts, ivs[0].Hosts[0].FailedActiveHC)
	}
	if n := ivs[2].Hosts[0].Attempts; n != 0 || ivs[2].Hosts[0].FailedActiveHC {
		t.Errorf("20–30 s: degraded by its health check, h0 served %d (failed HC %v), want none and not failed", n, ivs[2].Hosts[0].FailedActiveHC)
	}
	if evs := allEvents(ivs); len(evs) != 0 {
		t.Errorf("outlier events %v", evs)
	}
}
