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
// ejected at 10 s, still out at the 40 s deadline, back at 50 s.
func TestGRPCEjectsOneOfSixAndUnejectsStrictlyAfter(t *testing.T) {
	cfg := fpOnly()
	cfg.FailurePercentageThreshold = 20
	d, clock, hs := grpcDetector(cfg, 6)
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
	want := []string{"10000 h0 eject failure_percentage", "50000 h0 uneject"}
	if got := kinds(d.Events()); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if d.EjectionsActive() != 0 || hs[0].Backoff() != 1 {
		t.Errorf("active %d, multiplier %d", d.EjectionsActive(), hs[0].Backoff())
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
