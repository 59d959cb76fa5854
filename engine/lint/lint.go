// Package lint reads an outlier_detection config against a cluster's size
// and traffic and says, in numbers, what the detector can and cannot do
// there: the checks an SRE would otherwise learn from an outage (a cap that
// refuses every ejection, a success-rate detector that never runs, a
// detector that only logs). It is arithmetic over engine's rules, no I/O.
package lint

import (
	"fmt"
	"math"

	"outlierlab/engine"
)

// Cluster is what lint needs to know besides the config.
type Cluster struct {
	Hosts int
	// RPS is the cluster's request rate; 0 means unknown (volume gates are
	// then explained, not judged).
	RPS float64
	// PanicThreshold is common_lb_config.healthy_panic_threshold (default 50).
	PanicThreshold float64
}

// Severity orders findings: a Problem means the config cannot do what
// outlier detection is for on this cluster.
type Severity int

const (
	Info Severity = iota
	Warning
	Problem
)

func (s Severity) String() string {
	return [...]string{"info", "warning", "problem"}[s]
}

// Finding is one statement about the config on this cluster, naming the
// field that decides it.
type Finding struct {
	Severity Severity
	Field    string
	Message  string
}

// MaxAdmitted is how many hosts the cap lets be ejected at once: ejections
// are admitted one by one while 100·(active+1)/N <= max (Envoy ≥ 1.28), with
// always_eject_one_host admitting the first whatever the cap says.
func MaxAdmitted(cfg engine.Config, hosts int) int {
	n := 0
	for n < hosts && engine.CapAdmits(uint64(n), hosts, cfg.MaxEjectionPercent, cfg.AlwaysEjectOneHost).Allowed {
		n++
	}
	return n
}

// MaxSuccessRateOutliers is the largest k for which k equally bad hosts
// among N valid hosts (the rest perfect) still fall below mean − f·σ: the
// condition is N > k·(1+f²), whatever how bad they are (§5.3).
func MaxSuccessRateOutliers(cfg engine.Config, validHosts int) int {
	f := cfg.StdevFactor()
	bound := 1 + f*f
	k := int(math.Ceil(float64(validHosts)/bound)) - 1
	return max(k, 0)
}

// Check returns the findings, most severe first within each topic.
func Check(cfg engine.Config, c Cluster) []Finding {
	var out []Finding
	add := func(s Severity, field, format string, args ...any) {
		out = append(out, Finding{s, field, fmt.Sprintf(format, args...)})
	}
	n := c.Hosts

	// The cap.
	admitted := MaxAdmitted(cfg, n)
	first := engine.CapAdmits(0, n, cfg.MaxEjectionPercent, false)
	switch {
	case admitted == 0:
		add(Problem, "max_ejection_percent",
			"the cap refuses every ejection: 100·(0+1)/%d = %.1f%% > %d%%; detections only raise ejections_overflow. Raise it to at least %d or set always_eject_one_host.",
			n, first.Percent, min(cfg.MaxEjectionPercent, 100), int(math.Ceil(100.0/float64(n))))
	case !first.Allowed && cfg.AlwaysEjectOneHost:
		add(Info, "always_eject_one_host",
			"only always_eject_one_host lets an ejection through: 100·(0+1)/%d = %.1f%% > %d%%; exactly one host can be out at a time.",
			n, first.Percent, cfg.MaxEjectionPercent)
	default:
		add(Info, "max_ejection_percent", "the cap admits %d of %d hosts ejected at once (%d%%).", admitted, n, min(cfg.MaxEjectionPercent, 100))
	}

	// Panic: ejections past the panic threshold send traffic back to
	// ejected hosts (§7.3; no panic while 140·healthy/N >= 100).
	if c.PanicThreshold > 0 && n > 0 {
		for k := 1; k <= admitted; k++ {
			healthy := n - k
			if 140*healthy/n >= 100 {
				continue
			}
			if 100*float64(healthy)/float64(n) < c.PanicThreshold {
				add(Warning, "max_ejection_percent",
					"ejecting %d of %d hosts puts the cluster in panic (%d healthy < %.0f%%): the load balancer then sends traffic to every host, ejected ones included.",
					k, n, healthy, c.PanicThreshold)
				break
			}
		}
	}

	// Success rate.
	intervalS := float64(cfg.IntervalMs) / 1000
	switch {
	case n < int(cfg.SuccessRateMinimumHosts):
		add(Problem, "success_rate_minimum_hosts",
			"success rate never runs: the cluster has %d hosts and it needs %d with enough volume; only the consecutive detectors can eject.",
			n, cfg.SuccessRateMinimumHosts)
	default:
		need := float64(cfg.SuccessRateRequestVolume) / intervalS
		if c.RPS > 0 {
			per := c.RPS / float64(n)
			if per*intervalS < float64(cfg.SuccessRateRequestVolume) {
				add(Problem, "success_rate_request_volume",
					"success rate never runs: each host gets about %.1f requests per %gs interval, %d needed (%.1f req/s per host).",
					per*intervalS, intervalS, cfg.SuccessRateRequestVolume, need)
			} else {
				add(Info, "success_rate_request_volume", "each host gets about %.0f requests per interval; success rate needs %d.", per*intervalS, cfg.SuccessRateRequestVolume)
			}
		} else {
			add(Info, "success_rate_request_volume", "success rate needs %.1f req/s per host (%d requests per %gs interval).", need, cfg.SuccessRateRequestVolume, intervalS)
		}
		k := MaxSuccessRateOutliers(cfg, n)
		if k == 0 {
			add(Problem, "success_rate_stdev_factor",
				"with %d hosts and k = %.2f no host can ever fall below mean − k·σ: one outlier needs more than %.2f valid hosts.",
				n, cfg.StdevFactor(), 1+cfg.StdevFactor()*cfg.StdevFactor())
		} else {
			add(Info, "success_rate_stdev_factor",
				"success rate can single out at most %d equally bad host(s) at once among %d (k bad hosts need more than %.2f·k valid hosts); more mask each other.",
				k, n, 1+cfg.StdevFactor()*cfg.StdevFactor())
		}
	}

	// Detect-only settings.
	if cfg.EnforcingConsecutiveGatewayFailure == 0 && cfg.ConsecutiveGatewayFailure > 0 {
		add(Info, "enforcing_consecutive_gateway_failure", "consecutive gateway failures are detected but never ejected (enforcing 0%%, Envoy's default); 502/503/504 streaks still count toward consecutive_5xx.")
	}
	if cfg.EnforcingFailurePercentage == 0 {
		add(Info, "enforcing_failure_percentage", "failure percentage is detection-only (enforcing 0%%, Envoy's default).")
	}
	if cfg.EnforcingConsecutive5xx == 0 || cfg.Consecutive5xx == 0 {
		add(Info, "consecutive_5xx", "consecutive_5xx never ejects (threshold or enforcement 0).")
	}
	if cfg.EnforcingSuccessRate > 0 && cfg.EnforcingFailurePercentage > 0 {
		add(Warning, "enforcing_failure_percentage",
			"success rate and failure percentage are both enforced: Envoy can eject one host twice in one tick, and ejections_active then stays one too high for the cluster's life (§5.2).")
	}

	// Ejection time.
	b := uint32(0)
	for int64(b)*cfg.BaseEjectionTimeMs < cfg.MaxEjectionTimeMs+cfg.BaseEjectionTimeMs {
		b++
	}
	add(Info, "max_ejection_time",
		"ejections last %gs, then longer by %gs per repeat up to %gs (multiplier saturates at %d; it decays one step per clean interval); unejection happens only at %gs ticks.",
		float64(cfg.BaseEjectionTimeMs)/1000, float64(cfg.BaseEjectionTimeMs)/1000, float64(cfg.MaxEjectionTimeMs)/1000, b, intervalS)
	if cfg.MaxEjectionTimeJitterMs > 0 {
		add(Info, "max_ejection_time_jitter", "up to %gs of jitter is added after the max_ejection_time cap.", float64(cfg.MaxEjectionTimeJitterMs)/1000)
	}
	if n < 5 && admitted > 0 {
		add(Warning, "max_ejection_percent", "with %d hosts one ejection removes %.0f%% of capacity; consider leaving outlier detection off for very small clusters.", n, 100/float64(n))
	}
	return out
}
