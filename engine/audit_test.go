package engine

// Independent audit of the detector against shared/docs/envoy-semantics.md.
// Each test names the section it checks; numbers are Envoy's exact ones.

import (
	"fmt"
	"testing"
)

// auditRand counts draws so tests can check §4.1 / §15 RNG consumption.
type auditRand struct {
	v uint64
	n int
}

func (r *auditRand) Uint64() uint64 { r.n++; return r.v }

func auditDetector(cfg Config, n int, v uint64) (*Detector, *ManualClock, *auditRand, []*HostMonitor) {
	clock := &ManualClock{}
	rng := &auditRand{v: v}
	d := NewDetector(cfg, clock, rng)
	var hs []*HostMonitor
	for i := range n {
		hs = append(hs, d.AddHost(fmt.Sprintf("h%d", i)))
	}
	return d, clock, rng, hs
}

// §3.3 quick-reference table: the effect of one report on c5xx, cGateway,
// the external bucket, cLocal and the local bucket, from a primed state
// (c5xx = cGateway = cLocal = 2, one failure each in both buckets).
func TestAuditReportTable(t *testing.T) {
	type state struct {
		c5xx, cGW, cLocal      uint32
		extT, extS, locT, locS uint64
	}
	const none = -1 // PutResult without a code
	cases := []struct {
		name  string
		split bool
		res   Result
		http  bool // PutHTTPResponseCode(code) instead of a Result
		code  int
		want  state
	}{
		// primed: c5xx 2, cGW 2, cLocal 2 (split only), ext 2/0, local 2/0 (split only)
		{"http 200", false, 0, true, 200, state{0, 0, 0, 3, 1, 0, 0}},
		{"http 404", false, 0, true, 404, state{0, 0, 0, 3, 1, 0, 0}},
		{"http 600 is a success", false, 0, true, 600, state{0, 0, 0, 3, 1, 0, 0}},
		{"http 500 breaks the gateway streak", false, 0, true, 500, state{3, 0, 0, 3, 0, 0, 0}},
		{"http 505", false, 0, true, 505, state{3, 0, 0, 3, 0, 0, 0}},
		{"http 502", false, 0, true, 502, state{3, 3, 0, 3, 0, 0, 0}},
		{"http 504", false, 0, true, 504, state{3, 3, 0, 3, 0, 0, 0}},
		{"nosplit connect_success records nothing", false, LocalOriginConnectSuccess, false, none, state{2, 2, 0, 2, 0, 0, 0}},
		{"nosplit connect_success_final is a 200", false, LocalOriginConnectSuccessFinal, false, none, state{0, 0, 0, 3, 1, 0, 0}},
		{"nosplit timeout is a 504", false, LocalOriginTimeout, false, none, state{3, 3, 0, 3, 0, 0, 0}},
		{"nosplit connect_failed is a 503", false, LocalOriginConnectFailed, false, none, state{3, 3, 0, 3, 0, 0, 0}},
		{"nosplit request_failed no code is a 500", false, ExtOriginRequestFailed, false, none, state{3, 0, 0, 3, 0, 0, 0}},
		{"nosplit request_success no code is a 200", false, ExtOriginRequestSuccess, false, none, state{0, 0, 0, 3, 1, 0, 0}},
		{"nosplit timeout with 504", false, LocalOriginTimeout, false, 504, state{3, 3, 0, 3, 0, 0, 0}},
		{"nosplit request_failed with 503", false, ExtOriginRequestFailed, false, 503, state{3, 3, 0, 3, 0, 0, 0}},
		{"split connect_success", true, LocalOriginConnectSuccess, false, none, state{2, 2, 0, 2, 0, 3, 1}},
		{"split connect_success_final", true, LocalOriginConnectSuccessFinal, false, none, state{2, 2, 0, 2, 0, 3, 1}},
		{"split timeout ignores its 504", true, LocalOriginTimeout, false, 504, state{2, 2, 3, 2, 0, 3, 0}},
		{"split connect_failed", true, LocalOriginConnectFailed, false, none, state{2, 2, 3, 2, 0, 3, 0}},
		{"split request_failed no code is a 503", true, ExtOriginRequestFailed, false, none, state{3, 3, 2, 3, 0, 2, 0}},
		{"split request_failed with 500", true, ExtOriginRequestFailed, false, 500, state{3, 0, 2, 3, 0, 2, 0}},
		// Newest code (PR #39440): external only, cLocal and local bucket untouched.
		{"split request_success no code", true, ExtOriginRequestSuccess, false, none, state{0, 0, 2, 3, 1, 2, 0}},
		{"split request_success with 404", true, ExtOriginRequestSuccess, false, 404, state{0, 0, 2, 3, 1, 2, 0}},
		{"split degraded no code is a 200", true, ExtOriginRequestDegraded, false, none, state{0, 0, 2, 3, 1, 2, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.SplitExternalLocalOriginErrors = tc.split
			d, _, _, hs := auditDetector(cfg, 1, 0)
			m := hs[0]
			m.PutHTTPResponseCode(503)
			m.PutHTTPResponseCode(503)
			if tc.split {
				m.PutResult(LocalOriginConnectFailed)
				m.PutResult(LocalOriginConnectFailed)
			}
			switch {
			case tc.http:
				m.PutHTTPResponseCode(tc.code)
			case tc.code == none:
				m.PutResult(tc.res)
			default:
				m.PutResultCode(tc.res, tc.code)
			}
			got := state{m.c5xx, m.cGateway, m.cLocal, m.ext.current.total, m.ext.current.success, m.local.current.total, m.local.current.success}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if len(d.Events()) != 0 {
				t.Fatalf("unexpected events %+v", d.Events())
			}
		})
	}
}

// §3.5 / §11 cases 1–2 / §10: consecutive firing, what it resets, and the
// deprecated stats, for the three enforcement / cap combinations.
func TestAuditConsecutiveFiring(t *testing.T) {
	cases := []struct {
		name       string
		hosts      int
		maxPct     uint32
		enforceGW  uint32
		wantEvents string
		wantC5xx   uint32
		wantCGW    uint32
		want       map[Stat]uint64
	}{
		{"default gateway detect-only, 5xx ejects", 2, 50, 0,
			"[detect/consecutive_gateway_failure eject/consecutive_5xx]", 0, 0,
			map[Stat]uint64{StatEjectionsDetectedConsecutiveGatewayFailure: 1, StatEjectionsDetectedConsecutive5xx: 1,
				StatEjectionsEnforcedConsecutive5xx: 1, StatEjectionsEnforcedTotal: 1, StatEjectionsTotal: 1,
				StatEjectionsConsecutive5xx: 1, StatEjectionsActive: 1, StatEjectionsOverflow: 0}},
		{"gateway enforced: the 5xx event finds the host ejected", 2, 50, 100,
			"[eject/consecutive_gateway_failure]", 5, 0,
			map[Stat]uint64{StatEjectionsDetectedConsecutiveGatewayFailure: 1, StatEjectionsDetectedConsecutive5xx: 0,
				StatEjectionsEnforcedConsecutiveGatewayFailure: 1, StatEjectionsEnforcedTotal: 1, StatEjectionsTotal: 0,
				StatEjectionsConsecutive5xx: 0, StatEjectionsActive: 1}},
		{"cap refuses both: counters reset anyway", 3, 10, 0,
			"[overflow/consecutive_gateway_failure overflow/consecutive_5xx]", 0, 0,
			map[Stat]uint64{StatEjectionsDetectedConsecutiveGatewayFailure: 1, StatEjectionsDetectedConsecutive5xx: 1,
				StatEjectionsOverflow: 2, StatEjectionsTotal: 0, StatEjectionsConsecutive5xx: 1, StatEjectionsEnforcedTotal: 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxEjectionPercent = tc.maxPct
			cfg.EnforcingConsecutiveGatewayFailure = tc.enforceGW
			d, _, rng, hs := auditDetector(cfg, tc.hosts, 0)
			for range 5 {
				hs[0].PutHTTPResponseCode(503)
			}
			var evs []string
			for _, e := range d.Events() {
				evs = append(evs, e.Kind.String()+"/"+e.Detector.String())
			}
			if fmt.Sprint(evs) != tc.wantEvents {
				t.Fatalf("events %v, want %s", evs, tc.wantEvents)
			}
			if hs[0].c5xx != tc.wantC5xx || hs[0].cGateway != tc.wantCGW {
				t.Fatalf("c5xx %d cGW %d, want %d %d", hs[0].c5xx, hs[0].cGateway, tc.wantC5xx, tc.wantCGW)
			}
			st := d.Stats()
			for s, v := range tc.want {
				if st[s] != v {
					t.Errorf("%s = %d, want %d", s.Name(), st[s], v)
				}
			}
			// §4.1: enforcement 0 and 100 draw nothing; §4: the jitter is drawn
			// on every enforced ejection even with max jitter 0; overflow draws nothing.
			if want := int(st[StatEjectionsEnforcedTotal]); rng.n != want {
				t.Errorf("%d random draws, want %d (one jitter per enforced ejection)", rng.n, want)
			}
			// §11 case 2: an overflowed host is detected again after 5 more.
			if tc.maxPct == 10 {
				for range 5 {
					hs[0].PutHTTPResponseCode(503)
				}
				if got := d.Stats()[StatEjectionsDetectedConsecutive5xx]; got != 2 {
					t.Fatalf("detected_consecutive_5xx after 10 failures = %d, want 2", got)
				}
			}
		})
	}
}

// §4.2 identity and §4.1 draws for partial enforcement: each draw is
// r % 100 < p; one enforcement draw plus one jitter draw when enforced.
func TestAuditPartialEnforcementDraws(t *testing.T) {
	for _, tc := range []struct {
		r         uint64
		p         uint32
		enforced  bool
		wantDraws int
	}{{39, 40, true, 2}, {40, 40, false, 1}, {199, 99, false, 1}, {1, 1, false, 1}, {100, 1, true, 2}} {
		cfg := DefaultConfig()
		cfg.MaxEjectionPercent = 100
		cfg.EnforcingConsecutive5xx = tc.p
		cfg.ConsecutiveGatewayFailure = 0 // keep gateway out of it
		d, _, rng, hs := auditDetector(cfg, 1, tc.r)
		for range 5 {
			hs[0].PutHTTPResponseCode(500)
		}
		if hs[0].Ejected() != tc.enforced || rng.n != tc.wantDraws {
			t.Errorf("r=%d p=%d: ejected %v draws %d, want %v %d", tc.r, tc.p, hs[0].Ejected(), rng.n, tc.enforced, tc.wantDraws)
		}
		st := d.Stats()
		if st[StatEjectionsTotal] != 1 {
			t.Errorf("ejections_total %d, want 1 (past the cap, before the draw)", st[StatEjectionsTotal])
		}
	}
}

// §4.3 cap table, exact.
func TestAuditCapTable(t *testing.T) {
	for _, tc := range []struct {
		n        int
		maxPct   uint32
		always   bool
		admitted int // how many of n always-failing hosts get ejected
	}{
		{9, 10, false, 0}, {10, 10, false, 1}, {19, 10, false, 1}, {20, 10, false, 2},
		{3, 50, false, 1}, {2, 50, false, 1}, {1, 99, false, 0}, {1, 100, false, 1},
		{6, 10, true, 1}, {1, 0, true, 1}, {5, 0, false, 0}, {4, 200, false, 4},
	} {
		cfg := DefaultConfig()
		cfg.MaxEjectionPercent = tc.maxPct
		cfg.AlwaysEjectOneHost = tc.always
		d, _, _, hs := auditDetector(cfg, tc.n, 0)
		for _, m := range hs {
			for range 5 {
				m.PutHTTPResponseCode(500)
			}
		}
		if got := int(d.EjectionsActive()); got != tc.admitted {
			t.Errorf("N=%d max=%d always=%v: %d ejected, want %d", tc.n, tc.maxPct, tc.always, got, tc.admitted)
		}
		if got := d.Stats()[StatEjectionsOverflow]; int(got) != tc.n-tc.admitted {
			t.Errorf("N=%d max=%d: overflow %d, want %d", tc.n, tc.maxPct, got, tc.n-tc.admitted)
		}
	}
}

// §5.2 / §5.3 / §10: SR and FP in one tick, local and external, and the
// deprecated ejections_success_rate counting local SR while ejections_total
// does not.
func TestAuditRatesAndDeprecatedStats(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SplitExternalLocalOriginErrors = true
	cfg.MaxEjectionPercent = 100
	cfg.EnforcingSuccessRate = 0
	cfg.EnforcingLocalOriginSuccessRate = 0
	d, clock, _, hs := auditDetector(cfg, 5, 0)
	// External: 50,100,100,100,100 → mean 90, σ 20, threshold 52: h0 is an outlier.
	// Local: same shape on h1.
	for i, m := range hs {
		for k := range 100 {
			if i == 0 && k%2 == 0 {
				m.PutHTTPResponseCode(500)
			} else {
				m.PutHTTPResponseCode(200)
			}
			if i == 1 && k%2 == 0 {
				m.PutResult(LocalOriginConnectFailed)
			} else {
				m.PutResult(LocalOriginConnectSuccess)
			}
		}
	}
	clock.Ms = 10000
	r := d.Tick()
	if r.External.Mean != 90 || r.External.StdDev != 20 || r.External.Threshold != 52 {
		t.Fatalf("external mean %v sd %v thr %v", r.External.Mean, r.External.StdDev, r.External.Threshold)
	}
	if r.Local.Threshold != 52 {
		t.Fatalf("local threshold %v", r.Local.Threshold)
	}
	st := d.Stats()
	want := map[Stat]uint64{
		StatEjectionsDetectedSuccessRate: 1, StatEjectionsDetectedLocalOriginSuccessRate: 1,
		StatEjectionsSuccessRate:               2, // both origins
		StatEjectionsTotal:                     1, // external SR only
		StatEjectionsDetectedFailurePercentage: 0, StatEjectionsEnforcedTotal: 0,
	}
	for s, v := range want {
		if st[s] != v {
			t.Errorf("%s = %d, want %d", s.Name(), st[s], v)
		}
	}
	if hs[0].SuccessRate() != 50 || hs[1].LocalSuccessRate() != 50 || hs[2].LocalSuccessRate() != 100 {
		t.Errorf("reported rates %v %v %v", hs[0].SuccessRate(), hs[1].LocalSuccessRate(), hs[2].LocalSuccessRate())
	}
}

// §5.2 early exit: only when the total host count is below BOTH minimums.
func TestAuditRateEarlyExit(t *testing.T) {
	for _, tc := range []struct {
		name         string
		hosts        int
		srMin, fpMin uint32
		gate         RateGate
	}{
		{"below both", 4, 5, 5, GateTooFewHosts},
		{"below SR only", 4, 5, 4, GateRan},
		{"below FP only", 4, 4, 5, GateTooFewHostsWithVolume},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.SuccessRateMinimumHosts, cfg.FailurePercentageMinimumHosts = tc.srMin, tc.fpMin
			cfg.Consecutive5xx, cfg.ConsecutiveGatewayFailure = 0, 0
			d, clock, _, hs := auditDetector(cfg, tc.hosts, 0)
			for _, m := range hs {
				for range 100 {
					m.PutHTTPResponseCode(200)
				}
			}
			clock.Ms = 10000
			r := d.Tick()
			if r.External.FPGate != tc.gate {
				t.Fatalf("FP gate %v, want %v (SR gate %v)", r.External.FPGate, tc.gate, r.External.SRGate)
			}
		})
	}
}

// §5.2 inclusive FP threshold, computed exactly: 100 − sr >= threshold.
func TestAuditFailurePercentageInclusive(t *testing.T) {
	for _, tc := range []struct {
		success, total int
		threshold      uint32
		outlier        bool
	}{{15, 100, 85, true}, {16, 100, 85, false}, {0, 50, 100, true}, {50, 50, 0, true}, {1, 3, 67, false}} {
		cfg := DefaultConfig()
		cfg.FailurePercentageThreshold = tc.threshold
		cfg.FailurePercentageRequestVolume = 1
		cfg.EnforcingSuccessRate = 0
		cfg.Consecutive5xx, cfg.ConsecutiveGatewayFailure = 0, 0
		d, clock, _, hs := auditDetector(cfg, 5, 0)
		for i, m := range hs {
			for k := range tc.total {
				if i == 0 && k >= tc.success {
					m.PutHTTPResponseCode(500)
				} else {
					m.PutHTTPResponseCode(200)
				}
			}
		}
		clock.Ms = 10000
		d.Tick()
		got := false
		for _, e := range d.Events() {
			if e.Host == "h0" && e.Detector == FailurePercentage {
				got = true
			}
		}
		if got != tc.outlier {
			t.Errorf("%d/%d thr %d: FP outlier %v, want %v", tc.success, tc.total, tc.threshold, got, tc.outlier)
		}
	}
}

// §6.1/§6.2 worked timeline (defaults; ticks every 10 s): eject at 12 s
// (backoff 1, 30 s), uneject at the 50 s tick (no decay in that tick),
// re-eject at once at 50 s (backoff 2, 60 s), uneject at the 110 s tick
// (110−50 = 60 ≥ 60, inclusive). A clean host then decays one step per
// tick from one full interval after the uneject.
func TestAuditBackoffTimeline(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEjectionPercent = 100
	d, clock, _, hs := auditDetector(cfg, 1, 0)
	m := hs[0]
	fail5 := func() {
		for range 5 {
			m.PutHTTPResponseCode(500)
		}
	}
	tick := func(ms int64) {
		clock.Ms = ms
		d.Tick()
	}
	clock.Ms = 12000
	fail5()
	if !m.Ejected() || m.Backoff() != 1 || m.EjectionDurationMs() != 30000 {
		t.Fatalf("after first ejection: %v %d %d", m.Ejected(), m.Backoff(), m.EjectionDurationMs())
	}
	for ms := int64(10000); ms <= 40000; ms += 10000 {
		tick(ms)
		if !m.Ejected() {
			t.Fatalf("unejected at %d (elapsed %d < 30000)", ms, ms-12000)
		}
	}
	tick(50000)
	if m.Ejected() || m.Backoff() != 1 {
		t.Fatalf("at 50 s: ejected %v backoff %d (no decay in the uneject tick)", m.Ejected(), m.Backoff())
	}
	fail5()
	if !m.Ejected() || m.Backoff() != 2 || m.EjectionDurationMs() != 60000 || m.NumEjections() != 2 {
		t.Fatalf("re-ejection: %v %d %d %d", m.Ejected(), m.Backoff(), m.EjectionDurationMs(), m.NumEjections())
	}
	tick(100000)
	if !m.Ejected() {
		t.Fatal("out at 100 s: elapsed 50 < 60")
	}
	tick(110000)
	if m.Ejected() {
		t.Fatal("still ejected at 110 s: elapsed 60 >= 60 (inclusive)")
	}
	// Clean from here: 120 s decays 2→1, 130 s 1→0, floor 0 after.
	for _, w := range []struct {
		ms      int64
		backoff uint32
	}{{110000, 2}, {120000, 1}, {130000, 0}, {140000, 0}} {
		if w.ms != 110000 {
			tick(w.ms)
		}
		if m.Backoff() != w.backoff {
			t.Fatalf("at %d ms backoff %d, want %d", w.ms, m.Backoff(), w.backoff)
		}
	}
	// §6.2 saturation: B = ceil(max/base)+1 = 11 with defaults.
	for range 20 {
		m.ejected = false
		d.active = 0
		fail5()
	}
	if m.Backoff() != 11 || m.EjectionDurationMs() != 300000 {
		t.Fatalf("saturated backoff %d duration %d, want 11 and 300000", m.Backoff(), m.EjectionDurationMs())
	}
}

// §5.2 double ejection (release-build behaviour) and §6.3: one uneject
// gives back only one slot, so ejections_active stays one too high.
func TestAuditDoubleEjectionLeavesGaugeHigh(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEjectionPercent = 100
	cfg.EnforcingFailurePercentage = 100
	cfg.Consecutive5xx, cfg.ConsecutiveGatewayFailure = 0, 0
	d, clock, rng, hs := auditDetector(cfg, 5, 0)
	// h0 at 10%: {10,100,100,100,100} → mean 82, σ 36, threshold 13.6 (SR
	// outlier) and 90% failures ≥ 85 (FP outlier).
	for i, m := range hs {
		for k := range 100 {
			if i == 0 && k >= 10 {
				m.PutHTTPResponseCode(500)
			} else {
				m.PutHTTPResponseCode(200)
			}
		}
	}
	rng.n = 0
	clock.Ms = 10000
	d.Tick()
	st := d.Stats()
	if d.EjectionsActive() != 2 || st[StatEjectionsEnforcedTotal] != 2 || hs[0].NumEjections() != 2 || hs[0].Backoff() != 2 || rng.n != 2 {
		t.Fatalf("active %d enforced %d numEj %d backoff %d draws %d; want 2 2 2 2 2",
			d.EjectionsActive(), st[StatEjectionsEnforcedTotal], hs[0].NumEjections(), hs[0].Backoff(), rng.n)
	}
	clock.Ms = 70000 // min(30·2, 300) = 60 s
	d.Tick()
	if hs[0].Ejected() || d.EjectionsActive() != 1 {
		t.Fatalf("after uneject: ejected %v active %d, want false 1", hs[0].Ejected(), d.EjectionsActive())
	}
}

// §8: the HC callback unejects mid-interval with lastUnejection = now,
// resets the three counters, keeps backoff and buckets; FAILED_ACTIVE_HC
// blocks it; a failing check does nothing; the config switch disables it.
func TestAuditActiveHealthCheck(t *testing.T) {
	for _, tc := range []struct {
		name      string
		enabled   bool
		healthy   bool
		failedHC  bool
		unejected bool
	}{
		{"healthy check unejects", true, true, false, true},
		{"failed check does not", true, false, false, false},
		{"FAILED_ACTIVE_HC blocks it", true, true, true, false},
		{"switch off", false, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxEjectionPercent = 100
			cfg.SuccessfulActiveHealthCheckUnejectHost = tc.enabled
			cfg.SplitExternalLocalOriginErrors = true
			d, clock, _, hs := auditDetector(cfg, 2, 0)
			m := hs[0]
			clock.Ms = 1000
			for range 5 {
				m.PutHTTPResponseCode(500)
			}
			m.PutResult(LocalOriginConnectFailed)
			if !m.Ejected() {
				t.Fatal("not ejected")
			}
			m.SetActiveHCFailed(tc.failedHC)
			clock.Ms = 3500
			d.ActiveHealthCheck(m, tc.healthy)
			if m.Ejected() == tc.unejected {
				t.Fatalf("ejected %v, want unejected %v", m.Ejected(), tc.unejected)
			}
			if !tc.unejected {
				return
			}
			if m.c5xx != 0 || m.cLocal != 0 || m.Backoff() != 1 || m.ext.current.total != 5 || m.local.current.total != 1 || m.lastUnejection != 3500 || d.EjectionsActive() != 0 {
				t.Fatalf("after HC uneject: c5xx %d cLocal %d backoff %d ext %d local %d lastUneject %d active %d",
					m.c5xx, m.cLocal, m.Backoff(), m.ext.current.total, m.local.current.total, m.lastUnejection, d.EjectionsActive())
			}
			ev := d.Events()[len(d.Events())-1]
			if ev.Kind != EventUneject || ev.Cause != UnejectActiveHealthCheck || ev.EjectedMs != 2500 {
				t.Fatalf("event %+v", ev)
			}
		})
	}
}

// §9: degrade sets the flag once, shares the jitter, has its own backoff,
// is undone only at a tick, is not undone by an HC success, and records
// the response as a success.
func TestAuditDegrade(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DetectDegradedHosts = true
	cfg.MaxEjectionTimeJitterMs = 999
	d, clock, rng, hs := auditDetector(cfg, 1, 1234)
	m := hs[0]
	clock.Ms = 2000
	m.PutResultCode(ExtOriginRequestDegraded, 200)
	m.PutResultCode(ExtOriginRequestDegraded, 200)
	if !m.DegradedByOutlier() || d.Stats()[StatEjectionsDetectedDegradation] != 1 || m.degradeBackoff != 1 || m.jitterMs != 1234%1000 || rng.n != 1 {
		t.Fatalf("degraded %v stat %d backoff %d jitter %d draws %d", m.DegradedByOutlier(), d.Stats()[StatEjectionsDetectedDegradation], m.degradeBackoff, m.jitterMs, rng.n)
	}
	if m.ext.current.total != 2 || m.ext.current.success != 2 {
		t.Fatalf("degraded responses not recorded as successes: %+v", m.ext.current)
	}
	d.ActiveHealthCheck(m, true)
	if !m.DegradedByOutlier() {
		t.Fatal("HC success undegraded the host")
	}
	// 30 s + 234 ms jitter after 2 s: the 30 s tick is too early, 40 s is not.
	clock.Ms = 30000
	d.Tick()
	if !m.DegradedByOutlier() {
		t.Fatal("undegraded at 30 s")
	}
	clock.Ms = 40000
	d.Tick()
	if m.DegradedByOutlier() {
		t.Fatal("still degraded at 40 s")
	}
	// Disabled: no degrade, response still a success.
	cfg.DetectDegradedHosts = false
	d2, _, _, hs2 := auditDetector(cfg, 1, 0)
	hs2[0].PutResult(ExtOriginRequestDegraded)
	if hs2[0].DegradedByOutlier() || d2.Stats()[StatEjectionsDetectedDegradation] != 0 || hs2[0].ext.current.success != 1 {
		t.Fatal("degrade without detect_degraded_hosts")
	}
}

// §11 case 6 / §10: removing an ejected host gives back its slot and
// shrinks N; a re-added host is a fresh monitor.
func TestAuditRemoveAndReAdd(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEjectionPercent = 50
	d, _, _, hs := auditDetector(cfg, 2, 0)
	for range 5 {
		hs[0].PutHTTPResponseCode(500)
	}
	if d.EjectionsActive() != 1 {
		t.Fatal("not ejected")
	}
	d.RemoveHost(hs[0])
	if d.EjectionsActive() != 0 || d.Stats()[StatEjectionsActive] != 0 {
		t.Fatal("removal kept the slot")
	}
	m := d.AddHost("h0")
	if m.Backoff() != 0 || m.NumEjections() != 0 || m.Ejected() {
		t.Fatal("re-added host kept state")
	}
}
