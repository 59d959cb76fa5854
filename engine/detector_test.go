package engine

import (
	"fmt"
	"math"
	"testing"
)

// newTestDetector builds a detector with named hosts h0…h(n-1).
func newTestDetector(cfg Config, n int) (*Detector, *ManualClock, []*HostMonitor) {
	clock := &ManualClock{}
	d := NewDetector(cfg, clock, FixedRandom(0))
	var hs []*HostMonitor
	for i := range n {
		hs = append(hs, d.AddHost(fmt.Sprintf("h%d", i)))
	}
	return d, clock, hs
}

// feed records total responses on m, the first `fail` of them 503s spread
// evenly so that no consecutive detector fires (fail ≤ total/2).
func feed(m *HostMonitor, total, fail int) {
	for i := range total {
		// Bresenham spreading: a failure whenever the running share crosses.
		if (i+1)*fail/total > i*fail/total {
			m.PutHTTPResponseCode(503)
		} else {
			m.PutHTTPResponseCode(200)
		}
	}
}

// §5.3: the SR threshold arithmetic, compared exactly where Envoy's is exact.
func TestSuccessRateThreshold(t *testing.T) {
	tests := []struct {
		name      string
		rates     []float64 // per host, in percent; realised with 1000 requests each
		mean      float64
		threshold float64
		outliers  []int
	}{
		{"docs example 50,100,100,100,100", []float64{50, 100, 100, 100, 100}, 90, 52, []int{0}},
		{"80 among four 99.9", []float64{99.9, 99.9, 99.9, 99.9, 80}, 95.92, 95.92 - 1.9*math.Sqrt(4*(3.98*3.98)/5+15.92*15.92/5), []int{4}},
		{"two bad hosts mask each other", []float64{99.9, 99.9, 99.9, 80, 80}, 91.94, 73.42, nil},
		{"everyone equal ejects nobody", []float64{90, 90, 90, 90, 90}, 90, 90, nil},
		{"99.9 among four 100 is an outlier", []float64{100, 100, 100, 100, 99.9}, 99.98, 99.98 - 1.9*0.04, []int{4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxEjectionPercent = 100
			cfg.EnforcingConsecutive5xx = 0
			cfg.Consecutive5xx = 0
			cfg.ConsecutiveGatewayFailure = 0
			d, clock, hs := newTestDetector(cfg, len(tc.rates))
			for i, r := range tc.rates {
				fail := int(math.Round((100 - r) * 10))
				feed(hs[i], 1000, fail)
			}
			clock.Ms = 10000
			rep := d.Tick()
			if rep.External.SRGate != GateRan {
				t.Fatalf("SR did not run: gate %d", rep.External.SRGate)
			}
			if math.Abs(rep.External.Mean-tc.mean) > 1e-9 {
				t.Errorf("mean = %.12f, want %.12f", rep.External.Mean, tc.mean)
			}
			if math.Abs(rep.External.Threshold-tc.threshold) > 0.005 {
				t.Errorf("threshold = %.6f, want %.4f", rep.External.Threshold, tc.threshold)
			}
			var got []int
			for i, h := range hs {
				if h.Ejected() {
					got = append(got, i)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.outliers) {
				t.Errorf("ejected %v, want %v", got, tc.outliers)
			}
		})
	}
}

// The documented example must be exact to the bit: mean 90, σ 20, 52.
func TestSuccessRateThresholdExact(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEjectionPercent = 20
	d, clock, hs := newTestDetector(cfg, 5)
	feed(hs[0], 100, 50)
	for _, h := range hs[1:] {
		feed(h, 100, 0)
	}
	clock.Ms = 10000
	rep := d.Tick()
	if rep.External.Mean != 90 || rep.External.StdDev != 20 || rep.External.Threshold != 52 {
		t.Fatalf("mean/σ/threshold = %v/%v/%v, want exactly 90/20/52", rep.External.Mean, rep.External.StdDev, rep.External.Threshold)
	}
	if !hs[0].Ejected() {
		t.Fatal("the 50% host was not ejected")
	}
}

// §5.3: k outliers among N valid hosts fall below the threshold iff
// N > k·(1+f²); with f = 1.9 that is N ≥ 5, 10, 14 for k = 1, 2, 3.
func TestSuccessRateValidHostsNeeded(t *testing.T) {
	for _, tc := range []struct{ k, need int }{{1, 5}, {2, 10}, {3, 14}} {
		for n := tc.need - 1; n <= tc.need; n++ {
			cfg := DefaultConfig()
			cfg.MaxEjectionPercent = 100
			cfg.SuccessRateMinimumHosts = 1
			cfg.Consecutive5xx, cfg.ConsecutiveGatewayFailure = 0, 0
			d, clock, hs := newTestDetector(cfg, n)
			for i, h := range hs {
				if i < tc.k {
					feed(h, 1000, 100) // 90%
				} else {
					feed(h, 1000, 0)
				}
			}
			clock.Ms = 10000
			d.Tick()
			want := n >= tc.need
			if got := hs[0].Ejected(); got != want {
				t.Errorf("k=%d N=%d: outlier ejected = %v, want %v", tc.k, n, got, want)
			}
		}
	}
}

// §4.3: the cap for N = 1…20 at the default 10%.
func TestCapAdmissions(t *testing.T) {
	for n := 1; n <= 20; n++ {
		first := CapAdmits(0, n, 10, false)
		second := CapAdmits(1, n, 10, false)
		wantFirst := n >= 10
		wantSecond := n >= 20
		if first.Allowed != wantFirst || second.Allowed != wantSecond {
			t.Errorf("N=%d: first %v (%.2f%%) second %v (%.2f%%), want %v %v",
				n, first.Allowed, first.Percent, second.Allowed, second.Percent, wantFirst, wantSecond)
		}
		if got := CapAdmits(0, n, 10, true); !got.Allowed || got.ByAlwaysEjectOne != (n < 10) {
			t.Errorf("N=%d always_eject_one_host: %+v", n, got)
		}
		if got := CapAdmits(1, n, 10, true); got.Allowed != wantSecond {
			t.Errorf("N=%d always_eject_one_host second: %+v", n, got)
		}
	}
	for _, tc := range []struct {
		active uint64
		n      int
		max    uint32
		want   bool
	}{
		{0, 3, 50, true}, {1, 3, 50, false}, {0, 2, 50, true}, {0, 1, 99, false}, {0, 1, 100, true},
		{0, 6, 16, false}, {0, 6, 17, true}, {1, 6, 34, true}, {2, 6, 34, false}, {0, 5, 0, false},
		{0, 4, 150, true}, // runtime clamps to 100
	} {
		if got := CapAdmits(tc.active, tc.n, tc.max, false); got.Allowed != tc.want {
			t.Errorf("active %d N %d max %d: allowed %v, want %v (%.3f%%)", tc.active, tc.n, tc.max, got.Allowed, tc.want, got.Percent)
		}
	}
}

// §3.2/§3.3: the effect of one report on the counters and buckets.
func TestRecordingRules(t *testing.T) {
	type state struct{ c5xx, cgw, clocal, extT, extS, locT, locS uint32 }
	tests := []struct {
		name  string
		split bool
		put   func(m *HostMonitor)
		want  state
	}{
		{"http 200", false, func(m *HostMonitor) { m.PutHTTPResponseCode(200) }, state{0, 0, 0, 1, 1, 0, 0}},
		{"http 404 is success", false, func(m *HostMonitor) { m.PutHTTPResponseCode(404) }, state{0, 0, 0, 1, 1, 0, 0}},
		{"http 600 is success", false, func(m *HostMonitor) { m.PutHTTPResponseCode(600) }, state{0, 0, 0, 1, 1, 0, 0}},
		{"http 500", false, func(m *HostMonitor) { m.PutHTTPResponseCode(500) }, state{1, 0, 0, 1, 0, 0, 0}},
		{"http 503", false, func(m *HostMonitor) { m.PutHTTPResponseCode(503) }, state{1, 1, 0, 1, 0, 0, 0}},
		{"timeout non-split = 504", false, func(m *HostMonitor) { m.PutResultCode(LocalOriginTimeout, 504) }, state{1, 1, 0, 1, 0, 0, 0}},
		{"connect failed non-split = 503", false, func(m *HostMonitor) { m.PutResult(LocalOriginConnectFailed) }, state{1, 1, 0, 1, 0, 0, 0}},
		{"ext failed non-split = 500", false, func(m *HostMonitor) { m.PutResult(ExtOriginRequestFailed) }, state{1, 0, 0, 1, 0, 0, 0}},
		{"connect success non-split invisible", false, func(m *HostMonitor) { m.PutResult(LocalOriginConnectSuccess) }, state{0, 0, 0, 0, 0, 0, 0}},
		{"connect success final non-split = 200", false, func(m *HostMonitor) { m.PutResult(LocalOriginConnectSuccessFinal) }, state{0, 0, 0, 1, 1, 0, 0}},
		{"split connect success", true, func(m *HostMonitor) { m.PutResult(LocalOriginConnectSuccess) }, state{0, 0, 0, 0, 0, 1, 1}},
		{"split timeout is local only", true, func(m *HostMonitor) { m.PutResultCode(LocalOriginTimeout, 504) }, state{0, 0, 1, 0, 0, 1, 0}},
		{"split connect failed", true, func(m *HostMonitor) { m.PutResult(LocalOriginConnectFailed) }, state{0, 0, 1, 0, 0, 1, 0}},
		{"split ext failed no code = 503", true, func(m *HostMonitor) { m.PutResult(ExtOriginRequestFailed) }, state{1, 1, 0, 1, 0, 0, 0}},
		{"split ext failed 500", true, func(m *HostMonitor) { m.PutResultCode(ExtOriginRequestFailed, 500) }, state{1, 0, 0, 1, 0, 0, 0}},
		{"split ext success: external only (newest code)", true, func(m *HostMonitor) { m.PutResult(ExtOriginRequestSuccess) }, state{0, 0, 0, 1, 1, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.SplitExternalLocalOriginErrors = tc.split
			_, _, hs := newTestDetector(cfg, 1)
			m := hs[0]
			tc.put(m)
			got := state{m.c5xx, m.cGateway, m.cLocal, uint32(m.ext.current.total), uint32(m.ext.current.success), uint32(m.local.current.total), uint32(m.local.current.success)}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// §11 case 4: failing one request in three never fires consecutive_5xx, and
// a 500 breaks the gateway streak.
func TestIntermittentFailureEscapesConsecutive(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEjectionPercent = 100
	d, _, hs := newTestDetector(cfg, 1)
	for i := range 3000 {
		if i%3 == 2 {
			hs[0].PutHTTPResponseCode(503)
		} else {
			hs[0].PutHTTPResponseCode(200)
		}
	}
	st := d.Stats()
	if st[StatEjectionsDetectedConsecutive5xx] != 0 || hs[0].Ejected() {
		t.Fatalf("one-in-three failures fired consecutive_5xx: %v", st)
	}
	for range 4 {
		hs[0].PutHTTPResponseCode(502)
	}
	hs[0].PutHTTPResponseCode(500)
	if _, gw, _ := hs[0].Consecutive(); gw != 0 {
		t.Fatalf("a 500 did not reset the gateway streak: %d", gw)
	}
	if !hs[0].Ejected() {
		t.Fatal("five 5xx in a row did not eject")
	}
}

// §6.2: the backoff saturates at ceil(max/base)+1 and the ejection time at max.
func TestBackoffSaturation(t *testing.T) {
	for _, tc := range []struct {
		base, max int64
		want      uint32
	}{{30000, 300000, 11}, {30000, 100000, 5}, {10000, 10000, 2}} {
		cfg := DefaultConfig()
		cfg.MaxEjectionPercent = 100
		cfg.BaseEjectionTimeMs, cfg.MaxEjectionTimeMs = tc.base, tc.max
		d, clock, hs := newTestDetector(cfg, 1)
		for range 20 {
			feed(hs[0], 5, 5)
			clock.Ms += 10 * tc.max
			d.Tick()
		}
		if hs[0].Backoff() != tc.want {
			t.Errorf("base %d max %d: backoff %d, want %d", tc.base, tc.max, hs[0].Backoff(), tc.want)
		}
		feed(hs[0], 5, 5)
		if got := hs[0].EjectionDurationMs(); got != tc.max {
			t.Errorf("saturated duration %d, want %d", got, tc.max)
		}
	}
}

// §5.2: hosts with fewer than success_rate_minimum_hosts with volume are
// reported as a gate, not silently skipped.
func TestSuccessRateGates(t *testing.T) {
	cfg := DefaultConfig()
	d, clock, hs := newTestDetector(cfg, 6)
	for i, h := range hs {
		if i < 4 {
			feed(h, 100, 0)
		} else {
			feed(h, 99, 0)
		}
	}
	clock.Ms = 10000
	rep := d.Tick()
	if rep.External.SRGate != GateTooFewHostsWithVolume || rep.External.SRHostsVolume != 4 {
		t.Fatalf("gate %d with %d hosts, want too-few-with-volume with 4", rep.External.SRGate, rep.External.SRHostsVolume)
	}
	if rep.External.FPGate != GateRan || rep.External.FPHostsVolume != 6 {
		t.Fatalf("FP gate %d hosts %d", rep.External.FPGate, rep.External.FPHostsVolume)
	}
	d2, clock2, _ := newTestDetector(cfg, 4)
	clock2.Ms = 10000
	if rep := d2.Tick(); rep.External.SRGate != GateTooFewHosts {
		t.Fatalf("4 hosts: gate %d, want too few hosts", rep.External.SRGate)
	}
}

// §8: an active health check success unejects at once, keeps the backoff,
// and does nothing for a host that also failed active HC.
func TestActiveHealthCheckUneject(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEjectionPercent = 100
	d, clock, hs := newTestDetector(cfg, 2)
	feed(hs[0], 5, 5)
	clock.Ms = 1500
	hs[0].SetActiveHCFailed(true)
	d.ActiveHealthCheck(hs[0], true)
	if !hs[0].Ejected() {
		t.Fatal("a host with FAILED_ACTIVE_HC was unejected")
	}
	hs[0].SetActiveHCFailed(false)
	d.ActiveHealthCheck(hs[0], true)
	if hs[0].Ejected() || hs[0].Backoff() != 1 || d.EjectionsActive() != 0 {
		t.Fatalf("ejected %v backoff %d active %d", hs[0].Ejected(), hs[0].Backoff(), d.EjectionsActive())
	}
	cfg.SuccessfulActiveHealthCheckUnejectHost = false
	d, _, hs = newTestDetector(cfg, 2)
	feed(hs[0], 5, 5)
	d.ActiveHealthCheck(hs[0], true)
	if !hs[0].Ejected() {
		t.Fatal("successful_active_health_check_uneject_host: false still unejected")
	}
}

// §5.2's derived double ejection: with SR and FP both enforced, one host is
// counted twice in ejections_active and the uneject gives back only one.
func TestSuccessRateAndFailurePercentageDoubleEjection(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEjectionPercent = 100
	cfg.EnforcingFailurePercentage = 100
	cfg.Consecutive5xx, cfg.ConsecutiveGatewayFailure = 0, 0
	d, clock, hs := newTestDetector(cfg, 10)
	for i, h := range hs {
		if i == 0 {
			for range 200 {
				h.PutHTTPResponseCode(503)
			}
		} else {
			feed(h, 200, 0)
		}
	}
	clock.Ms = 10000
	d.Tick()
	if d.EjectionsActive() != 2 || hs[0].NumEjections() != 2 || hs[0].Backoff() != 2 {
		t.Fatalf("active %d ejections %d backoff %d, want 2 2 2", d.EjectionsActive(), hs[0].NumEjections(), hs[0].Backoff())
	}
	clock.Ms = 70000
	d.Tick()
	if hs[0].Ejected() || d.EjectionsActive() != 1 {
		t.Fatalf("after uneject: ejected %v active %d, want false 1", hs[0].Ejected(), d.EjectionsActive())
	}
}

// Removing an ejected host frees its slot; a re-added host is a new monitor.
func TestRemoveEjectedHost(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEjectionPercent = 100
	d, _, hs := newTestDetector(cfg, 2)
	feed(hs[0], 5, 5)
	d.RemoveHost(hs[0])
	if d.EjectionsActive() != 0 || d.Stats()[StatEjectionsActive] != 0 {
		t.Fatal("removing an ejected host kept its ejections_active slot")
	}
	m := d.AddHost("h0")
	if m.Ejected() || m.Backoff() != 0 || m.NumEjections() != 0 {
		t.Fatal("a re-added host inherited state")
	}
	hs[0].PutHTTPResponseCode(503) // a removed monitor ignores results
}

// Jitter and enforcement draws use the injected Random.
func TestEnforcementAndJitterDraws(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEjectionPercent = 100
	cfg.EnforcingConsecutive5xx = 40
	cfg.MaxEjectionTimeJitterMs = 1000
	clock := &ManualClock{}
	d := NewDetector(cfg, clock, FixedRandom(1239)) // 1239%100 = 39 < 40
	m := d.AddHost("h0")
	feed(m, 5, 5)
	if !m.Ejected() || m.jitterMs != 1239%1001 {
		t.Fatalf("ejected %v jitter %d", m.Ejected(), m.jitterMs)
	}
	d = NewDetector(cfg, clock, FixedRandom(1240)) // 40 is not < 40
	m = d.AddHost("h0")
	feed(m, 5, 5)
	if m.Ejected() {
		t.Fatal("40 % 100 < 40 enforced")
	}
	// The 5th 503 posts gateway (enforcing 0: detect) before 5xx (40%: detect).
	if ev := d.Events(); len(ev) != 2 || ev[1].Kind != EventDetect || ev[1].Detector != Consecutive5xx || ev[1].Enforcing != 40 {
		t.Fatalf("events %+v", ev)
	}
}
