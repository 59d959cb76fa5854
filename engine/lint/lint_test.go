package lint

import (
	"strings"
	"testing"

	"outlierlab/engine"
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
		{"double ejection", func(c *engine.Config) { c.EnforcingFailurePercentage = 100 }, Cluster{Hosts: 10, PanicThreshold: 50}, "enforcing_failure_percentage", Warning, "eject one host twice"},
		{"gateway detect only", nil, Cluster{Hosts: 10, PanicThreshold: 50}, "enforcing_consecutive_gateway_failure", Info, "never ejected"},
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
