package lint

import (
	"strings"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
)

func TestMaxAdmitted(t *testing.T) {
	tests := []struct {
		hosts  int
		max    uint32
		always bool
		want   int
	}{
		{6, 10, false, 0}, {6, 10, true, 1}, {6, 17, false, 1}, {6, 34, false, 2},
		{10, 10, false, 1}, {20, 10, false, 2}, {9, 10, false, 0}, {1, 100, false, 1},
		{4, 50, false, 2}, {3, 50, false, 1}, {5, 0, false, 0}, {5, 0, true, 1},
	}
	for _, tc := range tests {
		cfg := engine.DefaultConfig()
		cfg.MaxEjectionPercent, cfg.AlwaysEjectOneHost = tc.max, tc.always
		if got := MaxAdmitted(cfg, tc.hosts); got != tc.want {
			t.Errorf("N=%d max=%d always=%v: %d, want %d", tc.hosts, tc.max, tc.always, got, tc.want)
		}
	}
}

// §5.3: k bad hosts need N > 4.61·k valid hosts with k = 1.9.
func TestMaxSuccessRateOutliers(t *testing.T) {
	cfg := engine.DefaultConfig()
	for _, tc := range []struct{ n, want int }{{4, 0}, {5, 1}, {9, 1}, {10, 2}, {13, 2}, {14, 3}, {100, 21}} {
		if got := MaxSuccessRateOutliers(cfg, tc.n); got != tc.want {
			t.Errorf("N=%d: %d, want %d", tc.n, got, tc.want)
		}
	}
}

func find(fs []Finding, field string, sev Severity) *Finding {
	for i := range fs {
		if fs[i].Field == field && fs[i].Severity == sev {
			return &fs[i]
		}
	}
	return nil
}

func TestCheck(t *testing.T) {
	def := engine.DefaultConfig()
	tests := []struct {
		name     string
		edit     func(*engine.Config)
		cluster  Cluster
		field    string
		severity Severity
		contains string
	}{
		{"six hosts at 10% never eject", nil, Cluster{Hosts: 6, PanicThreshold: 50}, "max_ejection_percent", Problem, "100·(0+1)/6 = 16.7% > 10%"},
		{"ten hosts admit one", nil, Cluster{Hosts: 10, PanicThreshold: 50}, "max_ejection_percent", Info, "admits 1 of 10"},
		{"four hosts: SR never runs", func(c *engine.Config) { c.MaxEjectionPercent = 25 }, Cluster{Hosts: 4, PanicThreshold: 50}, "success_rate_minimum_hosts", Problem, "4 hosts and it needs 5"},
		{"quiet cluster: volume gate", func(c *engine.Config) { c.MaxEjectionPercent = 20 }, Cluster{Hosts: 10, RPS: 50, PanicThreshold: 50}, "success_rate_request_volume", Problem, "about 50.0 requests per 10s interval, 100 needed"},
		{"panic from a generous cap", func(c *engine.Config) { c.MaxEjectionPercent = 80 }, Cluster{Hosts: 10, PanicThreshold: 50}, "max_ejection_percent", Warning, "ejecting 6 of 10 hosts puts the cluster in panic"},
		{"gateway detect only", nil, Cluster{Hosts: 10, PanicThreshold: 50}, "enforcing_consecutive_gateway_failure", Info, "never ejects"},
		{"backoff saturation", nil, Cluster{Hosts: 10, PanicThreshold: 50}, "max_ejection_time", Info, "saturates at 11"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := def
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			f := find(Check(cfg, tc.cluster), tc.field, tc.severity)
			if f == nil || !strings.Contains(f.Message, tc.contains) {
				t.Fatalf("finding %s/%s = %+v, want it to contain %q\nall: %+v", tc.field, tc.severity, f, tc.contains, Check(cfg, tc.cluster))
			}
		})
	}
	// A generous cap on a big cluster has no problem-level finding.
	cfg := def
	cfg.MaxEjectionPercent = 20
	for _, f := range Check(cfg, Cluster{Hosts: 20, RPS: 2000, PanicThreshold: 50}) {
		if f.Severity == Problem {
			t.Errorf("unexpected problem: %+v", f)
		}
	}
}

// want is one finding a config must (or must not) produce: Field and
// Severity match exactly, Contains is a substring of the message ("" in a
// "not" list means any message).
type want struct {
	Field    string
	Severity Severity
	Contains string
}

func match(fs []Finding, w want) bool {
	for _, f := range fs {
		if f.Field == w.Field && f.Severity == w.Severity && strings.Contains(f.Message, w.Contains) {
			return true
		}
	}
	return false
}

type findingCase struct {
	name    string
	edit    func(*engine.Config)
	cluster Cluster
	want    []want
	not     []want
	notText []string // substrings no finding may contain
}

func runFindingCases(t *testing.T, tests []findingCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := engine.DefaultConfig()
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			fs := Check(cfg, tc.cluster)
			for _, w := range tc.want {
				if !match(fs, w) {
					t.Errorf("missing %s/%s containing %q", w.Field, w.Severity, w.Contains)
				}
			}
			for _, w := range tc.not {
				if match(fs, w) {
					t.Errorf("unexpected %s/%s containing %q", w.Field, w.Severity, w.Contains)
				}
			}
			for _, s := range tc.notText {
				for _, f := range fs {
					if strings.Contains(f.Message, s) {
						t.Errorf("%s: %q must not say %q", f.Field, f.Message, s)
					}
				}
			}
			if t.Failed() {
				for _, f := range fs {
					t.Logf("%s %s: %s", f.Severity, f.Field, f.Message)
				}
			}
		})
	}
}

// Istio's applyOutlierDetection (pilot/pkg/networking/core/
// cluster_traffic_policy.go) always writes enforcing_success_rate: 0, and
// enforcing_local_origin_success_rate: 0 in split mode; an enforcing_* of 0
// makes ejectHost log the detection and return (§4.1).
func TestCheckEnforcement(t *testing.T) {
	big := Cluster{Hosts: 10, RPS: 2000, PanicThreshold: 50}
	runFindingCases(t, []findingCase{
		{
			name:    "istio: success rate detects only",
			edit:    func(c *engine.Config) { c.EnforcingSuccessRate = 0 },
			cluster: big,
			want: []want{
				{"enforcing_success_rate", Info, "success rate is detection-only (enforcing_success_rate 0"},
				{"success_rate_stdev_factor", Info, "can flag at most 2"},
			},
			notText: []string{"can single out"},
		},
		{
			name:    "istio on a small cluster: a success rate that never runs is no problem",
			edit:    func(c *engine.Config) { c.EnforcingSuccessRate = 0; c.MaxEjectionPercent = 100 },
			cluster: Cluster{Hosts: 4, RPS: 50, PanicThreshold: 0},
			want:    []want{{"success_rate_minimum_hosts", Info, "success rate never runs"}},
			not: []want{
				{"success_rate_minimum_hosts", Problem, ""},
				{"success_rate_stdev_factor", Problem, ""},
			},
		},
		{
			name:    "enforced success rate on a small cluster is a problem naming who can still eject",
			edit:    func(c *engine.Config) { c.MaxEjectionPercent = 25 },
			cluster: Cluster{Hosts: 4, PanicThreshold: 50},
			want:    []want{{"success_rate_minimum_hosts", Problem, "ejections can come only from consecutive_5xx."}},
		},
		{
			name: "the list of who can still eject leaves out a failure percentage that cannot run either",
			edit: func(c *engine.Config) {
				c.MaxEjectionPercent, c.EnforcingFailurePercentage = 25, 100
				c.SplitExternalLocalOriginErrors = true
			},
			cluster: Cluster{Hosts: 4, PanicThreshold: 50},
			want:    []want{{"success_rate_minimum_hosts", Problem, "ejections can come only from consecutive_5xx and consecutive_local_origin_failure."}},
		},
		{
			name:    "partial success-rate enforcement",
			edit:    func(c *engine.Config) { c.EnforcingSuccessRate = 30 },
			cluster: big,
			want:    []want{{"enforcing_success_rate", Info, "ejects on 30% of its detections"}},
		},
		{
			name:    "consecutive_5xx detects only",
			edit:    func(c *engine.Config) { c.EnforcingConsecutive5xx = 0 },
			cluster: big,
			want:    []want{{"enforcing_consecutive_5xx", Info, "consecutive_5xx detects 5 5xx in a row but never ejects (enforcing_consecutive_5xx 0)"}},
		},
		{
			name: "every detector detects only",
			edit: func(c *engine.Config) {
				c.EnforcingConsecutive5xx, c.EnforcingSuccessRate = 0, 0
			},
			cluster: big,
			want:    []want{{"outlier_detection", Warning, "no detector can eject"}},
		},
		{
			name:    "defaults eject",
			cluster: big,
			not:     []want{{"outlier_detection", Warning, ""}, {"enforcing_success_rate", Info, ""}},
		},
	})
}

// With healthy_panic_threshold 0 the load balancer never panics: with no
// healthy host left it has nothing to pick and the router answers 503 "no
// healthy upstream" (§7.3, §7.4, §11.5).
func TestCheckPanicDisabled(t *testing.T) {
	const noHealthy = `503 "no healthy upstream"`
	runFindingCases(t, []findingCase{
		{
			name:    "100% cap, panic 0",
			edit:    func(c *engine.Config) { c.MaxEjectionPercent = 100 },
			cluster: Cluster{Hosts: 6, RPS: 600, PanicThreshold: 0},
			want:    []want{{"healthy_panic_threshold", Warning, "the cap lets all 6 hosts be ejected: with every host out clients get " + noHealthy}},
		},
		{
			name:    "one host, always_eject_one_host, panic 0",
			edit:    func(c *engine.Config) { c.AlwaysEjectOneHost = true },
			cluster: Cluster{Hosts: 1, PanicThreshold: 0},
			want:    []want{{"healthy_panic_threshold", Warning, "all 1 hosts be ejected"}},
		},
		{
			name:    "50% cap, panic 0: survivors take it all",
			edit:    func(c *engine.Config) { c.MaxEjectionPercent = 50 },
			cluster: Cluster{Hosts: 6, RPS: 600, PanicThreshold: 0},
			want:    []want{{"healthy_panic_threshold", Info, "the 3 hosts left in service take all the traffic"}},
			not:     []want{{"healthy_panic_threshold", Warning, ""}},
		},
		{
			name:    "100% cap, panic 50: panic, not 503",
			edit:    func(c *engine.Config) { c.MaxEjectionPercent = 100 },
			cluster: Cluster{Hosts: 6, RPS: 600, PanicThreshold: 50},
			want:    []want{{"max_ejection_percent", Warning, "puts the cluster in panic"}},
			not:     []want{{"healthy_panic_threshold", Warning, ""}},
		},
	})
}

// Split mode (putResultWithLocalExternalSplit): connect failures, resets and
// timeouts feed consecutive_local_origin_failure and the local-origin
// success rate, both enforced 100% by default (§1 rows 13–15).
func TestCheckSplitMode(t *testing.T) {
	big := Cluster{Hosts: 10, RPS: 2000, PanicThreshold: 50}
	runFindingCases(t, []findingCase{
		{
			name:    "split mode defaults",
			edit:    func(c *engine.Config) { c.SplitExternalLocalOriginErrors = true },
			cluster: big,
			want: []want{
				{"split_external_local_origin_errors", Info, "no longer count toward consecutive_5xx"},
				{"consecutive_local_origin_failure", Info, "5 local-origin failures in a row eject a host (enforced 100%"},
				{"enforcing_local_origin_success_rate", Info, "local-origin success rate runs too"},
				{"enforcing_local_origin_success_rate", Info, "enforced 100%"},
				{"enforcing_failure_percentage_local_origin", Info, "detection-only"},
			},
		},
		{
			name: "istio split mode",
			edit: func(c *engine.Config) {
				c.SplitExternalLocalOriginErrors = true
				c.EnforcingSuccessRate, c.EnforcingLocalOriginSuccessRate = 0, 0
			},
			cluster: big,
			want: []want{
				{"enforcing_local_origin_success_rate", Info, "detection-only"},
				{"consecutive_local_origin_failure", Info, "eject a host"},
			},
			not: []want{{"outlier_detection", Warning, ""}},
		},
		{
			name: "split mode, local-origin consecutive detects only",
			edit: func(c *engine.Config) {
				c.SplitExternalLocalOriginErrors = true
				c.EnforcingConsecutiveLocalOriginFailure = 0
			},
			cluster: big,
			want:    []want{{"consecutive_local_origin_failure", Info, "detected but never ejected"}},
		},
		{
			name:    "local-origin fields without split mode",
			edit:    func(c *engine.Config) { c.ConsecutiveLocalOriginFailure = 3 },
			cluster: big,
			want:    []want{{"split_external_local_origin_errors", Info, "are ignored"}},
			not:     []want{{"consecutive_local_origin_failure", Info, ""}},
		},
	})
}

// putHttpResponseCode fires a consecutive detector when the streak, just
// incremented, equals the threshold: a threshold of 0 never fires (§1).
func TestCheckConsecutive(t *testing.T) {
	big := Cluster{Hosts: 10, RPS: 2000, PanicThreshold: 50}
	runFindingCases(t, []findingCase{
		{
			name:    "consecutive_5xx 0",
			edit:    func(c *engine.Config) { c.Consecutive5xx = 0 },
			cluster: big,
			want: []want{{"consecutive_5xx", Info,
				"consecutive_5xx is off (threshold 0 never fires). 5xx responses still count toward consecutive_gateway_failure (502/503/504 only, detection-only, enforcing 0%), success rate (enforced 100%) and failure percentage (detection-only, enforcing 0%)."}},
			notText: []string{"count toward consecutive_5xx", "still count toward consecutive_5xx"},
		},
		{
			name: "consecutive_5xx 0, nothing else ejects 5xx",
			edit: func(c *engine.Config) {
				c.Consecutive5xx, c.EnforcingSuccessRate = 0, 0
			},
			cluster: big,
			want:    []want{{"consecutive_5xx", Info, "None of them ejects, so no 5xx response ever takes a host out"}},
		},
		{
			name:    "gateway detects only, consecutive_5xx ejects the streak",
			cluster: big,
			want: []want{{"enforcing_consecutive_gateway_failure", Info,
				"consecutive_gateway_failure detects 5 502/503/504 in a row but never ejects (enforcing 0%, Envoy's default); they are 5xx too, so 5 in a row eject through consecutive_5xx"}},
		},
		{
			name:    "gateway detects only, consecutive_5xx off",
			edit:    func(c *engine.Config) { c.Consecutive5xx = 0 },
			cluster: big,
			want:    []want{{"enforcing_consecutive_gateway_failure", Info, "consecutive_5xx does not eject either (off), so no streak ejects"}},
		},
		{
			name:    "gateway off",
			edit:    func(c *engine.Config) { c.ConsecutiveGatewayFailure = 0 },
			cluster: big,
			want:    []want{{"consecutive_gateway_failure", Info, "consecutive_gateway_failure is off (threshold 0"}},
			not:     []want{{"enforcing_consecutive_gateway_failure", Info, ""}},
		},
	})
}

// The two streak detectors as Istio leaves them (applyOutlierDetection
// writes each consecutive field, enforced 100, only when the rule sets it):
// a gateway threshold alone keeps consecutive_5xx at Envoy's 5, enforced,
// so 500s still eject; a gateway threshold not below the 5xx one never
// ejects first, since putHttpResponseCode counts every gateway error in the
// 5xx streak too.
func TestCheckConsecutiveOverlap(t *testing.T) {
	big := Cluster{Hosts: 10, RPS: 2000, PanicThreshold: 50}
	gateway := func(n uint32) func(*engine.Config) {
		return func(c *engine.Config) { c.ConsecutiveGatewayFailure, c.EnforcingConsecutiveGatewayFailure = n, 100 }
	}
	both := func(gw, c5 uint32) func(*engine.Config) {
		return func(c *engine.Config) {
			c.ConsecutiveGatewayFailure, c.EnforcingConsecutiveGatewayFailure = gw, 100
			c.Consecutive5xx, c.EnforcingConsecutive5xx = c5, 100
		}
	}
	runFindingCases(t, []findingCase{
		{
			name:    "gateway 3 alone: consecutive_5xx still ejects on 500s",
			edit:    gateway(3),
			cluster: big,
			want: []want{{"consecutive_5xx", Warning,
				"consecutive_gateway_failure ejects after 3 502/503/504 in a row, and consecutive_5xx is still on at Envoy's defaults (5 in a row, enforcing_consecutive_5xx 100): five 5xx of any kind, plain 500s included, eject too."},
				{"consecutive_5xx", Warning, "sets consecutiveGatewayErrors and leaves out consecutive5xxErrors: istiod writes consecutive_gateway_failure: 3 and enforcing_consecutive_gateway_failure: 100, and nothing for consecutive_5xx"}},
			not: []want{{"consecutive_gateway_failure", Warning, ""}},
		},
		{
			name:    "gateway 3, consecutive_5xx 0: gateway errors only",
			edit:    func(c *engine.Config) { gateway(3)(c); c.Consecutive5xx, c.EnforcingConsecutive5xx = 0, 0 },
			cluster: big,
			not:     []want{{"consecutive_5xx", Warning, ""}, {"consecutive_gateway_failure", Warning, ""}},
		},
		{
			name:    "gateway 3, consecutive_5xx 10 set on purpose: said, not warned",
			edit:    both(3, 10),
			cluster: big,
			want:    []want{{"consecutive_5xx", Info, "3 502/503/504 in a row (consecutive_gateway_failure), or 10 5xx of any kind in a row, 500s included (consecutive_5xx, enforced 100%)"}},
			not:     []want{{"consecutive_5xx", Warning, ""}, {"consecutive_gateway_failure", Warning, ""}},
		},
		{
			name:    "gateway 5 = consecutive_5xx 5: no effect",
			edit:    gateway(5),
			cluster: big,
			want: []want{{"consecutive_gateway_failure", Warning, "consecutive_gateway_failure (5) is not below consecutive_5xx (5, enforced 100%)"},
				{"consecutive_gateway_failure", Warning, "both reach 5 on the same response"},
				{"consecutive_gateway_failure", Warning, "consecutiveGatewayErrors ≥ consecutive5xxErrors"}},
			not: []want{{"consecutive_5xx", Warning, ""}},
		},
		{
			name:    "gateway 7 above consecutive_5xx 3: no effect",
			edit:    both(7, 3),
			cluster: big,
			want:    []want{{"consecutive_gateway_failure", Warning, "consecutive_gateway_failure (7) is not below consecutive_5xx (3, enforced 100%), so it never ejects a host that consecutive_5xx would not eject first"}},
			notText: []string{"same response"},
		},
		{
			name:    "gateway detection-only (Envoy's default): nothing to say about overlap",
			cluster: big,
			not:     []want{{"consecutive_gateway_failure", Warning, ""}, {"consecutive_5xx", Warning, ""}, {"consecutive_5xx", Info, "both streak detectors eject"}},
		},
		{
			name:    "consecutive_5xx partly enforced: its detections reset the streak, so the gateway detector may act",
			edit:    func(c *engine.Config) { both(5, 5)(c); c.EnforcingConsecutive5xx = 50 },
			cluster: big,
			not:     []want{{"consecutive_gateway_failure", Warning, ""}},
		},
	})
}

// The traps as a DestinationRule reaches lint: translated by envoyconf the
// way istiod translates it (applyOutlierDetection), then checked.
func TestCheckIstioConsecutiveTraps(t *testing.T) {
	rule := func(od string) string {
		return "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: reviews}\nspec:\n  host: reviews\n  trafficPolicy:\n    outlierDetection: " + od + "\n"
	}
	tests := []struct {
		name string
		od   string
		want []want
		not  []want
	}{
		{"only consecutiveGatewayErrors", "{consecutiveGatewayErrors: 3}",
			[]want{{"consecutive_5xx", Warning, "plain 500s included, eject too"}}, nil},
		{"consecutiveGatewayErrors with consecutive5xxErrors: 0", "{consecutiveGatewayErrors: 3, consecutive5xxErrors: 0}",
			nil, []want{{"consecutive_5xx", Warning, ""}, {"consecutive_gateway_failure", Warning, ""}}},
		{"consecutiveGatewayErrors = consecutive5xxErrors", "{consecutiveGatewayErrors: 5, consecutive5xxErrors: 5}",
			[]want{{"consecutive_gateway_failure", Warning, "is not below consecutive_5xx (5, enforced 100%)"}}, nil},
		{"consecutiveGatewayErrors above consecutive5xxErrors", "{consecutiveGatewayErrors: 10, consecutive5xxErrors: 3}",
			[]want{{"consecutive_gateway_failure", Warning, "consecutive_gateway_failure (10) is not below consecutive_5xx (3"}}, nil},
		{"consecutiveGatewayErrors below consecutive5xxErrors", "{consecutiveGatewayErrors: 2, consecutive5xxErrors: 7}",
			[]want{{"consecutive_5xx", Info, "both streak detectors eject"}}, []want{{"consecutive_gateway_failure", Warning, ""}, {"consecutive_5xx", Warning, ""}}},
		// The translated cluster is the same as with consecutive5xxErrors
		// left out: lint cannot tell them apart, and says so.
		{"consecutiveGatewayErrors below an explicit consecutive5xxErrors: 5", "{consecutiveGatewayErrors: 2, consecutive5xxErrors: 5}",
			[]want{{"consecutive_5xx", Warning, "(as consecutive5xxErrors: 5 would)"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := envoyconf.ParseCluster([]byte(rule(tc.od)))
			if err != nil {
				t.Fatal(err)
			}
			fs := Check(c.Outlier, Cluster{Hosts: 6, RPS: 600, PanicThreshold: c.PanicThreshold})
			for _, w := range tc.want {
				if !match(fs, w) {
					t.Errorf("missing %s/%s containing %q\nall: %+v", w.Field, w.Severity, w.Contains, fs)
				}
			}
			for _, w := range tc.not {
				if match(fs, w) {
					t.Errorf("unexpected %s/%s containing %q", w.Field, w.Severity, w.Contains)
				}
			}
		})
	}
}

// The backoff multiplier rises at each enforced ejection (ejectHost) and
// falls by one at every tick the host spends back in service from one full
// interval after its uneject (DetectorImpl::onIntervalTimer; §6.2).
func TestCheckEjectionTime(t *testing.T) {
	big := Cluster{Hosts: 10, RPS: 2000, PanicThreshold: 50}
	runFindingCases(t, []findingCase{
		{
			name:    "defaults",
			cluster: big,
			want: []want{
				{"max_ejection_time", Info, "30s, 60s, 90s, …, 300s"},
				{"max_ejection_time", Info, "saturates at 11"},
				{"max_ejection_time", Info, "falls by one at every detector tick (10s) while the host is back in service"},
				{"max_ejection_time", Info, "whatever the host does"},
				{"max_ejection_time", Info, "back at 0 about 110s after the uneject"},
			},
			notText: []string{"clean interval", "longer by"},
		},
		{
			name:    "max equals base",
			edit:    func(c *engine.Config) { c.BaseEjectionTimeMs, c.MaxEjectionTimeMs = 400000, 400000 },
			cluster: big,
			want:    []want{{"max_ejection_time", Info, "every ejection lasts 400s: max_ejection_time equals base_ejection_time, so repeats do not grow"}},
			notText: []string{"longer by", "per repeat"},
		},
		{
			name:    "max not a multiple of base",
			edit:    func(c *engine.Config) { c.MaxEjectionTimeMs = 100000 },
			cluster: big,
			want: []want{
				{"max_ejection_time", Info, "30s, 60s, 90s, 100s"},
				{"max_ejection_time", Info, "saturates at 5"},
			},
		},
		{
			name:    "max just above base",
			edit:    func(c *engine.Config) { c.MaxEjectionTimeMs = 45000 },
			cluster: big,
			want:    []want{{"max_ejection_time", Info, "30s, 45s"}},
		},
	})
}

// processSuccessRateEjections builds the failure-percentage list before
// success rate ejects, and ejectHost does not check the host's flag, so one
// host can be ejected by both in one tick (§5.2). That needs both enforced,
// both able to run, and room under the cap for the second ejection.
func TestCheckDoubleEjection(t *testing.T) {
	const double = "both flag the same host in one tick"
	fp := func(c *engine.Config) { c.EnforcingFailurePercentage = 100 }
	runFindingCases(t, []findingCase{
		{
			name:    "cap 20% on 10 hosts",
			edit:    func(c *engine.Config) { fp(c); c.MaxEjectionPercent = 20 },
			cluster: Cluster{Hosts: 10, RPS: 2000, PanicThreshold: 50},
			want:    []want{{"enforcing_failure_percentage", Info, double}},
			not:     []want{{"enforcing_failure_percentage", Warning, ""}},
		},
		{
			name:    "the default cap leaves no room for a second ejection",
			edit:    fp,
			cluster: Cluster{Hosts: 10, RPS: 2000, PanicThreshold: 50},
			notText: []string{double, "eject one host twice"},
		},
		{
			name:    "success rate not enforced",
			edit:    func(c *engine.Config) { fp(c); c.MaxEjectionPercent = 50; c.EnforcingSuccessRate = 0 },
			cluster: Cluster{Hosts: 10, RPS: 2000, PanicThreshold: 50},
			notText: []string{double, "eject one host twice"},
		},
		{
			name:    "success rate cannot run on 4 hosts",
			edit:    func(c *engine.Config) { fp(c); c.MaxEjectionPercent = 50; c.FailurePercentageMinimumHosts = 1 },
			cluster: Cluster{Hosts: 4, RPS: 2000, PanicThreshold: 50},
			notText: []string{double, "eject one host twice"},
		},
		{
			name:    "too little traffic for success rate",
			edit:    func(c *engine.Config) { fp(c); c.MaxEjectionPercent = 50 },
			cluster: Cluster{Hosts: 10, RPS: 80, PanicThreshold: 50},
			notText: []string{double, "eject one host twice"},
		},
		{
			name: "split mode: the local-origin pair",
			edit: func(c *engine.Config) {
				c.SplitExternalLocalOriginErrors = true
				c.EnforcingFailurePercentageLocalOrigin = 100
				c.MaxEjectionPercent = 20
			},
			cluster: Cluster{Hosts: 10, RPS: 2000, PanicThreshold: 50},
			want:    []want{{"enforcing_failure_percentage_local_origin", Info, double}},
		},
	})
}

// Failure percentage, once enforced, has gates of its own (§5.2).
func TestCheckFailurePercentageGates(t *testing.T) {
	fp := func(c *engine.Config) { c.EnforcingFailurePercentage = 100; c.MaxEjectionPercent = 50 }
	runFindingCases(t, []findingCase{
		{
			name:    "too few hosts",
			edit:    fp,
			cluster: Cluster{Hosts: 4, PanicThreshold: 50},
			want:    []want{{"failure_percentage_minimum_hosts", Problem, "failure percentage never runs: the cluster has 4 hosts and it needs 5"}},
		},
		{
			name:    "too little traffic",
			edit:    fp,
			cluster: Cluster{Hosts: 10, RPS: 40, PanicThreshold: 50},
			want:    []want{{"failure_percentage_request_volume", Problem, "about 40.0 requests per 10s interval, 50 needed"}},
		},
		{
			name:    "runs",
			edit:    fp,
			cluster: Cluster{Hosts: 10, RPS: 2000, PanicThreshold: 50},
			want:    []want{{"failure_percentage_threshold", Info, "ejects a host that fails at least 85% of at least 50 requests in one interval"}},
		},
	})
}

// TestCheckMeshSuccessRateVolume: 20 client pods sharing 1 000 req/s over
// six hosts each send a host ~83 requests per 10 s interval, under
// success_rate_request_volume 100, though the cluster's hosts get 1 667.
func TestCheckMeshSuccessRateVolume(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.EnforcingSuccessRate = 100
	want := "success rate never runs in any of the 20 clients: each client's detector counts only its own requests, and 1000 req/s ÷ 20 clients ÷ 6 hosts × 10s is about 83.3 requests per host per interval, 100 needed"
	f := find(Check(cfg, Cluster{Hosts: 6, RPS: 1000, PanicThreshold: 50, Clients: 20}), "success_rate_request_volume", Problem)
	if f == nil || !strings.Contains(f.Message, want) {
		t.Fatalf("finding %+v, want %q", f, want)
	}
	// One proxy with the same traffic has its volume: no such finding.
	if f := find(Check(cfg, Cluster{Hosts: 6, RPS: 1000, PanicThreshold: 50, Clients: 1}), "success_rate_request_volume", Problem); f != nil {
		t.Errorf("one client: %+v", f)
	}
	// Twelve clients send ~139 each: it runs.
	if f := find(Check(cfg, Cluster{Hosts: 6, RPS: 1000, PanicThreshold: 50, Clients: 12}), "success_rate_request_volume", Problem); f != nil {
		t.Errorf("twelve clients: %+v", f)
	}
}

// TestCheckMeshFailurePercentageVolume: failure_percentage_request_volume
// 50 against 40 clients sharing 600 req/s over ten hosts: 15 requests per
// host per interval for each client.
func TestCheckMeshFailurePercentageVolume(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.EnforcingFailurePercentage = 100
	want := "failure percentage never runs in any of the 40 clients: each client's detector counts only its own requests, and 600 req/s ÷ 40 clients ÷ 10 hosts × 10s is about 15.0 requests per host per interval, 50 needed."
	f := find(Check(cfg, Cluster{Hosts: 10, RPS: 600, PanicThreshold: 50, Clients: 40}), "failure_percentage_request_volume", Problem)
	if f == nil || f.Message != want {
		t.Fatalf("finding %+v, want %q", f, want)
	}
	if f := find(Check(cfg, Cluster{Hosts: 10, RPS: 600, PanicThreshold: 50, Clients: 4}), "failure_percentage_request_volume", Problem); f != nil {
		t.Errorf("four clients (150 each): %+v", f)
	}
}
