package explain_test

import (
	"strings"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/explain"
	"outlierlab/engine/scenario"
)

// grpcRun runs a preset (seed 1) under the gRPC dialect with its
// outlier_detection block edited.
func grpcRun(t *testing.T, preset string, edit func(*engine.Config)) scenario.Result {
	t.Helper()
	p, ok := scenario.Lookup(preset)
	if !ok {
		t.Fatalf("no preset %s", preset)
	}
	sc, err := scenario.ApplyKnobs(p.Scenario(), map[string]string{"dialect": "grpc"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Outlier
	if edit != nil {
		edit(&cfg)
	}
	res, err := scenario.Run(sc, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The gRPC dialect's decisions in words, over real runs: what grpc-go
// leaves out of the config is said once, at the first tick; failure
// percentage ejects strictly above its threshold; a host that success
// rate and failure percentage both flag in one tick is ejected twice
// (engine doc.go G1) and the log says what that costs; a host returns
// at a tick strictly after its time, which on a real clock is the tick
// its time ends on; the multiplier outgrows
// max_ejection_time.
func TestGRPCDecisions(t *testing.T) {
	double := grpcRun(t, "search-cache", func(c *engine.Config) {
		c.MaxEjectionPercent = 20
		c.EnforcingFailurePercentage = 100
		c.FailurePercentageThreshold = 30
		c.MaxEjectionTimeMs = 60000
	})
	all := decisions(double)
	var texts []string
	for _, s := range all {
		texts = append(texts, s.String())
	}
	want := []string{
		"10 s: gRPC dialect (gRFC A50, as grpc-go runs it): grpc-go ignores consecutive_5xx; it has no consecutive-error detectors, " +
			"so only success rate and failure percentage judge hosts, at each tick.",
		"40 s: h5 success rate 66.7% is below the threshold 70.9% (mean 94.5 − 1.9 × 12.4, success_rate_stdev_factor): detected; " +
			"cap 0/6 = 0.0% < 20% (max_ejection_percent, gRPC counts only the hosts already ejected): ejected for 30 s (base_ejection_time 30 s × 1).",
		"40 s: h5 failure percentage 33.3% is above 30% (failure_percentage_threshold, gRPC ejects only above it): detected; " +
			"cap 1/6 = 16.7% < 20% (max_ejection_percent, gRPC counts only the hosts already ejected): ejected again for 60 s " +
			"(base_ejection_time 30 s × 2); h5 was already out, and grpc-go ejects it again: its multiplier and the count of ejected hosts " +
			"both grow twice, and its return gives back only one, so one slot of max_ejection_percent stays taken for the rest of the run.",
		// Out from 40 s for 60 s: on a real clock the 100 s tick starts
		// after 100 s (engine.GRPCRealClock).
		"100 s: h5 returns to service after 60 s out: its ejection time had ended before this tick " +
			"(grpc-go returns a host at a tick strictly after its time; a real tick starts a little after the interval, " +
			"so a time that ends on a tick has ended).",
		// The leaked slot: nobody is out at 110 s, yet the cap counts one.
		"110 s: h5 success rate 66.6% is below the threshold 70.8% (mean 94.4 − 1.9 × 12.4, success_rate_stdev_factor): detected; " +
			"cap 1/6 = 16.7% < 20% (max_ejection_percent, gRPC counts only the hosts already ejected): ejected for 60 s " +
			"(max_ejection_time 60 s; base_ejection_time 30 s × 3 = 90 s, and gRPC's multiplier keeps growing).",
		"110 s: h5 failure percentage 33.4% is above 30% (failure_percentage_threshold, gRPC ejects only above it): detected; " +
			"cap 2/6 = 33.3% ≥ 20% (max_ejection_percent, gRPC counts only the hosts already ejected): refused (overflow).",
	}
	for _, w := range want {
		found := false
		for _, got := range texts {
			found = found || got == w
		}
		if !found {
			t.Errorf("no sentence\n%s\nin the log:\n%s", w, strings.Join(texts[:min(len(texts), 12)], "\n"))
		}
	}
	notes := 0
	for _, s := range texts {
		if strings.Contains(s, "gRPC dialect") {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("the dialect note is said %d times, want once", notes)
	}

	// Only success rate configured: the note says how failure percentage
	// would run; Envoy's run of the same preset has no note.
	dead := grpcRun(t, "dead-host", nil)
	first := decisions(dead)[0]
	if first.String() != "10 s: gRPC dialect (gRFC A50, as grpc-go runs it): grpc-go ignores consecutive_5xx; it has no consecutive-error detectors, "+
		"so only success rate judges hosts, at each tick (failure percentage runs only when enforcing_failure_percentage is set above 0)." ||
		first.Outcome != explain.Skipped {
		t.Errorf("dead-host's note: %s (%s)", first, first.Outcome.Badge())
	}
	for _, s := range decisions(run(t, "dead-host", nil)) {
		if strings.Contains(s.Text(), "gRPC") {
			t.Errorf("Envoy's run says %s", s)
		}
	}
}

// The note for the configs A50 reads differently: success rate off, and
// neither algorithm (grpc-go's no-op config). Such a run's frames name the
// missing pass's gate ("not_configured": it used to crash scenario.Run).
func TestGRPCNoteWithoutSuccessRate(t *testing.T) {
	for _, tc := range []struct {
		fp   uint32
		want string
	}{
		{100, "10 s: gRPC dialect (gRFC A50, as grpc-go runs it): grpc-go ignores consecutive_5xx; it has no consecutive-error detectors, " +
			"and enforcing_success_rate 0 turns success rate off: only failure percentage judges hosts, at each tick."},
		{0, "10 s: gRPC dialect (gRFC A50, as grpc-go runs it): grpc-go ignores consecutive_5xx; it has no consecutive-error detectors, " +
			"and with enforcing_success_rate 0 and no enforcing_failure_percentage nothing judges hosts: the tick never runs, no host is ever ejected."},
	} {
		res := grpcRun(t, "search-cache", func(c *engine.Config) {
			c.EnforcingSuccessRate = 0
			c.EnforcingFailurePercentage = tc.fp
		})
		iv := res.Frames[0].Interval()
		got := explain.Events(&iv, res.Config)
		if len(got) == 0 || got[0].String() != tc.want {
			t.Errorf("enforcing_failure_percentage %d: %v\nwant %s", tc.fp, got, tc.want)
		}
	}
}

// grpc-go takes a max_ejection_time below base_ejection_time (Envoy
// refuses it) and caps an ejection at max(base, max) in
// intervalTimerAlgorithm: the sentence names base_ejection_time as the cap,
// never the smaller max_ejection_time.
func TestGRPCEjectionTimeMaxBelowBase(t *testing.T) {
	res := grpcRun(t, "search-cache", func(c *engine.Config) {
		c.BaseEjectionTimeMs, c.MaxEjectionTimeMs = 20000, 5000
	})
	var ejections []string
	for _, s := range decisions(res) {
		if strings.Contains(s.Text(), "ejected for") {
			ejections = append(ejections, s.String())
		}
	}
	if len(ejections) < 2 {
		t.Fatalf("search-cache under gRPC ejects h5 again and again, got %q", ejections)
	}
	if !strings.HasSuffix(ejections[0], "ejected for 20 s (base_ejection_time 20 s × 1).") {
		t.Errorf("first ejection: %s", ejections[0])
	}
	if !strings.HasSuffix(ejections[1], "ejected for 20 s (base_ejection_time 20 s, the cap, since max_ejection_time 5 s is below it and gRPC caps at the larger; "+
		"base_ejection_time 20 s × 2 = 40 s, and gRPC's multiplier keeps growing).") {
		t.Errorf("second ejection: %s", ejections[1])
	}
}
