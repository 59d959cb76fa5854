package engine

import (
	"fmt"
	"slices"
	"testing"
)

// grpcDetector builds a gRPC-dialect detector with hosts h0…h(n-1).
func grpcDetector(cfg Config, n int) (*Detector, *ManualClock, []*HostMonitor) {
	clock := &ManualClock{}
	d := NewDialectDetector(DialectGRPC, cfg, clock, FixedRandom(0))
	var hs []*HostMonitor
	for i := range n {
		hs = append(hs, d.AddHost(fmt.Sprintf("h%d", i)))
	}
	return d, clock, hs
}

// rpcs records ok successes and bad failures on m.
func rpcs(m *HostMonitor, ok, bad int) {
	for range ok {
		m.PutResult(ExtOriginRequestSuccess)
	}
	for range bad {
		m.PutResult(ExtOriginRequestFailed)
	}
}

// fpOnly is a gRPC config with failure percentage on and success rate off.
func fpOnly() Config {
	cfg := DefaultConfig()
	cfg.EnforcingSuccessRate = 0
	cfg.EnforcingFailurePercentage = 100
	return cfg
}

func kinds(evs []Event) []string {
	var out []string
	for _, e := range evs {
		s := fmt.Sprintf("%d %s %s", e.AtMs, e.Host, e.Kind)
		if e.Kind != EventUneject {
			s += " " + e.Detector.String()
		}
		out = append(out, s)
	}
	return out
}

func TestGRPCCapCountsOnlyEjectedHosts(t *testing.T) {
	tests := []struct {
		active  uint64
		hosts   int
		max     uint32
		allowed bool
	}{
		{0, 6, 10, true},   // Envoy: (0+1)/6 = 16.7% > 10% refuses
		{1, 6, 10, false},  // 16.7% ≥ 10%
		{1, 3, 50, true},   // 33% < 50%: a second of three
		{2, 3, 50, false},  // 66.7%
		{1, 10, 10, false}, // 10% ≥ 10%: the boundary refuses
		{0, 6, 0, false},   // 0% ≥ 0%: max 0 ejects nothing
	}
	for _, tc := range tests {
		c := CapAdmitsGRPC(tc.active, tc.hosts, tc.max)
		if c.Allowed != tc.allowed || c.Dialect != DialectGRPC {
			t.Errorf("CapAdmitsGRPC(%d, %d, %d) = %+v, want allowed %v", tc.active, tc.hosts, tc.max, c, tc.allowed)
		}
	}
}

// The whole cycle of one bad host of six under A50 at the default cap:
// ejected at 10 s for 30 s. On a real clock each sweep starts after the
// exact one and the strict After holds at 40 s; on the exact clock of
// testing/synctest it does not, and the host is back at 50 s.
func TestGRPCEjectsOneOfSixAndUnejectsStrictlyAfter(t *testing.T) {
	for _, tc := range []struct {
		clock GRPCClock
		back  string
		mult  uint32 // at 50 s: decayed by the 50 s sweep if back at 40 s
	}{{GRPCRealClock, "40000 h0 uneject", 0}, {GRPCExactClock, "50000 h0 uneject", 1}} {
		cfg := fpOnly()
		cfg.FailurePercentageThreshold = 20
		d, clock, hs := grpcDetector(cfg, 6)
		d.SetGRPCClock(tc.clock)
		for i, h := range hs {
			rpcs(h, 100, map[bool]int{true: 50}[i == 0])
		}
		for tick := int64(1); tick <= 5; tick++ {
			clock.Ms = tick * 10000
			d.Tick()
			for _, h := range hs[1:] {
				rpcs(h, 100, 0)
			}
		}
		want := []string{"10000 h0 eject failure_percentage", tc.back}
		if got := kinds(d.Events()); !slices.Equal(got, want) {
			t.Fatalf("%s clock: events %q, want %q", tc.clock, got, want)
		}
		if d.EjectionsActive() != 0 || hs[0].Backoff() != tc.mult {
			t.Errorf("%s clock: active %d, multiplier %d", tc.clock, d.EjectionsActive(), hs[0].Backoff())
		}
	}
}

// grpc-go holds durations in nanoseconds where Envoy truncates to ms: base
// 0.9995 s × 2 is 1.999 s, not Envoy's 2 × 999 ms. With a sweep every 1 ms,
// h0 fails in the intervals closing at 1 ms and at 1002 ms: out at 1 ms for
// 999.5 ms (back at 1001 ms, the first sweep 1000 ms on, on either clock),
// out again at 1002 ms for 1999 ms: back at 3001 ms on a real clock, at
// 3002 ms on the exact one (Envoy's 1998 ms would give 3000 ms).
func TestGRPCEjectionTimeInNanoseconds(t *testing.T) {
	cfg := fpOnly()
	cfg.FailurePercentageRequestVolume = 1
	cfg.IntervalMs = 1
	cfg.BaseEjectionTimeMs, cfg.BaseEjectionTimeSubMsNs = 999, 500_000
	if got := cfg.GRPCBaseEjectionTimeNs(); got != 999_500_000 {
		t.Fatalf("GRPCBaseEjectionTimeNs = %d", got)
	}
	for _, tc := range []struct {
		clock GRPCClock
		want  []string
	}{
		{GRPCRealClock, []string{"1 h0 eject failure_percentage", "1001 h0 uneject", "1002 h0 eject failure_percentage", "3001 h0 uneject"}},
		{GRPCExactClock, []string{"1 h0 eject failure_percentage", "1001 h0 uneject", "1002 h0 eject failure_percentage", "3002 h0 uneject"}},
	} {
		d, clock, hs := grpcDetector(cfg, 6)
		d.SetGRPCClock(tc.clock)
		for ms := int64(1); ms <= 3100; ms++ {
			for i, h := range hs {
				rpcs(h, 1, map[bool]int{true: 9}[i == 0 && (ms == 1 || ms == 1002)])
			}
			clock.Ms = ms
			d.Tick()
		}
		if got := kinds(d.Events()); !slices.Equal(got, tc.want) {
			t.Errorf("%s clock: events %q, want %q", tc.clock, got, tc.want)
		}
	}
}

// Past 2⁶³ ns the product base × multiplier wraps in Go's time.Duration, so
// grpc-go's ejection time turns negative and the host is due at once:
// base 200 years is due at its second ejection's own sweep.
func TestGRPCEjectionTimeWraps(t *testing.T) {
	cfg := fpOnly()
	cfg.BaseEjectionTimeMs = 200 * 365 * 24 * 3600 * 1000
	cfg.MaxEjectionTimeMs = cfg.BaseEjectionTimeMs
	d, _, _ := grpcDetector(cfg, 1)
	if got := d.grpcEjectionDurationNs(1); got != cfg.BaseEjectionTimeMs*1_000_000 {
		t.Errorf("× 1: %d", got)
	}
	if got := d.grpcEjectionDurationNs(2); got >= 0 {
		t.Errorf("× 2: %d, want the wrapped negative product", got)
	}
}

// grpc-go compares failure percentage strictly: at exactly the threshold
// nothing happens, where Envoy's ≥ ejects.
func TestGRPCFailurePercentageIsStrict(t *testing.T) {
	for _, tc := range []struct {
		failed int
		want   int
	}{{85, 0}, {86, 1}} {
		d, clock, hs := grpcDetector(fpOnly(), 6)
		for i, h := range hs {
			if i == 0 {
				rpcs(h, 100-tc.failed, tc.failed)
			} else {
				rpcs(h, 100, 0)
			}
		}
		clock.Ms = 10000
		if got := len(d.Tick().Events); got != tc.want {
			t.Errorf("%d%% failed: %d events, want %d", tc.failed, got, tc.want)
		}
	}
}

// A50 runs success rate unless enforcing_success_rate is 0 and failure
// percentage only when enforcing_failure_percentage is non-zero; with
// neither, the no-op config counts and decides nothing.
func TestGRPCWhichAlgorithmsRun(t *testing.T) {
	def := DefaultConfig()
	if !def.GRPCSuccessRate() || def.GRPCFailurePercentage() {
		t.Errorf("defaults: SR %v FP %v, want SR on, FP off", def.GRPCSuccessRate(), def.GRPCFailurePercentage())
	}
	noop := def
	noop.EnforcingSuccessRate = 0
	d, clock, hs := grpcDetector(noop, 6)
	rpcs(hs[0], 0, 200)
	for _, h := range hs[1:] {
		rpcs(h, 200, 0)
	}
	clock.Ms = 10000
	r := d.Tick()
	if len(r.Events) != 0 || r.External.SRGate != GateNotConfigured || r.External.FPGate != GateNotConfigured {
		t.Errorf("no-op config: events %v, gates %v %v", r.Events, r.External.SRGate, r.External.FPGate)
	}
	if got := def.GRPCIgnoredFields(); !slices.Equal(got, []string{"consecutive_5xx"}) {
		t.Errorf("ignored fields of the default config: %q", got)
	}
}

// The consecutive detectors do not exist: 100 failures in a row eject
// nobody before the tick.
func TestGRPCHasNoConsecutiveDetector(t *testing.T) {
	d, _, hs := grpcDetector(DefaultConfig(), 6)
	for range 100 {
		hs[0].PutHTTPResponseCode(503)
	}
	if len(d.Events()) != 0 || hs[0].Ejected() {
		t.Fatalf("events %v", d.Events())
	}
}

// doc.go case G1: success rate and failure percentage flag the same host
// in one tick; grpc-go ejects it twice, and the unejection gives back one
// of the two slots, so the leaked slot later blocks an ejection.
func TestGRPCDoubleEjectionLeaksASlot(t *testing.T) {
	cfg := DefaultConfig() // success rate on
	cfg.EnforcingFailurePercentage = 100
	cfg.MaxEjectionPercent = 20 // 1 of 6 = 16.7% < 20%: a second ejection is admitted
	d, clock, hs := grpcDetector(cfg, 6)
	rpcs(hs[0], 0, 200)
	for _, h := range hs[1:] {
		rpcs(h, 200, 0)
	}
	clock.Ms = 10000
	d.Tick()
	if d.EjectionsActive() != 2 || hs[0].Backoff() != 2 {
		t.Fatalf("after the double ejection: active %d, multiplier %d; want 2, 2", d.EjectionsActive(), hs[0].Backoff())
	}
	// Out for min(2·30 s, 300 s) = 60 s: back at the first tick after 70 s.
	for tick := int64(2); tick <= 8; tick++ {
		for _, h := range hs[1:] {
			rpcs(h, 200, 0)
		}
		clock.Ms = tick * 10000
		d.Tick()
	}
	if hs[0].Ejected() || d.EjectionsActive() != 1 {
		t.Fatalf("after the uneject: ejected %v, active %d; want false, 1 (the leak)", hs[0].Ejected(), d.EjectionsActive())
	}
	// Now h1 fails everything; 1 leaked of 6 = 16.7% < 20% still admits
	// one, so the leak shows once a second host is out: h2 is refused.
	rpcs(hs[1], 0, 200)
	rpcs(hs[2], 0, 200)
	for _, h := range hs[3:] {
		rpcs(h, 200, 0)
	}
	rpcs(hs[0], 200, 0)
	clock.Ms = 90000
	got := kinds(d.Tick().Events)
	want := []string{"90000 h1 eject failure_percentage", "90000 h2 overflow failure_percentage"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// grpc-go drops a removed endpoint without giving back its slot.
func TestGRPCRemovingAnEjectedHostKeepsItsSlot(t *testing.T) {
	cfg := fpOnly()
	d, clock, hs := grpcDetector(cfg, 6)
	rpcs(hs[0], 0, 100)
	for _, h := range hs[1:] {
		rpcs(h, 100, 0)
	}
	clock.Ms = 10000
	d.Tick()
	d.RemoveHost(hs[0])
	if d.EjectionsActive() != 1 {
		t.Errorf("active %d after removing the ejected host, want 1", d.EjectionsActive())
	}
}
