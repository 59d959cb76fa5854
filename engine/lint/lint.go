// Package lint reads an outlier_detection config against a cluster's size
// and traffic and says, in numbers, what the detector can and cannot do
// there: the checks an SRE would otherwise learn from an outage (a cap that
// refuses every ejection, a success-rate detector that never runs, a
// detector that only logs). It is arithmetic over engine's rules, no I/O.
package lint

import (
	"fmt"
	"math"
	"strings"

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
	// Clients is how many client proxies share RPS (a mesh's pods), each
	// with its own detector counting only its own requests; 0 and 1: one.
	Clients int
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

// enforcement says what an enforcing_* percentage does to a detection:
// SnapshotImpl::featureEnabled returns false at 0 and true at 100 without a
// draw, otherwise it ejects on rng() % 100 < p (§4.1).
func enforcement(p uint32) string {
	switch {
	case p == 0:
		return "detection-only, enforcing 0%"
	case p >= 100:
		return "enforced 100%"
	}
	return fmt.Sprintf("enforced on %d%% of detections", p)
}

// consecutiveEjects reports whether a consecutive detector can ever eject:
// a threshold of 0 never fires, because putHttpResponseCode and
// localOriginFailure compare the streak with == after counting the failure.
func consecutiveEjects(threshold, enforcing uint32) bool {
	return enforcing > 0 && threshold > 0
}

// listJoin writes "a", "a and b", "a, b and c".
func listJoin(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// withDefault is enforcement(p) naming Envoy's default for the field.
func withDefault(p, def uint32) string {
	if p == def {
		return enforcement(p) + ", Envoy's default"
	}
	return enforcement(p) + "; Envoy's default is " + enforcement(def)
}

func secs(ms int64) string { return fmt.Sprintf("%gs", float64(ms)/1000) }

// Check returns the findings, topic by topic: the cap, panic, the
// consecutive detectors, success rate, failure percentage, split mode,
// ejection time.
func Check(cfg engine.Config, c Cluster) []Finding {
	r := newReview(cfg, c)
	r.ejectionCap()
	r.panicMode()
	r.anyEjector()
	r.consecutive5xx()
	r.consecutiveGateway()
	r.consecutiveOverlap()
	r.successRate()
	r.failurePercentage()
	r.splitMode()
	r.doubleEjection()
	r.ejectionTime()
	return r.out
}

// review is one Check in progress: the config, the cluster, what follows
// from them (who can eject, which gates open), and the findings so far.
type review struct {
	cfg       engine.Config
	c         Cluster
	out       []Finding
	n         int
	intervalS float64
	split     bool
	// Requests per host per interval, the unit of both volume gates, as
	// one client's detector counts them (RPS shared evenly by the
	// clients); the gates are judged only when the rate is known.
	volKnown bool
	vol      float64
	clients  int
	admitted int
	// Who can eject at all, by detector.
	c5xxEjects, gwEjects, srEjects, fpEjects  bool
	localEjects, localSREjects, localFPEjects bool
	// Whether the rate detectors can run on this cluster; srRuns is
	// settled by successRate.
	fpRuns, srRuns bool
}

func newReview(cfg engine.Config, c Cluster) *review {
	r := &review{cfg: cfg, c: c, n: c.Hosts, intervalS: float64(cfg.IntervalMs) / 1000, split: cfg.SplitExternalLocalOriginErrors}
	r.volKnown = c.RPS > 0 && r.n > 0
	r.clients = max(1, c.Clients)
	if r.volKnown {
		// In a mesh every proxy's detector sees only its own requests
		// (each Envoy builds its own DetectorImpl for the cluster).
		r.vol = c.RPS / float64(r.clients) / float64(r.n) * r.intervalS
	}
	r.admitted = MaxAdmitted(cfg, r.n)
	r.c5xxEjects = consecutiveEjects(cfg.Consecutive5xx, cfg.EnforcingConsecutive5xx)
	r.gwEjects = consecutiveEjects(cfg.ConsecutiveGatewayFailure, cfg.EnforcingConsecutiveGatewayFailure)
	r.srEjects = cfg.EnforcingSuccessRate > 0
	r.fpEjects = cfg.EnforcingFailurePercentage > 0
	r.localEjects = r.split && consecutiveEjects(cfg.ConsecutiveLocalOriginFailure, cfg.EnforcingConsecutiveLocalOriginFailure)
	r.localSREjects = r.split && cfg.EnforcingLocalOriginSuccessRate > 0
	r.localFPEjects = r.split && cfg.EnforcingFailurePercentageLocalOrigin > 0
	// Failure percentage can run once enough hosts have its volume.
	r.fpRuns = r.n >= max(int(cfg.FailurePercentageMinimumHosts), 1) &&
		(!r.volKnown || r.vol >= float64(cfg.FailurePercentageRequestVolume))
	return r
}

func (r *review) add(s Severity, field, format string, args ...any) {
	r.out = append(r.out, Finding{s, field, fmt.Sprintf(format, args...)})
}

// ejectors lists the detectors whose settings let them eject; the rate
// detectors only if they can run here when withGates is set.
func (r *review) ejectors(withSR, withGates bool) []string {
	fpOK := !withGates || r.fpRuns
	var l []string
	for _, d := range []struct {
		name string
		on   bool
	}{
		{"consecutive_5xx", r.c5xxEjects}, {"consecutive_gateway_failure", r.gwEjects},
		{"success rate", r.srEjects && withSR}, {"failure percentage", r.fpEjects && fpOK},
		{"consecutive_local_origin_failure", r.localEjects}, {"local-origin success rate", r.localSREjects && withSR},
		{"local-origin failure percentage", r.localFPEjects && fpOK},
	} {
		if d.on {
			l = append(l, d.name)
		}
	}
	return l
}

// ejectionCap: how many hosts the cap admits at once.
func (r *review) ejectionCap() {
	cfg, n, admitted := r.cfg, r.n, r.admitted
	// The cap.
	first := engine.CapAdmits(0, n, cfg.MaxEjectionPercent, false)
	switch {
	case admitted == 0:
		r.add(Problem, "max_ejection_percent",
			"the cap refuses every ejection: 100·(0+1)/%d = %.1f%% > %d%%; detections only raise ejections_overflow. Raise it to at least %d or set always_eject_one_host.",
			n, first.Percent, min(cfg.MaxEjectionPercent, 100), int(math.Ceil(100.0/float64(n))))
	case !first.Allowed && cfg.AlwaysEjectOneHost:
		r.add(Info, "always_eject_one_host",
			"only always_eject_one_host lets an ejection through: 100·(0+1)/%d = %.1f%% > %d%%; exactly one host can be out at a time.",
			n, first.Percent, cfg.MaxEjectionPercent)
	default:
		r.add(Info, "max_ejection_percent", "the cap admits %d of %d hosts ejected at once (%d%%).", admitted, n, min(cfg.MaxEjectionPercent, 100))
	}

}

// panicMode: ejections past the panic threshold send traffic back to
// ejected hosts (§7.3; no panic while 140·healthy/N >= 100).
func (r *review) panicMode() {
	c, n, admitted := r.c, r.n, r.admitted
	switch {
	case c.PanicThreshold > 0 && n > 0:
		for k := 1; k <= admitted; k++ {
			healthy := n - k
			if 140*healthy/n >= 100 {
				continue
			}
			if 100*float64(healthy)/float64(n) < c.PanicThreshold {
				r.add(Warning, "max_ejection_percent",
					"ejecting %d of %d hosts puts the cluster in panic (%d healthy < %.0f%%): the load balancer then sends traffic to every host, ejected ones included.",
					k, n, healthy, c.PanicThreshold)
				break
			}
		}
	case n > 0 && admitted >= n:
		// Threshold 0 with nothing healthy: recalculatePerPriorityPanic gives
		// P0 all the load without panic, the healthy list is empty, the pick
		// returns no host and the router answers 503 "no healthy upstream"
		// (upstream_cx_none_healthy), reported to no detector (§7.3, §7.4,
		// §11.5). The hosts come back only as their ejections end.
		r.add(Warning, "healthy_panic_threshold",
			"panic is disabled (healthy_panic_threshold 0, what Istio writes unless min_health_percent is set) and the cap lets all %d hosts be ejected: with every host out clients get 503 \"no healthy upstream\" until the first ejection ends at a detector tick. Lower max_ejection_percent, or set a panic threshold so ejected hosts keep serving.",
			n)
	case admitted > 0:
		r.add(Info, "healthy_panic_threshold",
			"panic is disabled (healthy_panic_threshold 0): ejected hosts never get traffic back early; with the cap's %d ejections, the %d hosts left in service take all the traffic.",
			admitted, n-admitted)
	}

}

// anyEjector: a config where every detector is off or detection-only.
func (r *review) anyEjector() {
	if len(r.ejectors(true, false)) == 0 {
		r.add(Warning, "outlier_detection",
			"no detector can eject: every one is off or detection-only, so outlier detection counts detections (ejections_detected_*) and never takes a host out.")
	}
}

// consecutive5xx: the 5xx streak detector, and what still counts when it
// is off.
func (r *review) consecutive5xx() {
	cfg := r.cfg
	switch {
	case cfg.Consecutive5xx == 0:
		var still []string
		if cfg.ConsecutiveGatewayFailure > 0 {
			still = append(still, fmt.Sprintf("consecutive_gateway_failure (502/503/504 only, %s)", enforcement(cfg.EnforcingConsecutiveGatewayFailure)))
		}
		still = append(still,
			fmt.Sprintf("success rate (%s)", enforcement(cfg.EnforcingSuccessRate)),
			fmt.Sprintf("failure percentage (%s)", enforcement(cfg.EnforcingFailurePercentage)))
		tail := ""
		if !r.gwEjects && !r.srEjects && !r.fpEjects {
			tail = " None of them ejects, so no 5xx response ever takes a host out."
		}
		r.add(Info, "consecutive_5xx",
			"consecutive_5xx is off (threshold 0 never fires). 5xx responses still count toward %s.%s",
			listJoin(still), tail)
	case cfg.EnforcingConsecutive5xx == 0:
		r.add(Info, "enforcing_consecutive_5xx",
			"consecutive_5xx detects %d 5xx in a row but never ejects (enforcing_consecutive_5xx 0).", cfg.Consecutive5xx)
	case cfg.EnforcingConsecutive5xx < 100:
		r.add(Info, "enforcing_consecutive_5xx",
			"consecutive_5xx ejects on %d%% of its detections; the streak restarts after each detection, ejected or not (onConsecutiveErrorWorker).", cfg.EnforcingConsecutive5xx)
	}

}

// consecutiveGateway: every 502/503/504 is also a 5xx, so a gateway streak
// is a 5xx streak too (putHttpResponseCode).
func (r *review) consecutiveGateway() {
	cfg := r.cfg
	switch {
	case cfg.ConsecutiveGatewayFailure == 0:
		r.add(Info, "consecutive_gateway_failure", "consecutive_gateway_failure is off (threshold 0 never fires).")
	case cfg.EnforcingConsecutiveGatewayFailure == 0:
		tail := fmt.Sprintf("they are 5xx too, so %d in a row eject through consecutive_5xx (%s).", cfg.Consecutive5xx, enforcement(cfg.EnforcingConsecutive5xx))
		if !r.c5xxEjects {
			why := "off"
			if cfg.Consecutive5xx > 0 {
				why = "detection-only"
			}
			tail = fmt.Sprintf("consecutive_5xx does not eject either (%s), so no streak ejects.", why)
		}
		r.add(Info, "enforcing_consecutive_gateway_failure",
			"consecutive_gateway_failure detects %d 502/503/504 in a row but never ejects (enforcing 0%%, Envoy's default); %s",
			cfg.ConsecutiveGatewayFailure, tail)
	case cfg.EnforcingConsecutiveGatewayFailure < 100:
		r.add(Info, "enforcing_consecutive_gateway_failure",
			"consecutive_gateway_failure ejects on %d%% of its detections.", cfg.EnforcingConsecutiveGatewayFailure)
	}

}

// consecutiveOverlap: the two streak detectors both enforced, which is how
// Istio's DestinationRule fields reach Envoy. applyOutlierDetection
// (istio/istio pilot/pkg/networking/core/cluster_traffic_policy.go) writes
// consecutive_gateway_failure and enforcing_consecutive_gateway_failure 100
// when consecutiveGatewayErrors is set, consecutive_5xx and
// enforcing_consecutive_5xx 100 only when consecutive5xxErrors is set (0
// for 0): a rule that sets only the first leaves consecutive_5xx at Envoy's
// defaults, 5 and enforced. DetectorHostMonitorImpl::putHttpResponseCode
// (outlier_detection_impl.cc) counts a 502/503/504 in both streaks, and any
// other 5xx in the 5xx streak while it resets the gateway streak; a success
// resets both. So the 5xx streak is never shorter than the gateway streak,
// and at equal thresholds the gateway event is posted first
// (notifyMainThreadConsecutiveError) and the 5xx one finds the host ejected
// (onConsecutiveErrorWorker returns on FAILED_OUTLIER_CHECK).
func (r *review) consecutiveOverlap() {
	cfg := r.cfg
	if !r.gwEjects || !r.c5xxEjects {
		return
	}
	gw, c5 := cfg.ConsecutiveGatewayFailure, cfg.Consecutive5xx
	def := engine.DefaultConfig()
	switch {
	case gw >= c5 && cfg.EnforcingConsecutive5xx >= 100:
		same := fmt.Sprintf("it reaches %d first", c5)
		if gw == c5 {
			same = fmt.Sprintf("both reach %d on the same response, where the gateway detection is posted first and takes the ejection: the same host, at the same moment", c5)
		}
		r.add(Warning, "consecutive_gateway_failure",
			"consecutive_gateway_failure (%d) is not below consecutive_5xx (%d, enforced 100%%), so it never ejects a host that consecutive_5xx would not eject first: every 502/503/504 is a 5xx too, and a 500 breaks the gateway streak but not the 5xx one, so the 5xx streak is always at least as long and %s (only a consecutive_5xx detection the cap refused restarts that streak alone). In an Istio DestinationRule this is consecutiveGatewayErrors ≥ consecutive5xxErrors (istiod writes them as consecutive_gateway_failure and consecutive_5xx, both enforcing 100). Set it below %d to eject on gateway errors sooner than on other 5xx, or consecutive_5xx to 0 (consecutive5xxErrors: 0) to eject on gateway errors only.",
			gw, c5, same, c5)
	case gw < c5 && c5 == def.Consecutive5xx && cfg.EnforcingConsecutive5xx == def.EnforcingConsecutive5xx:
		r.add(Warning, "consecutive_5xx",
			"consecutive_gateway_failure ejects after %d 502/503/504 in a row, and consecutive_5xx is still on at Envoy's defaults (5 in a row, enforcing_consecutive_5xx 100): five 5xx of any kind, plain 500s included, eject too. It is what a DestinationRule gets when it sets consecutiveGatewayErrors and leaves out consecutive5xxErrors: istiod writes consecutive_gateway_failure: %d and enforcing_consecutive_gateway_failure: 100, and nothing for consecutive_5xx, which keeps Envoy's defaults (as consecutive5xxErrors: 5 would). To eject on gateway errors only, set consecutive5xxErrors: 0 (istiod then writes consecutive_5xx: 0 and enforcing_consecutive_5xx: 0), or consecutive_5xx: 0 in Envoy.",
			gw, gw)
	case gw < c5:
		r.add(Info, "consecutive_5xx",
			"both streak detectors eject: %d 502/503/504 in a row (consecutive_gateway_failure), or %d 5xx of any kind in a row, 500s included (consecutive_5xx, %s).",
			gw, c5, enforcement(cfg.EnforcingConsecutive5xx))
	}
}

// successRate: its enforcement and its gates, which are problems only when
// a success-rate detector (external, or local-origin in split mode) is
// enforced. Settles r.srRuns.
func (r *review) successRate() {
	cfg, n, vol, intervalS := r.cfg, r.n, r.vol, r.intervalS
	srEnforced := r.srEjects || r.localSREjects
	gateSev, verb := Problem, "single out"
	if !srEnforced {
		gateSev, verb = Info, "flag"
	}
	// Istio's applyOutlierDetection (istio/istio pilot/pkg/networking/core/
	// cluster_traffic_policy.go) writes enforcing_success_rate 0 for every
	// DestinationRule, and enforcing_local_origin_success_rate 0 in split
	// mode.
	switch {
	case cfg.EnforcingSuccessRate == 0:
		r.add(Info, "enforcing_success_rate",
			"success rate is detection-only (enforcing_success_rate 0, which Istio writes for every DestinationRule): its outliers are counted (ejections_detected_success_rate) but never ejected.")
	case cfg.EnforcingSuccessRate < 100:
		r.add(Info, "enforcing_success_rate", "success rate ejects on %d%% of its detections.", cfg.EnforcingSuccessRate)
	}
	r.srRuns = n >= int(cfg.SuccessRateMinimumHosts)
	if !r.srRuns {
		tail := " (it would only detect anyway)."
		if srEnforced {
			if others := r.ejectors(false, true); len(others) > 0 {
				tail = "; ejections can come only from " + listJoin(others) + "."
			} else {
				tail = "; no other detector ejects."
			}
		}
		r.add(gateSev, "success_rate_minimum_hosts",
			"success rate never runs: the cluster has %d hosts and it needs %d with enough volume%s",
			n, cfg.SuccessRateMinimumHosts, tail)
	} else {
		need := float64(cfg.SuccessRateRequestVolume) / intervalS
		switch {
		case r.volKnown && vol < float64(cfg.SuccessRateRequestVolume):
			r.srRuns = false
			if r.clients > 1 {
				r.add(gateSev, "success_rate_request_volume",
					"success rate never runs in any of the %d clients: each client's detector counts only its own requests, and %g req/s ÷ %d clients ÷ %d hosts × %gs is about %.1f requests per host per interval, %d needed (%.1f req/s per host from each client).",
					r.clients, r.c.RPS, r.clients, n, intervalS, vol, cfg.SuccessRateRequestVolume, need)
				break
			}
			r.add(gateSev, "success_rate_request_volume",
				"success rate never runs: each host gets about %.1f requests per %gs interval, %d needed (%.1f req/s per host).",
				vol, intervalS, cfg.SuccessRateRequestVolume, need)
		case r.volKnown:
			r.add(Info, "success_rate_request_volume", "each host gets about %.0f requests per interval; success rate needs %d.", vol, cfg.SuccessRateRequestVolume)
		default:
			r.add(Info, "success_rate_request_volume", "success rate needs %.1f req/s per host (%d requests per %gs interval).", need, cfg.SuccessRateRequestVolume, intervalS)
		}
		k := MaxSuccessRateOutliers(cfg, n)
		if k == 0 {
			r.srRuns = false
			r.add(gateSev, "success_rate_stdev_factor",
				"with %d hosts and k = %.2f no host can ever fall below mean − k·σ: one outlier needs more than %.2f valid hosts.",
				n, cfg.StdevFactor(), 1+cfg.StdevFactor()*cfg.StdevFactor())
		} else {
			r.add(Info, "success_rate_stdev_factor",
				"success rate can %s at most %d equally bad host(s) at once among %d (k bad hosts need more than %.2f·k valid hosts); more mask each other.",
				verb, k, n, 1+cfg.StdevFactor()*cfg.StdevFactor())
		}
	}

}

// failurePercentage: its own gates, judged when it is enforced.
func (r *review) failurePercentage() {
	cfg, n, vol, intervalS := r.cfg, r.n, r.vol, r.intervalS
	if !r.fpEjects {
		r.add(Info, "enforcing_failure_percentage", "failure percentage is detection-only (enforcing_failure_percentage 0, Envoy's default).")
	}
	if r.fpEjects || r.localFPEjects {
		switch {
		case n < int(cfg.FailurePercentageMinimumHosts):
			r.add(Problem, "failure_percentage_minimum_hosts",
				"failure percentage never runs: the cluster has %d hosts and it needs %d with enough volume.", n, cfg.FailurePercentageMinimumHosts)
		case r.volKnown && vol < float64(cfg.FailurePercentageRequestVolume) && r.clients > 1:
			r.add(Problem, "failure_percentage_request_volume",
				"failure percentage never runs in any of the %d clients: each client's detector counts only its own requests, and %g req/s ÷ %d clients ÷ %d hosts × %gs is about %.1f requests per host per interval, %d needed.",
				r.clients, r.c.RPS, r.clients, n, intervalS, vol, cfg.FailurePercentageRequestVolume)
		case r.volKnown && vol < float64(cfg.FailurePercentageRequestVolume):
			r.add(Problem, "failure_percentage_request_volume",
				"failure percentage never runs: each host gets about %.1f requests per %gs interval, %d needed.", vol, intervalS, cfg.FailurePercentageRequestVolume)
		default:
			r.add(Info, "failure_percentage_threshold",
				"failure percentage (%s) ejects a host that fails at least %d%% of at least %d requests in one interval, when at least %d hosts have that volume.",
				enforcement(max(cfg.EnforcingFailurePercentage, cfg.EnforcingFailurePercentageLocalOrigin)),
				cfg.FailurePercentageThreshold, cfg.FailurePercentageRequestVolume, max(cfg.FailurePercentageMinimumHosts, 1))
		}
	}

}

// splitMode: putResultWithLocalExternalSplit sends connect failures,
// resets and timeouts to the local-origin counters only (§3.3, §3.4).
func (r *review) splitMode() {
	cfg := r.cfg
	if r.split {
		r.add(Info, "split_external_local_origin_errors",
			"split mode: connect failures, resets and timeouts are local-origin errors; they no longer count toward consecutive_5xx, consecutive_gateway_failure, success rate or failure percentage, only toward the local-origin detectors. HTTP responses, 502/503/504 included, still feed the others.")
		switch {
		case cfg.ConsecutiveLocalOriginFailure == 0:
			r.add(Info, "consecutive_local_origin_failure", "consecutive_local_origin_failure is off (threshold 0 never fires).")
		default:
			what := "eject a host"
			if cfg.EnforcingConsecutiveLocalOriginFailure == 0 {
				what = "are detected but never ejected"
			}
			// The router reports LocalOriginConnectSuccess when a request
			// gets a stream (onPoolReady), which resets the streak (§3.4).
			r.add(Info, "consecutive_local_origin_failure",
				"%d local-origin failures in a row %s (%s). With HTTP every request that gets a stream first records a local-origin success, which restarts the streak: failed connects build it, a host that accepts connections and then times out or resets rarely does.",
				cfg.ConsecutiveLocalOriginFailure, what, withDefault(cfg.EnforcingConsecutiveLocalOriginFailure, 100))
		}
		istio := ""
		if cfg.EnforcingLocalOriginSuccessRate == 0 {
			istio = "; Istio writes 0 here in split mode"
		}
		r.add(Info, "enforcing_local_origin_success_rate",
			"the local-origin success rate runs too, on those connection-level results, with the same success_rate_* gates (%s%s).",
			withDefault(cfg.EnforcingLocalOriginSuccessRate, 100), istio)
		if cfg.EnforcingFailurePercentageLocalOrigin == 0 {
			r.add(Info, "enforcing_failure_percentage_local_origin", "local-origin failure percentage is detection-only (enforcing 0%%, Envoy's default).")
		}
	} else {
		def := engine.DefaultConfig()
		if cfg.ConsecutiveLocalOriginFailure != def.ConsecutiveLocalOriginFailure ||
			cfg.EnforcingConsecutiveLocalOriginFailure != def.EnforcingConsecutiveLocalOriginFailure ||
			cfg.EnforcingLocalOriginSuccessRate != def.EnforcingLocalOriginSuccessRate ||
			cfg.EnforcingFailurePercentageLocalOrigin != def.EnforcingFailurePercentageLocalOrigin {
			r.add(Info, "split_external_local_origin_errors",
				"the local-origin fields are ignored: split_external_local_origin_errors is false, so connect failures and timeouts are counted as 503/504 by consecutive_5xx, consecutive_gateway_failure, success rate and failure percentage.")
		}
	}

}

// doubleEjection: one host ejected twice in one tick (§5.2):
// processSuccessRateEjections lists the failure-percentage candidates
// before success rate ejects, and ejectHost does not check whether the host
// is already out. It takes both detectors enforced and able to run, and
// room under the cap for a second ejection while the first is active.
func (r *review) doubleEjection() {
	cfg, n := r.cfg, r.n
	if r.srRuns && r.fpRuns && r.admitted >= 2 {
		where := "here"
		if !r.volKnown {
			where = fmt.Sprintf("on %d hosts given enough traffic", n)
		}
		for _, p := range []struct {
			on          bool
			field, kind string
		}{
			{r.srEjects && r.fpEjects, "enforcing_failure_percentage", ""},
			{r.localSREjects && r.localFPEjects, "enforcing_failure_percentage_local_origin", "local-origin "},
		} {
			if p.on {
				r.add(Info, p.field,
					"%[1]ssuccess rate and %[1]sfailure percentage are both enforced and both can run %[3]s, so the code lets both flag the same host in one tick (processSuccessRateEjections lists failure-percentage candidates before success rate ejects, and ejectHost does not check the host is already out). A host failing at least %[2]d%% that no consecutive detector took out first would then be ejected twice, and in release builds ejections_active stays one too high for the cluster's life.",
					p.kind, cfg.FailurePercentageThreshold, where)
			}
		}
	}

}

// ejectionTime: ejectHost raises the host's multiplier by one per
// enforced ejection while multiplier·base < max + base, and the ejection
// lasts min(multiplier·base, max) + jitter (checkHostForUneject).
// DetectorImpl::onIntervalTimer lowers it by one at every tick for each
// host not ejected whose last uneject is at least one interval old: time
// back in service decays it, whatever the host does (§6.2).
func (r *review) ejectionTime() {
	cfg, n, intervalS, admitted := r.cfg, r.n, r.intervalS, r.admitted
	if base, maxT := cfg.BaseEjectionTimeMs, cfg.MaxEjectionTimeMs; base > 0 {
		sat := uint32(0)
		for int64(sat)*base < maxT+base {
			sat++
		}
		var steps []string
		for m := int64(1); ; m++ {
			steps = append(steps, secs(min(m*base, maxT)))
			if m*base >= maxT {
				break
			}
		}
		var growth string
		switch {
		case len(steps) == 1 && maxT == base:
			growth = fmt.Sprintf("every ejection lasts %s: max_ejection_time equals base_ejection_time, so repeats do not grow (the multiplier still counts up to %d)", secs(base), sat)
		case len(steps) == 1:
			growth = fmt.Sprintf("every ejection lasts %s, the max_ejection_time cap", secs(maxT))
		default:
			if len(steps) > 4 {
				steps = []string{steps[0], steps[1], steps[2], "…", steps[len(steps)-1]}
			}
			growth = fmt.Sprintf("each enforced ejection raises the host's multiplier by one and lasts min(multiplier × %s, %s): %s as it rises (the multiplier saturates at %d)",
				secs(base), secs(maxT), strings.Join(steps, ", "), sat)
		}
		r.add(Info, "max_ejection_time",
			"%s. The multiplier falls by one at every detector tick (%gs) while the host is back in service, from one full interval after its uneject, whatever the host does meanwhile: from %d it is back at 0 about %gs after the uneject. Unejection happens only at those ticks (or on a passing active health check).",
			growth, intervalS, sat, float64(sat)*intervalS)
	}
	if cfg.MaxEjectionTimeJitterMs > 0 {
		r.add(Info, "max_ejection_time_jitter", "up to %gs of jitter is added after the max_ejection_time cap.", float64(cfg.MaxEjectionTimeJitterMs)/1000)
	}
	if n < 5 && admitted > 0 {
		r.add(Warning, "max_ejection_percent", "with %d hosts one ejection removes %.0f%% of capacity; consider leaving outlier detection off for very small clusters.", n, 100/float64(n))
	}
}
