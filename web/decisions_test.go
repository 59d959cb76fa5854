package web

import (
	"strings"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
)

// The sentences are checked against hand-built events: the numbers are the
// design notes' examples, so the wording can be read against them.

func srPass(mean, sd, thr float64, hostsVolume int) engine.RatePass {
	return engine.RatePass{Origin: engine.External, Hosts: 6, SRGate: engine.GateRan, SRHostsVolume: hostsVolume,
		SRMinimumHosts: 5, SRRequestVolume: 100, Mean: mean, StdDev: sd, Threshold: thr, SROutliers: 1}
}

func TestDecisionSentences(t *testing.T) {
	cfg := engine.DefaultConfig()
	capAt := func(active uint64, hosts int, maxPct uint32, always bool) engine.CapCheck {
		return engine.CapAdmits(active, hosts, maxPct, always)
	}
	frame := scenario.Frame{TMs: 40000, External: srPass(94.4, 12.4, 70.8, 6)}
	tests := []struct {
		name string
		cfg  func(*engine.Config)
		ev   engine.Event
		want string
		tone string
	}{
		{
			name: "success rate refused by the cap",
			ev: engine.Event{AtMs: 40000, Host: "h5", Kind: engine.EventOverflow, Detector: engine.SuccessRate,
				Cap: capAt(0, 6, 10, false), HostSuccessRate: 66.7, Mean: 94.4, Threshold: 70.8},
			want: "40 s: h5 success rate 66.7% is below the threshold 70.8% (mean 94.4 − 1.9 × 12.4, success_rate_stdev_factor): " +
				"detected; cap (0+1)/6 = 16.7% > 10% (max_ejection_percent): refused (overflow).",
			tone: "overflow",
		},
		{
			name: "success rate ejects under a 34% cap",
			cfg:  func(c *engine.Config) { c.MaxEjectionPercent = 34 },
			ev: engine.Event{AtMs: 40000, Host: "h5", Kind: engine.EventEject, Detector: engine.SuccessRate,
				Cap: capAt(0, 6, 34, false), HostSuccessRate: 66.7, Mean: 94.4, Threshold: 70.8, Enforcing: 100, Backoff: 1, DurationMs: 30000},
			want: "40 s: h5 success rate 66.7% is below the threshold 70.8% (mean 94.4 − 1.9 × 12.4, success_rate_stdev_factor): " +
				"detected; cap (0+1)/6 = 16.7% ≤ 34% (max_ejection_percent): ejected for 30 s (base_ejection_time 30 s × 1).",
			tone: "eject",
		},
		{
			name: "backoff capped by max_ejection_time, with jitter",
			cfg:  func(c *engine.Config) { c.MaxEjectionPercent = 50 },
			ev: engine.Event{AtMs: 123456, Host: "h1", Kind: engine.EventEject, Detector: engine.Consecutive5xx,
				Cap: capAt(1, 4, 50, false), Enforcing: 100, Backoff: 11, JitterMs: 1500, DurationMs: 301500},
			want: "123.5 s: h1 returned 5 errors in a row (consecutive_5xx): detected; cap (1+1)/4 = 50.0% ≤ 50% (max_ejection_percent): " +
				"ejected for 301.5 s (max_ejection_time 300 s; base_ejection_time 30 s × 11 = 330 s + 1.5 s jitter).",
			tone: "eject",
		},
		{
			name: "gateway failures detected but not enforced",
			ev: engine.Event{AtMs: 12000, Host: "h2", Kind: engine.EventDetect, Detector: engine.ConsecutiveGatewayFailure,
				Cap: capAt(0, 6, 10, true), Enforcing: 0},
			want: "12 s: h2 returned 5 gateway failures (502/503/504) in a row (consecutive_gateway_failure): detected; " +
				"cap (0+1)/6 = 16.7% > 10% (max_ejection_percent), but no host is ejected yet (always_eject_one_host): " +
				"admitted; enforcing_consecutive_gateway_failure 0%: not enforced, so not ejected (detect only).",
			tone: "detect",
		},
		{
			name: "failure percentage",
			ev: engine.Event{AtMs: 50000, Host: "h3", Kind: engine.EventOverflow, Detector: engine.FailurePercentage,
				Cap: capAt(1, 6, 10, false), HostSuccessRate: 10, Mean: -1, Threshold: -1},
			want: "50 s: h3 failure percentage 90.0% is at or above 85% (failure_percentage_threshold): detected; " +
				"cap (1+1)/6 = 33.3% > 10% (max_ejection_percent): refused (overflow).",
			tone: "overflow",
		},
		{
			name: "returns after its time",
			ev:   engine.Event{AtMs: 70000, Host: "h5", Kind: engine.EventUneject, Cause: engine.UnejectTimeElapsed, EjectedMs: 30000},
			want: "70 s: h5 returns to service after 30 s out: its ejection time had elapsed at this sweep.",
			tone: "return",
		},
		{
			name: "returns on a health check",
			ev:   engine.Event{AtMs: 52300, Host: "h0", Kind: engine.EventUneject, Cause: engine.UnejectActiveHealthCheck, EjectedMs: 12300},
			want: "52.3 s: h0 returns to service after 12.3 s out: an active health check passed (successful_active_health_check_uneject_host).",
			tone: "return",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg
			if tt.cfg != nil {
				tt.cfg(&c)
			}
			got := eventEntry(&tt.ev, &frame, c)
			if got.String() != tt.want {
				t.Errorf("sentence\n got: %s\nwant: %s", got.String(), tt.want)
			}
			if got.Tone != tt.tone || got.Badge == "" {
				t.Errorf("tone %q badge %q, want tone %q and a badge", got.Tone, got.Badge, tt.tone)
			}
		})
	}
}

func TestDecisionNonEvents(t *testing.T) {
	cfg := engine.DefaultConfig()
	f := scenario.Frame{
		TMs: 20000,
		External: engine.RatePass{Origin: engine.External, Hosts: 6, SRGate: engine.GateTooFewHostsWithVolume,
			SRHostsVolume: 4, SRMinimumHosts: 5, SRRequestVolume: 100, FPGate: engine.GateTooFewHostsWithVolume},
		Hosts: []scenario.HostFrame{
			{Name: "h0", Requests: 150}, {Name: "h1", Requests: 150}, {Name: "h2", Requests: 150},
			{Name: "h3", Requests: 150}, {Name: "h4", Requests: 73}, {Name: "h5", Requests: 0},
		},
	}
	got := decisionsOf(&f, cfg)
	want := []string{
		"20 s: success rate skipped: 4 hosts have ≥ 100 requests (success_rate_request_volume), 5 needed (success_rate_minimum_hosts).",
		"20 s: h4 not counted by success rate: 73 requests < success_rate_request_volume 100.",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("entry %d\n got: %s\nwant: %s", i, got[i].String(), want[i])
		}
		if got[i].Tone != "skip" {
			t.Errorf("entry %d tone %q, want skip", i, got[i].Tone)
		}
	}

	// A pass that ran and found nobody says so, with its numbers.
	f.External = engine.RatePass{Origin: engine.External, Hosts: 6, SRGate: engine.GateRan, SRHostsVolume: 6,
		SRMinimumHosts: 5, SRRequestVolume: 100, Mean: 99.1, StdDev: 1.0, Threshold: 97.2}
	f.Hosts = nil
	got = decisionsOf(&f, cfg)
	if len(got) != 1 || got[0].String() != "20 s: success rate: no host of 6 below 97.2% (mean 99.1 − 1.9 × 1.0)." {
		t.Errorf("ran, no outlier: %v", got)
	}

	// Too few hosts at all.
	f.External = engine.RatePass{Origin: engine.External, Hosts: 4, SRGate: engine.GateTooFewHosts, SRMinimumHosts: 5}
	got = decisionsOf(&f, cfg)
	if len(got) != 1 || !strings.Contains(got[0].String(), "the cluster has 4 hosts, fewer than success_rate_minimum_hosts 5") {
		t.Errorf("too few hosts: %v", got)
	}
}

// Fields are marked so the page can set them as code.
func TestDecisionFieldsAreMarked(t *testing.T) {
	ev := engine.Event{AtMs: 1000, Host: "h0", Kind: engine.EventOverflow, Detector: engine.Consecutive5xx, Cap: engine.CapAdmits(0, 6, 10, false)}
	e := eventEntry(&ev, &scenario.Frame{}, engine.DefaultConfig())
	var fields []string
	for _, p := range e.Parts {
		if p.Field {
			fields = append(fields, p.Text)
		}
	}
	if strings.Join(fields, ",") != "consecutive_5xx,max_ejection_percent" {
		t.Errorf("fields = %v", fields)
	}
}

// Times round to the tenth past 10 s (a lesson quoting an event at
// 20.1 s finds 20.1 s in the log), keeping more digits only where the
// tenth would read as a whole second, a sweep, the time is not.
func TestFmtMs(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{0, "0 s"},
		{40000, "40 s"},
		{1500, "1.5 s"},
		{250, "0.25 s"},
		{23417, "23.4 s"},
		{20090, "20.1 s"}, // was cut to 20.0 s
		{20150, "20.2 s"},
		{300000, "300 s"},
		{123050, "123.1 s"},
		{239960, "239.96 s"}, // not the 240 s sweep
		{238990, "238.99 s"},
		{239999, "239.999 s"},
	} {
		if got := fmtMs(tc.ms); got != tc.want {
			t.Errorf("fmtMs(%d) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}

// A sentence that says one number is below another prints both with the
// digits it takes to see it: the burst preset's hosts sit a few
// hundredths below a 99.9% threshold.
func TestDecisionDigitsShowTheInequality(t *testing.T) {
	cfg := engine.DefaultConfig()
	for _, tc := range []struct {
		name string
		ev   engine.Event
		pass engine.RatePass
		want string
	}{
		{
			name: "success rate a few hundredths below",
			ev: engine.Event{AtMs: 20000, Host: "h2", Kind: engine.EventOverflow, Detector: engine.SuccessRate,
				Cap: engine.CapAdmits(0, 6, 10, false), HostSuccessRate: 99.8667, Mean: 99.97, Threshold: 99.8991},
			pass: srPass(99.97, 0.0373, 99.8991, 6),
			want: "h2 success rate 99.87% is below the threshold 99.90% (mean 99.97 − 1.9 × 0.037,",
		},
		{
			name: "success rate a ten-thousandth below",
			ev: engine.Event{AtMs: 20000, Host: "h2", Kind: engine.EventOverflow, Detector: engine.SuccessRate,
				Cap: engine.CapAdmits(0, 6, 10, false), HostSuccessRate: 99.90001, Mean: 99.95, Threshold: 99.90049},
			pass: srPass(99.95, 0.0263, 99.90049, 6),
			want: "h2 success rate 99.9000% is below the threshold 99.9005%",
		},
		{
			name: "one decimal when it shows",
			ev: engine.Event{AtMs: 40000, Host: "h5", Kind: engine.EventOverflow, Detector: engine.SuccessRate,
				Cap: engine.CapAdmits(0, 6, 10, false), HostSuccessRate: 66.7, Mean: 94.4, Threshold: 70.8},
			pass: srPass(94.4, 12.4, 70.8, 6),
			want: "h5 success rate 66.7% is below the threshold 70.8%",
		},
		{
			name: "a cap share just over the cap",
			ev: engine.Event{AtMs: 40000, Host: "h0", Kind: engine.EventOverflow, Detector: engine.Consecutive5xx,
				Cap: engine.CapCheck{Active: 200, Hosts: 2009, Percent: 100 * 201.0 / 2009, MaxPercent: 10}},
			want: "cap (200+1)/2009 = 10.005% > 10%",
		},
		{
			name: "a cap share exactly at the cap",
			ev: engine.Event{AtMs: 40000, Host: "h0", Kind: engine.EventOverflow, Detector: engine.Consecutive5xx,
				Cap: engine.CapCheck{Active: 0, Hosts: 10, Percent: 10, MaxPercent: 10, Allowed: true}},
			want: "cap (0+1)/10 = 10.0% ≤ 10%",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := scenario.Frame{TMs: tc.ev.AtMs, External: tc.pass}
			if got := eventEntry(&tc.ev, &f, cfg).String(); !strings.Contains(got, tc.want) {
				t.Errorf("\n got: %s\nwant it to contain: %s", got, tc.want)
			}
		})
	}
}

// A refusal repeated thousands of times in an interval is one entry.
func TestDecisionRepeatsFolded(t *testing.T) {
	cfg := engine.DefaultConfig()
	var f scenario.Frame
	f.TMs = 240000
	f.External = engine.RatePass{Origin: engine.External, SRGate: engine.GateRan, SROutliers: 1}
	for i := range 1000 {
		f.Events = append(f.Events, engine.Event{AtMs: 230000 + int64(i)*9, Host: "h3", Kind: engine.EventOverflow,
			Detector: engine.Consecutive5xx, Cap: engine.CapAdmits(5, 10, 50, false)})
	}
	f.Events = append(f.Events, engine.Event{AtMs: 239000, Host: "h4", Kind: engine.EventOverflow,
		Detector: engine.Consecutive5xx, Cap: engine.CapAdmits(5, 10, 50, false)})
	got := decisionsOf(&f, cfg)
	if len(got) != 2 {
		t.Fatalf("%d entries, want 2", len(got))
	}
	if want := "230 s: h3 returned 5 errors in a row (consecutive_5xx): detected; cap (5+1)/10 = 60.0% > 50% (max_ejection_percent): refused (overflow). The same, 1000 times in all, until 238.99 s."; got[0].String() != want {
		t.Errorf("\n got: %s\nwant: %s", got[0], want)
	}
}

// σ keeps two significant digits however small it is.
func TestSigmaDigits(t *testing.T) {
	for _, tc := range []struct {
		sd   float64
		d    int
		want string
	}{
		{12.4, 1, "12.4"},
		{1.0, 1, "1.0"},
		{0.0373, 2, "0.037"},
		{0.0373, 1, "0.037"},
		{0.5, 1, "0.50"},
		{0.00001, 1, "0.0000"},
		{0, 1, "0.0"},
	} {
		if got := sigma(tc.sd, tc.d); got != tc.want {
			t.Errorf("sigma(%v, %d) = %q, want %q", tc.sd, tc.d, got, tc.want)
		}
	}
}
