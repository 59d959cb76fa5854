package sim

// Independent audit of the simulator against shared/docs/envoy-semantics.md
// (§3.4, §7, §8, §12) and, where the spec is silent, Envoy's source.

import (
	"testing"
	"time"

	"outlierlab/engine"
)

// §7.2–7.3: the panic decision for one priority, by healthy count, with
// the overprovisioning gate (140·healthy/total, integer) and the strict
// float comparison.
func TestAuditPanicTable(t *testing.T) {
	for _, tc := range []struct {
		total, healthy int
		threshold      uint32
		panic          bool
	}{
		{10, 8, 50, false}, {10, 7, 50, false}, {10, 5, 50, false}, {10, 4, 50, true},
		{10, 0, 50, true},
		{10, 7, 80, true},  // 98 < 100: evaluated, 70 < 80
		{10, 8, 80, false}, // 112 → 100: not evaluated
		{10, 0, 0, false},  // threshold 0: never panic
		{10, 1, 0, false},  // 14 > 0 but 10 < 0 is false
		{3, 1, 50, true},   // 33.3 < 50
		{2, 1, 50, false},  // 50 is not < 50
		{7, 5, 100, false}, // 140·5/7 = 100: gate says no panic
		{7, 4, 100, true},  // 80 < 100 → 57.1 < 100
		{1, 0, 1, true},    // a single ejected host
		{6, 3, 50, false},  // 70 < 100, 50 not < 50
		{6, 2, 34, true},   // 33.3 < 34
		{200, 142, 100, true},
		{200, 143, 100, false},
	} {
		s := &Sim{hosts: make([]host, tc.total)}
		b := &balancer{panicThreshold: tc.threshold}
		for i := range s.hosts {
			b.all = append(b.all, int32(i))
			if i >= tc.healthy {
				s.hosts[i].failedHC = true // unhealthy the same way as ejected
				s.hosts[i].mon = engine.NewDetector(engine.DefaultConfig(), &engine.ManualClock{}, engine.FixedRandom(0)).AddHost("x")
			} else {
				s.hosts[i].mon = engine.NewDetector(engine.DefaultConfig(), &engine.ManualClock{}, engine.FixedRandom(0)).AddHost("x")
			}
		}
		b.recompute(s)
		if b.panic != tc.panic {
			t.Errorf("%d/%d healthy, threshold %d: panic %v, want %v", tc.healthy, tc.total, tc.threshold, b.panic, tc.panic)
		}
	}
}

// §12.1 retry_on, checked against Envoy's RetryStateImpl::wouldRetryFromHeaders
// and wouldRetryFromReset. A non-hedged per-try timeout reaches the retry
// state as shouldRetryReset(LocalReset) (router.cc onPerTryTimeoutCommon →
// maybeRetryReset), and wouldRetryFromReset retries any reset that is not
// Overflow under "reset", "5xx" and "gateway-error"; "connect-failure" only
// covers connection failures. The route (global) timeout is never retried.
func TestAuditRetryOn(t *testing.T) {
	type oc struct {
		o    outcome
		code int16
	}
	all := []RetryOn{RetryOn5xx, RetryOnGatewayError, RetryOnConnectFailure, RetryOnReset}
	for _, tc := range []struct {
		name string
		oc   oc
		want [4]bool // 5xx, gateway-error, connect-failure, reset
	}{
		{"500", oc{outResponse, 500}, [4]bool{true, false, false, false}},
		{"503", oc{outResponse, 503}, [4]bool{true, true, false, false}},
		{"504", oc{outResponse, 504}, [4]bool{true, true, false, false}},
		{"connect failure", oc{outConnectFailed, 0}, [4]bool{true, true, true, true}},
		{"reset", oc{outReset, 0}, [4]bool{true, true, false, true}},
		{"per-try timeout", oc{outPerTryTimeout, 0}, [4]bool{true, true, false, true}},
		{"route timeout", oc{outRouteTimeout, 0}, [4]bool{false, false, false, false}},
	} {
		for i, on := range all {
			c := DefaultCluster()
			c.Retry.NumRetries, c.Retry.RetryOn = 1, on
			s := &Sim{c: c}
			r := &request{outcome: tc.oc.o, code: tc.oc.code}
			if got := s.retriable(r) && r.outcome != outRouteTimeout; got != tc.want[i] {
				t.Errorf("%s under retry_on %s: retried %v, want %v", tc.name, on, got, tc.want[i])
			}
		}
	}
}

// §10/§12: upstream_rq_retry_success. Envoy's RetryStateImpl::shouldRetry
// counts it whenever a retry was armed by the previous shouldRetry and
// this attempt's outcome is not retriable, whatever that outcome is: a
// 2xx, but also a non-retriable 5xx (here a 503 under retry_on
// connect-failure). Each request below: h0 refuses the connection, the
// retry lands on h1 (previous_hosts, two hosts) and gets a 503 that
// connect-failure does not retry, so every retry sent is a "retry success".
func TestAuditRetrySuccessCountsNonRetriableOutcome(t *testing.T) {
	c := quietCluster(2, 20, 20*time.Second)
	c.Retry.NumRetries, c.Retry.RetryOn, c.Retry.PreviousHosts = 1, RetryOnConnectFailure, true
	c.Retry.HostSelectionRetryMaxAttempts = 5
	c.Faults = []Fault{
		{Hosts: []int{0}, Share: 1, Kind: ConnectFailure},
		{Hosts: []int{1}, Share: 1, Kind: HTTP503},
	}
	od := engine.DefaultConfig()
	od.MaxEjectionPercent = 0 // nobody is ejected: the LB keeps alternating
	s := newSim(t, c, od, 3)
	var retried503 uint64 // retried attempts that ended in h1's 503
	s.OnReport = func(r Report) {
		if r.Attempt == 1 && r.Result == engine.ExtOriginRequestFailed && r.Code == 503 {
			retried503++
		}
	}
	runAll(t, s)
	st := s.ClusterStats()
	if st.RetrySent == 0 || retried503+1 < st.RetrySent {
		t.Fatalf("retries %d, retried attempts answered %d", st.RetrySent, retried503)
	}
	if st.RetryOverflow != 0 || st.RetryLimitExceeded != 0 {
		t.Fatalf("overflow %d limit %d", st.RetryOverflow, st.RetryLimitExceeded)
	}
	if st.RetrySuccess != retried503 {
		t.Fatalf("upstream_rq_retry_success = %d, want %d (one per retry whose outcome was not retried)", st.RetrySuccess, retried503)
	}
}

// §8 / Envoy's health checker: a failed HTTP health check (a response
// outside expected_statuses) is handleFailure(ACTIVE, retriable=false), and
// setUnhealthy marks the host FAILED_ACTIVE_HC at once for a non-network,
// non-retriable failure: unhealthy_threshold only counts network failures
// and timeouts (health_checker_base_impl.cc, HttpHealthCheckerImpl::
// onResponseComplete; the unhealthy_threshold doc says the same). A
// refused connection, a reset or a hang are network failures and need
// unhealthy_threshold of them in a row.
func TestAuditHealthCheckFailureKinds(t *testing.T) {
	for _, tc := range []struct {
		kind  FailureKind
		fails int // failed checks until FAILED_ACTIVE_HC
	}{
		{HTTP500, 1}, {HTTP502, 1}, {HTTP503, 1}, {HTTP504, 1},
		{ConnectFailure, 3}, {Reset, 3}, {Timeout, 3},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			c := quietCluster(4, 1, 60*time.Second)
			c.HealthCheck = HealthCheck{Enabled: true, Interval: time.Second, UnhealthyThreshold: 3, HealthyThreshold: 2}
			c.Faults = []Fault{{Hosts: []int{0}, Share: 1, Kind: tc.kind, HealthCheckFails: true}}
			s := newSim(t, c, engine.DefaultConfig(), 1)
			at := int64(0)
			n := 0
			for !s.hosts[0].failedHC && n < 10 {
				s.healthCheck(0, at)
				at += s.hcUs
				n++
			}
			if n != tc.fails {
				t.Fatalf("FAILED_ACTIVE_HC after %d failed checks, want %d", n, tc.fails)
			}
		})
	}
}

// §8 ordering inside handleSuccess: the pass that reaches healthy_threshold
// clears FAILED_ACTIVE_HC before the callbacks run, so it also unejects;
// the passes before it do not.
func TestAuditHealthyThresholdPassUnejects(t *testing.T) {
	c := quietCluster(4, 1, 60*time.Second)
	c.HealthCheck = HealthCheck{Enabled: true, Interval: time.Second, UnhealthyThreshold: 1, HealthyThreshold: 3}
	c.Faults = []Fault{{Hosts: []int{0}, Until: 2 * time.Second, Share: 1, Kind: ConnectFailure, HealthCheckFails: true}}
	od := engine.DefaultConfig()
	od.MaxEjectionPercent = 100
	s := newSim(t, c, od, 1)
	m := s.hosts[0].mon
	for range 5 {
		m.PutResult(engine.LocalOriginConnectFailed)
	}
	if !m.Ejected() {
		t.Fatal("not ejected")
	}
	s.healthCheck(0, 1_000_000) // fails: FAILED_ACTIVE_HC
	if !s.hosts[0].failedHC {
		t.Fatal("not FAILED_ACTIVE_HC")
	}
	for i, want := range []bool{true, true, false} { // ejected after each pass
		s.healthCheck(0, int64(3+i)*1_000_000)
		if m.Ejected() != want {
			t.Fatalf("after pass %d: ejected %v, want %v", i+1, m.Ejected(), want)
		}
	}
	if s.hosts[0].failedHC {
		t.Fatal("FAILED_ACTIVE_HC not cleared")
	}
}

// §7.4 / §12.2: lb_healthy_panic counts every pick attempt in panic,
// including the extra previous_hosts pick of a retry; the last pick is
// used when every pick is rejected.
func TestAuditPanicPicksCounted(t *testing.T) {
	c := quietCluster(2, 1, 10*time.Second)
	c.Retry.PreviousHosts = true
	c.Retry.HostSelectionRetryMaxAttempts = 1
	s := newSim(t, c, engine.DefaultConfig(), 1)
	s.lb.panic = true
	before := s.lb.lbHealthyPanic
	r := &request{}
	s.lb.pick(s, r) // first try: one pick
	if got := s.lb.lbHealthyPanic - before; got != 1 {
		t.Fatalf("first try counted %d picks, want 1", got)
	}
	// A retry after trying both hosts: every pick is rejected, 2 picks, last used.
	r.attempts, r.triedN = 2, 2
	r.triedHosts[0], r.triedHosts[1] = 0, 1
	before = s.lb.lbHealthyPanic
	if h := s.lb.pick(s, r); h < 0 {
		t.Fatal("no host")
	}
	if got := s.lb.lbHealthyPanic - before; got != 2 {
		t.Fatalf("retry counted %d picks, want 2 (host_selection_retry_max_attempts + 1)", got)
	}
}

// §3.4: a route timeout while awaiting headers reports LocalOriginTimeout
// with 504 to the attempt's host; a route timeout that fires during a retry
// backoff reports nothing (no upstream request exists).
func TestAuditRouteTimeoutReports(t *testing.T) {
	c := quietCluster(3, 5, 10*time.Second)
	c.Retry.RouteTimeout = 300 * time.Millisecond
	c.Faults = []Fault{{Hosts: []int{0}, Share: 1, Kind: Timeout}}
	od := engine.DefaultConfig()
	od.MaxEjectionPercent = 0
	s := newSim(t, c, od, 2)
	var timeouts int
	s.OnReport = func(r Report) {
		if r.Result == engine.LocalOriginTimeout {
			timeouts++
			if r.Host != 0 || r.Code != 504 {
				t.Errorf("timeout report %+v", r)
			}
		}
	}
	runAll(t, s)
	if st := s.ClusterStats(); timeouts == 0 || uint64(timeouts) != st.RouteTimeout {
		t.Fatalf("%d timeout reports, %d route timeouts", timeouts, st.RouteTimeout)
	}
}

// §12.1: RetryStateImpl::shouldRetry (retry_state_impl.cc) decides a
// retriable failure in this order: retries_remaining_ == 0 counts
// upstream_rq_retry_limit_exceeded; otherwise one retry is spent and the
// cluster's retries resource (the max_retries breaker, or the budget that
// replaces it) is asked with canCreate(); a refusal counts
// upstream_rq_retry_overflow, a cluster stat (cluster_.stats(), one
// resource manager per cluster and priority), and the failure goes to the
// client. The breaker is asked when the retry would be scheduled, before
// the backoff, and never for a request whose retries are used up. Every
// attempt below fails with a 503, so each count is exact.
func TestAuditRetryOverflowOrder(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		numRetries, maxRetries uint32
		// per request: retries sent, overflows, limits exceeded
		sent, overflow, limit uint64
	}{
		// The breaker at 0 refuses the first retry: an overflow, not a
		// limit exceeded, although the request had a retry left.
		{"breaker 0, one retry", 1, 0, 0, 1, 0},
		{"breaker 0, three retries", 3, 0, 0, 1, 0},
		// An open breaker: the retry is sent, its failure finds no retry
		// left (limit exceeded) and the breaker is not asked again.
		{"breaker open, one retry", 1, 4294967295, 1, 0, 1},
		{"breaker open, two retries", 2, 4294967295, 2, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 1 request/s at 10 ms: never two at once, so the breaker sees
			// at most this request's own retry.
			c := quietCluster(3, 1, 60*time.Second)
			c.Retry.NumRetries, c.Retry.RetryOn, c.Retry.MaxRetries = tc.numRetries, RetryOn5xx, tc.maxRetries
			c.Faults = []Fault{{AllHosts: true, Share: 1, Kind: HTTP503}}
			od := engine.DefaultConfig()
			od.MaxEjectionPercent = 0 // nobody ejected, no panic
			s := newSim(t, c, od, 5)
			ivs := runAll(t, s)
			var req, fail, clientOverflow, clientRetries uint64
			for _, iv := range ivs {
				req += iv.Clients.Requests
				fail += iv.Clients.Failures
				clientOverflow += iv.Clients.RetryOverflow
				clientRetries += iv.Clients.Retries
			}
			st := s.ClusterStats()
			if req < 30 || fail != req {
				t.Fatalf("%d requests, %d failed: want every one failed", req, fail)
			}
			if st.RetrySent != tc.sent*req || st.RetryOverflow != tc.overflow*req || st.RetryLimitExceeded != tc.limit*req {
				t.Fatalf("%d requests: upstream_rq_retry %d, _overflow %d, _limit_exceeded %d; want %d, %d, %d each",
					req, st.RetrySent, st.RetryOverflow, st.RetryLimitExceeded, tc.sent, tc.overflow, tc.limit)
			}
			if clientOverflow != st.RetryOverflow || clientRetries != st.RetrySent {
				t.Fatalf("clients' intervals: %d overflows, %d retries; cluster stats %d, %d", clientOverflow, clientRetries, st.RetryOverflow, st.RetrySent)
			}
			if st.UpstreamRq != req*(1+tc.sent) {
				t.Fatalf("upstream_rq_total %d, want %d", st.UpstreamRq, req*(1+tc.sent))
			}
		})
	}
}
