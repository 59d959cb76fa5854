package explain

import (
	"strings"
	"testing"

	"outlierlab/engine"
)

// The sentences are checked against hand-built events: the numbers are the
// design notes' examples, so the wording can be read against them. The
// same sentences over real runs are in run_test.go and the golden logs.

func srPass(mean, sd, thr float64, hostsVolume int) engine.RatePass {
	return engine.RatePass{Origin: engine.External, Hosts: 6, SRGate: engine.GateRan, SRHostsVolume: hostsVolume,
		SRMinimumHosts: 5, SRRequestVolume: 100, Mean: mean, StdDev: sd, Threshold: thr, SROutliers: 1}
}

func capAt(active uint64, hosts int, maxPct uint32, always bool) engine.CapCheck {
	return engine.CapAdmits(active, hosts, maxPct, always)
}

// eventCases are one event of each kind and detector, by hand.
var eventCases = []struct {
	name string
	cfg  func(*engine.Config)
	ev   engine.Event
	want string
	out  Outcome
}{
	{
		name: "success rate refused by the cap",
		ev: engine.Event{AtMs: 40000, Host: "h5", Kind: engine.EventOverflow, Detector: engine.SuccessRate,
			Cap: capAt(0, 6, 10, false), HostSuccessRate: 66.7, Mean: 94.4, Threshold: 70.8},
		want: "40 s: h5 success rate 66.7% is below the threshold 70.8% (mean 94.4 − 1.9 × 12.4, success_rate_stdev_factor): " +
			"detected; cap (0+1)/6 = 16.7% > 10% (max_ejection_percent): refused (overflow).",
		out: Overflow,
	},
	{
		name: "success rate ejects under a 34% cap",
		cfg:  func(c *engine.Config) { c.MaxEjectionPercent = 34 },
		ev: engine.Event{AtMs: 40000, Host: "h5", Kind: engine.EventEject, Detector: engine.SuccessRate,
			Cap: capAt(0, 6, 34, false), HostSuccessRate: 66.7, Mean: 94.4, Threshold: 70.8, Enforcing: 100, Backoff: 1, DurationMs: 30000},
		want: "40 s: h5 success rate 66.7% is below the threshold 70.8% (mean 94.4 − 1.9 × 12.4, success_rate_stdev_factor): " +
			"detected; cap (0+1)/6 = 16.7% ≤ 34% (max_ejection_percent): ejected for 30 s (base_ejection_time 30 s × 1).",
		out: Ejected,
	},
	{
		name: "gRPC: the cap counts only the hosts already ejected",
		ev: engine.Event{AtMs: 40000, Host: "h5", Kind: engine.EventEject, Detector: engine.SuccessRate,
			Cap: engine.CapAdmitsGRPC(0, 6, 10), HostSuccessRate: 66.7, Mean: 94.4, Threshold: 70.8, Enforcing: 100, Backoff: 1, DurationMs: 30000},
		want: "40 s: h5 success rate 66.7% is below the threshold 70.8% (mean 94.4 − 1.9 × 12.4, success_rate_stdev_factor): " +
			"detected; cap 0/6 = 0.0% < 10% (max_ejection_percent, gRPC counts only the hosts already ejected): ejected for 30 s (base_ejection_time 30 s × 1).",
		out: Ejected,
	},
	{
		name: "gRPC: one host out of six fills a 10% cap",
		ev: engine.Event{AtMs: 50000, Host: "h4", Kind: engine.EventOverflow, Detector: engine.SuccessRate,
			Cap: engine.CapAdmitsGRPC(1, 6, 10), HostSuccessRate: 66.7, Mean: 94.4, Threshold: 70.8},
		want: "50 s: h4 success rate 66.7% is below the threshold 70.8% (mean 94.4 − 1.9 × 12.4, success_rate_stdev_factor): " +
			"detected; cap 1/6 = 16.7% ≥ 10% (max_ejection_percent, gRPC counts only the hosts already ejected): refused (overflow).",
		out: Overflow,
	},
	{
		name: "backoff capped by max_ejection_time, with jitter",
		cfg:  func(c *engine.Config) { c.MaxEjectionPercent = 50 },
		ev: engine.Event{AtMs: 123456, Host: "h1", Kind: engine.EventEject, Detector: engine.Consecutive5xx,
			Cap: capAt(1, 4, 50, false), Enforcing: 100, Backoff: 11, JitterMs: 1500, DurationMs: 301500},
		want: "123.5 s: h1 returned 5 errors in a row (consecutive_5xx): detected; cap (1+1)/4 = 50.0% ≤ 50% (max_ejection_percent): " +
			"ejected for 301.5 s (max_ejection_time 300 s; base_ejection_time 30 s × 11 = 330 s + 1.5 s jitter).",
		out: Ejected,
	},
	{
		name: "gateway failures detected but not enforced",
		ev: engine.Event{AtMs: 12000, Host: "h2", Kind: engine.EventDetect, Detector: engine.ConsecutiveGatewayFailure,
			Cap: capAt(0, 6, 10, true), Enforcing: 0},
		want: "12 s: h2 returned 5 gateway failures (502/503/504) in a row (consecutive_gateway_failure): detected; " +
			"cap (0+1)/6 = 16.7% > 10% (max_ejection_percent), but no host is ejected yet (always_eject_one_host): " +
			"admitted; enforcing_consecutive_gateway_failure 0%: not enforced, so not ejected (detect only).",
		out: DetectOnly,
	},
	{
		name: "failure percentage",
		ev: engine.Event{AtMs: 50000, Host: "h3", Kind: engine.EventOverflow, Detector: engine.FailurePercentage,
			Cap: capAt(1, 6, 10, false), HostSuccessRate: 10, Mean: -1, Threshold: -1},
		want: "50 s: h3 failure percentage 90.0% is at or above 85% (failure_percentage_threshold): detected; " +
			"cap (1+1)/6 = 33.3% > 10% (max_ejection_percent): refused (overflow).",
		out: Overflow,
	},
	{
		name: "returns after its time",
		ev:   engine.Event{AtMs: 70000, Host: "h5", Kind: engine.EventUneject, Cause: engine.UnejectTimeElapsed, EjectedMs: 30000},
		want: "70 s: h5 returns to service after 30 s out: its ejection time had elapsed at this tick.",
		out:  Returned,
	},
	{
		name: "returns on a health check",
		ev:   engine.Event{AtMs: 52300, Host: "h0", Kind: engine.EventUneject, Cause: engine.UnejectActiveHealthCheck, EjectedMs: 12300},
		want: "52.3 s: h0 returns to service after 12.3 s out: an active health check passed (successful_active_health_check_uneject_host).",
		out:  Returned,
	},
	{
		name: "local-origin success rate quotes the local pass's σ",
		cfg:  func(c *engine.Config) { c.SplitExternalLocalOriginErrors = true },
		ev: engine.Event{AtMs: 40000, Host: "h2", Kind: engine.EventOverflow, Detector: engine.SuccessRateLocalOrigin,
			Cap: capAt(0, 6, 10, false), HostSuccessRate: 50, Mean: 80, Threshold: 70.5},
		want: "40 s: h2 local-origin success rate 50.0% is below the threshold 70.5% (mean 80.0 − 1.9 × 5.0, success_rate_stdev_factor): " +
			"detected; cap (0+1)/6 = 16.7% > 10% (max_ejection_percent): refused (overflow).",
		out: Overflow,
	},
	{
		name: "local-origin failure percentage",
		ev: engine.Event{AtMs: 40000, Host: "h2", Kind: engine.EventOverflow, Detector: engine.FailurePercentageLocalOrigin,
			Cap: capAt(0, 6, 10, false), HostSuccessRate: 12.5, Mean: -1, Threshold: -1},
		want: "40 s: h2 local-origin failure percentage 87.5% is at or above 85% (failure_percentage_threshold): " +
			"detected; cap (0+1)/6 = 16.7% > 10% (max_ejection_percent): refused (overflow).",
		out: Overflow,
	},
	{
		name: "enforcing below 100: the draw said no",
		ev: engine.Event{AtMs: 20100, Host: "h3", Kind: engine.EventDetect, Detector: engine.Consecutive5xx,
			Cap: capAt(0, 10, 10, false), Enforcing: 50},
		want: "20.1 s: h3 returned 5 errors in a row (consecutive_5xx): detected; cap (0+1)/10 = 10.0% ≤ 10% (max_ejection_percent): " +
			"admitted; enforcing_consecutive_5xx 50%: the draw said no, so not ejected (detect only).",
		out: DetectOnly,
	},
	{
		name: "always_eject_one_host lets the first ejection through",
		ev: engine.Event{AtMs: 30100, Host: "h3", Kind: engine.EventEject, Detector: engine.ConsecutiveLocalOriginFailure,
			Cap: capAt(0, 4, 10, true), Enforcing: 100, Backoff: 1, DurationMs: 30000},
		want: "30.1 s: h3 had 5 local-origin failures in a row (consecutive_local_origin_failure): detected; " +
			"cap (0+1)/4 = 25.0% > 10% (max_ejection_percent), but no host is ejected yet (always_eject_one_host): " +
			"ejected for 30 s (base_ejection_time 30 s × 1).",
		out: Ejected,
	},
	{
		name: "degraded",
		ev:   engine.Event{AtMs: 15000, Host: "h1", Kind: engine.EventDegrade, Detector: engine.Degraded, Backoff: 2, DurationMs: 60000},
		want: "15 s: h1 answered with x-envoy-degraded and is marked degraded (detect_degraded_hosts) for 60 s (base_ejection_time 30 s × 2): " +
			"not ejected, but out of panic the load balancer sends degraded hosts only the load the healthy ones cannot take, none while 140 × healthy hosts / hosts ≥ 100.",
		out: Degraded,
	},
	{
		name: "no longer degraded",
		ev:   engine.Event{AtMs: 50000, Host: "h1", Kind: engine.EventUndegrade, EjectedMs: 35000},
		want: "50 s: h1 is no longer degraded.",
		out:  Returned,
	},
}

func TestDecisionSentences(t *testing.T) {
	cfg := engine.DefaultConfig()
	local := srPass(80, 5, 70.5, 6)
	local.Origin = engine.Local
	iv := Interval{TMs: 40000, External: srPass(94.4, 12.4, 70.8, 6), Local: local}
	for _, tt := range eventCases {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg
			if tt.cfg != nil {
				tt.cfg(&c)
			}
			got := Event(&tt.ev, &iv, c)
			if got.String() != tt.want {
				t.Errorf("sentence\n got: %s\nwant: %s", got.String(), tt.want)
			}
			if got.Outcome != tt.out {
				t.Errorf("outcome %s, want %s", got.Outcome.Badge(), tt.out.Badge())
			}
		})
	}
}

func TestDecisionNonEvents(t *testing.T) {
	cfg := engine.DefaultConfig()
	f := Interval{
		TMs: 20000,
		External: engine.RatePass{Origin: engine.External, Hosts: 6, SRGate: engine.GateTooFewHostsWithVolume,
			SRHostsVolume: 4, SRMinimumHosts: 5, SRRequestVolume: 100, FPGate: engine.GateTooFewHostsWithVolume},
		Hosts: []HostVolume{
			{Name: "h0", Requests: 150}, {Name: "h1", Requests: 150}, {Name: "h2", Requests: 150},
			{Name: "h3", Requests: 150}, {Name: "h4", Requests: 73}, {Name: "h5", Requests: 0},
		},
	}
	got := Decisions(&f, cfg)
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
		if o := got[i].Outcome; o != Skipped && o != NotCounted {
			t.Errorf("entry %d is %s, want a skip", i, o.Badge())
		}
	}

	// A pass that ran and found nobody says so, with its numbers.
	f.External = engine.RatePass{Origin: engine.External, Hosts: 6, SRGate: engine.GateRan, SRHostsVolume: 6,
		SRMinimumHosts: 5, SRRequestVolume: 100, Mean: 99.1, StdDev: 1.0, Threshold: 97.2}
	f.Hosts = nil
	got = Decisions(&f, cfg)
	if len(got) != 1 || got[0].String() != "20 s: success rate: no host of 6 below 97.2% (mean 99.1 − 1.9 × 1.0)." {
		t.Errorf("ran, no outlier: %v", got)
	}

	// Too few hosts at all.
	f.External = engine.RatePass{Origin: engine.External, Hosts: 4, SRGate: engine.GateTooFewHosts, FPGate: engine.GateTooFewHosts,
		SRMinimumHosts: 5, FPMinimumHosts: 5}
	got = Decisions(&f, cfg)
	if len(got) != 1 || got[0].String() != "20 s: success rate and failure percentage skipped: the cluster has 4 hosts, "+
		"fewer than success_rate_minimum_hosts 5 and failure_percentage_minimum_hosts 5." {
		t.Errorf("too few hosts: %v", got)
	}
}

// A sentence cites its fields, numbers and hosts as spans, so a page can
// set them apart; the plain text is the spans joined.
func TestSentenceCites(t *testing.T) {
	ev := engine.Event{AtMs: 1000, Host: "h0", Kind: engine.EventOverflow, Detector: engine.Consecutive5xx, Cap: engine.CapAdmits(0, 6, 10, false)}
	s := Event(&ev, &Interval{}, engine.DefaultConfig())
	join := func(k Kind) string {
		var out []string
		for _, p := range s.Cited(k) {
			out = append(out, p.String())
		}
		return strings.Join(out, ",")
	}
	if got := join(Field); got != "consecutive_5xx,max_ejection_percent" {
		t.Errorf("fields = %s", got)
	}
	if got := join(Number); got != "5,0,6,16.7%,10%" {
		t.Errorf("numbers = %s", got)
	}
	if got := join(Host); got != "h0" {
		t.Errorf("hosts = %s", got)
	}
	for i := 1; i < len(s.Spans); i++ {
		if s.Spans[i].Kind == Text && s.Spans[i-1].Kind == Text {
			t.Errorf("spans %d and %d are both words: %q %q", i-1, i, s.Spans[i-1].Text, s.Spans[i].Text)
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
			iv := Interval{TMs: tc.ev.AtMs, External: tc.pass}
			if got := Event(&tc.ev, &iv, cfg).String(); !strings.Contains(got, tc.want) {
				t.Errorf("\n got: %s\nwant it to contain: %s", got, tc.want)
			}
		})
	}
}

// A refusal repeated thousands of times in an interval is one entry.
func TestDecisionRepeatsFolded(t *testing.T) {
	cfg := engine.DefaultConfig()
	var f Interval
	f.TMs = 240000
	f.External = engine.RatePass{Origin: engine.External, SRGate: engine.GateRan, SROutliers: 1}
	for i := range 1000 {
		f.Events = append(f.Events, engine.Event{AtMs: 230000 + int64(i)*9, Host: "h3", Kind: engine.EventOverflow,
			Detector: engine.Consecutive5xx, Cap: engine.CapAdmits(5, 10, 50, false)})
	}
	f.Events = append(f.Events, engine.Event{AtMs: 239000, Host: "h4", Kind: engine.EventOverflow,
		Detector: engine.Consecutive5xx, Cap: engine.CapAdmits(5, 10, 50, false)})
	got := Decisions(&f, cfg)
	if len(got) != 2 {
		t.Fatalf("%d entries, want 2", len(got))
	}
	if want := "230 s: h3 returned 5 errors in a row (consecutive_5xx): detected; cap (5+1)/10 = 60.0% > 50% (max_ejection_percent): refused (overflow). The same, 1000 times in all, until 238.99 s."; got[0].String() != want {
		t.Errorf("\n got: %s\nwant: %s", got[0], want)
	}
}

// Each gate of a rate pass, told once per origin that runs. Failure
// percentage is told only when it can eject (enforcing_failure_percentage
// above 0), the local-origin pass only in split mode.
func TestPassSentences(t *testing.T) {
	volumeGate := engine.RatePass{Hosts: 6, SRGate: engine.GateTooFewHostsWithVolume, SRHostsVolume: 1, SRMinimumHosts: 5,
		SRRequestVolume: 100, FPGate: engine.GateTooFewHostsWithVolume, FPHostsVolume: 2, FPMinimumHosts: 5, FPRequestVolume: 50}
	for _, tc := range []struct {
		name string
		cfg  func(*engine.Config)
		want []string
	}{
		{"defaults: success rate only", nil, []string{
			"success rate skipped: 1 host has ≥ 100 requests (success_rate_request_volume), 5 needed (success_rate_minimum_hosts).",
		}},
		{"failure percentage enforced", func(c *engine.Config) { c.EnforcingFailurePercentage = 100 }, []string{
			"success rate skipped: 1 host has ≥ 100 requests (success_rate_request_volume), 5 needed (success_rate_minimum_hosts).",
			"failure percentage skipped: 2 hosts have ≥ 50 requests (failure_percentage_request_volume), 5 needed (failure_percentage_minimum_hosts).",
		}},
		{"split: both origins", func(c *engine.Config) {
			c.SplitExternalLocalOriginErrors = true
			c.EnforcingFailurePercentageLocalOrigin = 100
		}, []string{
			"success rate skipped: 1 host has ≥ 100 requests (success_rate_request_volume), 5 needed (success_rate_minimum_hosts).",
			"local-origin success rate skipped: 1 host has ≥ 100 requests (success_rate_request_volume), 5 needed (success_rate_minimum_hosts).",
			"local-origin failure percentage skipped: 2 hosts have ≥ 50 requests (failure_percentage_request_volume), 5 needed (failure_percentage_minimum_hosts).",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := engine.DefaultConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			iv := Interval{TMs: 10000, External: volumeGate, Local: volumeGate}
			iv.External.Origin, iv.Local.Origin = engine.External, engine.Local
			var got []string
			for _, s := range Passes(&iv, cfg) {
				got = append(got, s.Text())
				if s.Outcome != Skipped || s.AtMs != 10000 {
					t.Errorf("%s at %d ms, want SKIPPED at the tick", s.Outcome.Badge(), s.AtMs)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(tc.want, "\n      "))
			}
		})
	}
}
