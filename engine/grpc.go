package engine

import (
	"fmt"
	"math"
	"strings"
)

// Dialect says whose outlier detector a Detector runs over the same
// config.cluster.v3.OutlierDetection fields.
type Dialect uint8

const (
	// DialectEnvoy is Envoy's detector (outlier_detection_impl.cc), the
	// rest of this package.
	DialectEnvoy Dialect = iota
	// DialectGRPC is gRFC A50 as grpc-go implements it: the balancer
	// outlier_detection_experimental (internal/xds/balancer/outlierdetection/
	// balancer.go), fed by grpc-go's xDS translation of the same proto
	// (xdsresource/unmarshal_cds.go, outlierConfigFromCluster). Its rules are
	// the functions of this file; each names the grpc-go function it follows.
	DialectGRPC
)

var dialectNames = [...]string{"envoy", "grpc"}

func (d Dialect) String() string {
	if int(d) < len(dialectNames) {
		return dialectNames[d]
	}
	return "unknown"
}

// DialectNames lists the dialects by name, the default first.
func DialectNames() []string { return append([]string(nil), dialectNames[:]...) }

// ParseDialect reads "envoy" or "grpc".
func ParseDialect(s string) (Dialect, error) {
	for i, n := range dialectNames {
		if n == s {
			return Dialect(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not one of %s", s, strings.Join(dialectNames[:], ", "))
}

// GRPCClock is the clock the gRPC dialect's sweeps run on.
type GRPCClock uint8

const (
	// GRPCRealClock (the default) is grpc-go in a real process: a sweep
	// starts a little after the interval, by the time the sweeps before it
	// took, so a host whose ejection time is a whole number of intervals
	// is back at the sweep that many intervals on, as under Envoy (grpcDue).
	GRPCRealClock GRPCClock = iota
	// GRPCExactClock is grpc-go on a fake clock (testing/synctest, or its
	// unit tests that call intervalTimerAlgorithm by hand): sweeps land
	// exactly on multiples of the interval and take no time, so the strict
	// After keeps a host whose deadline falls on a sweep one interval
	// longer. The recorded grpc-go traces (shared/conformance/grpc) were
	// taken on it; replay uses it unless a trace says "clock": "real".
	GRPCExactClock
)

var grpcClockNames = [...]string{"real", "exact"}

func (c GRPCClock) String() string {
	if int(c) < len(grpcClockNames) {
		return grpcClockNames[c]
	}
	return "unknown"
}

// ParseGRPCClock reads "real" or "exact".
func ParseGRPCClock(s string) (GRPCClock, error) {
	for i, n := range grpcClockNames {
		if n == s {
			return GRPCClock(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not one of %s", s, strings.Join(grpcClockNames[:], ", "))
}

// SetGRPCClock chooses the clock of the gRPC dialect's sweeps (the Envoy
// dialect ignores it). Call it before the first Tick.
func (d *Detector) SetGRPCClock(c GRPCClock) { d.grpcClock = c }

// GRPCClock is the clock the gRPC dialect's sweeps run on.
func (d *Detector) GRPCClock() GRPCClock { return d.grpcClock }

// NewDialectDetector creates a detector that applies the given dialect's
// rules to cfg. NewDetector is NewDialectDetector(DialectEnvoy, ...).
func NewDialectDetector(dialect Dialect, cfg Config, clock Clock, rng Random) *Detector {
	d := NewDetector(cfg, clock, rng)
	d.dialect = dialect
	return d
}

// Dialect is the detector's dialect.
func (d *Detector) Dialect() Dialect { return d.dialect }

func (d *Detector) grpc() bool { return d.dialect == DialectGRPC }

// ---- which algorithms run -------------------------------------------------

// GRPCSuccessRate reports whether grpc-go runs success-rate ejection for
// this config. outlierConfigFromCluster builds success_rate_ejection unless
// enforcing_success_rate is 0 (A50: "if the enforcing_success_rate field is
// set to 0, the config success_rate_ejection field will be null"). Config
// holds Envoy's default 100 for an unset field, so unset means on.
func (c Config) GRPCSuccessRate() bool { return c.EnforcingSuccessRate != 0 }

// GRPCFailurePercentage reports whether grpc-go runs failure-percentage
// ejection: only when enforcing_failure_percentage is set and not 0. Envoy's
// default for an unset field is 0, so "unset" and "0" agree in Config.
func (c Config) GRPCFailurePercentage() bool { return c.EnforcingFailurePercentage != 0 }

// GRPCIgnoredFields names the fields of cfg that would change what Envoy
// does but that grpc-go's xDS translation drops (A50 "xDS Integration":
// no consecutive-error detectors, no local-origin split, no jitter, no
// always_eject_one_host, no active-health-check uneject). Only fields that
// are in effect under Envoy are listed, so the lab can say once what the
// gRPC dialect leaves out of this particular config.
func (c Config) GRPCIgnoredFields() []string {
	var out []string
	add := func(on bool, name string) {
		if on {
			out = append(out, name)
		}
	}
	add(c.EnforcingConsecutive5xx > 0 && c.Consecutive5xx > 0, "consecutive_5xx")
	add(c.EnforcingConsecutiveGatewayFailure > 0 && c.ConsecutiveGatewayFailure > 0, "consecutive_gateway_failure")
	add(c.SplitExternalLocalOriginErrors, "split_external_local_origin_errors")
	add(c.MaxEjectionTimeJitterMs > 0, "max_ejection_time_jitter")
	add(c.AlwaysEjectOneHost, "always_eject_one_host")
	add(c.DetectDegradedHosts, "detect_degraded_hosts")
	return out
}

// ---- recording RPC outcomes ----------------------------------------------

// putRPC is incrementCounter: the wrapped picker's done callback adds a
// success when the RPC ended without an error and a failure otherwise, so
// every non-OK status counts (application errors included). There are no
// consecutive counters and no local-origin bucket.
func (m *HostMonitor) putRPC(ok bool) {
	if m.removed {
		return
	}
	m.ext.current.total++
	if ok {
		m.ext.current.success++
	}
}

// putGRPCResult maps the router's reports to RPC outcomes. An HTTP status
// other than 200 is a non-OK gRPC status (gRPC's HTTP-to-status mapping);
// a timeout or refused connection ends the RPC with DEADLINE_EXCEEDED or
// UNAVAILABLE. LocalOriginConnectSuccess is not the end of an RPC.
func (m *HostMonitor) putGRPCResult(r Result, code int) {
	switch r {
	case LocalOriginConnectSuccess:
	case ExtOriginRequestSuccess, ExtOriginRequestDegraded, LocalOriginConnectSuccessFinal:
		m.putRPC(code == 0 || code == 200)
	default:
		m.putRPC(false)
	}
}

// ---- the interval timer ----------------------------------------------------

// grpcTick is intervalTimerAlgorithm: swap every call counter, run success
// rate if configured, then failure percentage if configured, then one pass
// that decays the multiplier of hosts that are not ejected and unejects the
// hosts whose time is up. Detection comes before unejection, the reverse of
// Envoy's order, so a host due back this tick still counts against the cap.
// A config with neither algorithm is A50's no-op config: the timer never
// runs, so nothing is counted, detected or decayed.
func (d *Detector) grpcTick() *TickReport {
	now := d.clock.NowMs()
	// timerStartTime: the stamp of every ejection of this sweep.
	nowNs := d.nowNs()
	start := len(d.events)
	cfg := &d.cfg
	r := &d.report
	r.AtMs = now
	r.External = RatePass{Origin: External, Hosts: len(d.hosts),
		SRGate: GateNotConfigured, FPGate: GateNotConfigured,
		SRMinimumHosts: cfg.SuccessRateMinimumHosts, SRRequestVolume: cfg.SuccessRateRequestVolume,
		FPMinimumHosts: cfg.FailurePercentageMinimumHosts, FPRequestVolume: cfg.FailurePercentageRequestVolume,
		FPThreshold: cfg.FailurePercentageThreshold, Mean: -1, Threshold: -1}
	// gRPC has no local-origin statistics.
	r.Local = RatePass{Origin: Local, Hosts: len(d.hosts), SRGate: GateNotConfigured, FPGate: GateNotConfigured, Mean: -1, Threshold: -1}
	if !cfg.GRPCSuccessRate() && !cfg.GRPCFailurePercentage() {
		return d.finishReport(start)
	}
	for _, m := range d.hosts {
		m.ext.swap()
		m.extSR = -1
		if b := m.ext.backup; b.total > 0 {
			m.extSR = rate(b)
		}
	}
	d.sweepNs = nowNs
	if cfg.GRPCSuccessRate() {
		d.successRateAlgorithm(now, &r.External)
	}
	if cfg.GRPCFailurePercentage() {
		d.failurePercentageAlgorithm(now, &r.External)
	}
	for _, m := range d.hosts {
		if !m.ejected {
			if m.backoff > 0 {
				m.backoff--
			}
			continue
		}
		if d.grpcDue(nowNs-m.ejectedAtNs, d.grpcEjectionDurationNs(m.backoff)) {
			d.unejectHost(m, now, UnejectTimeElapsed)
		}
	}
	return d.finishReport(start)
}

// grpcDue is intervalTimerAlgorithm's now().After(latestEjectionTimestamp +
// duration), given the exact time between the ejecting sweep's start and
// this sweep's: time.Time.After is strict, where Envoy's
// checkHostForUneject tests duration <= elapsed.
//
// On GRPCExactClock that strict test is all there is: a deadline that falls
// on a sweep keeps the host one more interval. On GRPCRealClock each sweep
// starts later than the exact one by the time every sweep before it took
// (the timer is re-armed with afterFunc(interval) at the sweep's end), and
// the check reads now() after this sweep's start, while the timestamp is
// the ejecting sweep's start: the real elapsed time is the exact one plus a
// positive sliver. The dialect takes that sliver as smaller than any
// difference of durations it runs with, so elapsed >= duration.
func (d *Detector) grpcDue(elapsedNs, durationNs int64) bool {
	if d.grpcClock == GRPCExactClock {
		return elapsedNs > durationNs
	}
	return elapsedNs >= durationNs
}

// grpcEjectionDurationNs is intervalTimerAlgorithm's
// min(base·multiplier, max(base, max_ejection_time)) in time.Duration's
// nanoseconds: the multiplier has no cap, a max_ejection_time below base
// means base, and, as in Go, the product wraps past 2⁶³ ns (292 years),
// which makes it negative and the host due at once (G5).
func (d *Detector) grpcEjectionDurationNs(mult uint32) int64 {
	base := d.cfg.GRPCBaseEjectionTimeNs()
	return min(base*int64(mult), max(base, d.cfg.GRPCMaxEjectionTimeNs()))
}

// grpcEjectionDuration is grpcEjectionDurationNs in whole milliseconds for
// display: rounded up, so that lastEjection + it is the first millisecond
// at which the host is due on a real clock (on the exact clock, one more),
// and never below 0.
func (d *Detector) grpcEjectionDuration(mult uint32) int64 {
	ns := d.grpcEjectionDurationNs(mult)
	if ns <= 0 {
		return 0
	}
	ms := (ns-1)/1_000_000 + 1
	if d.grpcClock == GRPCExactClock && ns%1_000_000 == 0 {
		ms++
	}
	return ms
}

// nowNs is the clock in nanoseconds, from a NanoClock if it is one.
func (d *Detector) nowNs() int64 {
	if c, ok := d.clock.(NanoClock); ok {
		return c.NowNs()
	}
	return d.clock.NowMs() * 1_000_000
}

// grpcSample is an endpoint with its success fraction (0–1, not Envoy's
// percentage) for the last interval.
func grpcSample(m *HostMonitor) rateSample {
	b := m.ext.backup
	return rateSample{m, float64(b.success) / float64(b.total)}
}

// endpointsWithAtLeastRequestVolume, in host order. Unlike Envoy, ejected
// endpoints are not skipped (grpc-go relies on their getting no traffic),
// and with a request volume of 0 an endpoint without calls is a candidate
// whose fraction is 0/0 = NaN, which then ejects nobody.
func (d *Detector) endpointsWithAtLeastRequestVolume(volume uint32, dst []rateSample) []rateSample {
	dst = dst[:0]
	for _, m := range d.hosts {
		if m.ext.backup.total >= uint64(volume) {
			dst = append(dst, grpcSample(m))
		}
	}
	return dst
}

// meanAndStdDev is grpc-go's: the mean of the success fractions and their
// population standard deviation.
func meanAndStdDev(samples []rateSample) (mean, stddev float64) {
	var total float64
	for _, s := range samples {
		total += s.sr
	}
	mean = total / float64(len(samples))
	var sumOfSquares float64
	for _, s := range samples {
		dev := s.sr - mean
		sumOfSquares += dev * dev
	}
	return mean, math.Sqrt(sumOfSquares / float64(len(samples)))
}

// successRateAlgorithm: candidates are the endpoints with at least
// request_volume calls; with fewer than minimum_hosts nothing happens. An
// endpoint whose fraction is strictly below mean − stdev·factor/1000 is an
// outlier. Displayed rates are ×100 to match Envoy's units.
func (d *Detector) successRateAlgorithm(now int64, p *RatePass) {
	cfg := &d.cfg
	d.srHosts = d.endpointsWithAtLeastRequestVolume(cfg.SuccessRateRequestVolume, d.srHosts)
	p.SRHostsVolume = len(d.srHosts)
	if len(d.srHosts) < int(cfg.SuccessRateMinimumHosts) {
		p.SRGate = GateTooFewHostsWithVolume
		return
	}
	p.SRGate = GateRan
	mean, stddev := meanAndStdDev(d.srHosts)
	required := mean - stddev*(float64(cfg.SuccessRateStdevFactor)/1000)
	p.Mean, p.StdDev, p.Threshold = 100*mean, 100*stddev, 100*required
	for _, s := range d.srHosts {
		if s.sr < required {
			p.SROutliers++
			d.stats[StatEjectionsDetectedSuccessRate]++
			d.grpcDetected(s.m, SuccessRate, now, cfg.EnforcingSuccessRate, 100*s.sr, 100*mean, 100*required)
		}
	}
}

// failurePercentageAlgorithm: the same candidates for its own request
// volume and minimum hosts; an outlier fails strictly more than threshold
// percent (Envoy: ≥), computed as grpc-go does, failures/total·100. It does
// not skip an endpoint success rate just ejected (see grpcDetected).
func (d *Detector) failurePercentageAlgorithm(now int64, p *RatePass) {
	cfg := &d.cfg
	d.fpHost = d.endpointsWithAtLeastRequestVolume(cfg.FailurePercentageRequestVolume, d.fpHost)
	p.FPHostsVolume = len(d.fpHost)
	if len(d.fpHost) < int(cfg.FailurePercentageMinimumHosts) {
		p.FPGate = GateTooFewHostsWithVolume
		return
	}
	p.FPGate = GateRan
	for _, s := range d.fpHost {
		b := s.m.ext.backup
		failurePercentage := (float64(b.total-b.success) / float64(b.total)) * 100
		if failurePercentage > float64(cfg.FailurePercentageThreshold) {
			p.FPOutliers++
			d.stats[StatEjectionsDetectedFailurePercentage]++
			d.grpcDetected(s.m, FailurePercentage, now, cfg.EnforcingFailurePercentage, 100*s.sr, -1, -1)
		}
	}
}

// CapAdmitsGRPC is the cap test of successRateAlgorithm and
// failurePercentageAlgorithm: refuse when the share of endpoints ejected
// now, before this ejection, is at least max_ejection_percent
// (numEndpointsEjected/len·100 >= max). So 1 of 6 hosts is allowed at 10%,
// where Envoy's 100·(active+1)/hosts <= max refuses it.
func CapAdmitsGRPC(active uint64, hosts int, maxPercent uint32) CapCheck {
	c := CapCheck{Active: active, Hosts: hosts, MaxPercent: maxPercent, Dialect: DialectGRPC}
	c.Percent = float64(active) / float64(hosts) * 100
	c.Allowed = !(c.Percent >= float64(maxPercent))
	return c
}

// grpcDetected is what both algorithms do with an outlier: the cap, then a
// draw rand.Int32N(100) < enforcement_percentage (always drawn, even at 0
// or 100), then ejectEndpoint. A refusal is recorded by grpc-go only in the
// A91 metric ejections_unenforced, with reason max_ejection_overflow or
// enforcement_percentage; here it is an overflow or detect event.
func (d *Detector) grpcDetected(m *HostMonitor, t EjectionType, now int64, enforcing uint32, hostSR, mean, thr float64) {
	ev := Event{AtMs: now, Host: m.name, Detector: t, HostSuccessRate: hostSR, Mean: mean, Threshold: thr}
	ev.Cap = CapAdmitsGRPC(d.active, len(d.hosts), d.cfg.MaxEjectionPercent)
	if !ev.Cap.Allowed {
		d.stats[StatEjectionsOverflow]++
		ev.Kind = EventOverflow
		d.events = append(d.events, ev)
		return
	}
	ev.Enforcing = enforcing
	if d.rng.Uint64()%100 >= uint64(enforcing) {
		ev.Kind = EventDetect
		d.events = append(d.events, ev)
		return
	}
	d.ejectEndpoint(m, now, &ev)
}

// ejectEndpoint: numEndpointsEjected +1, the ejection timestamp is the
// tick's start, the multiplier +1. Like grpc-go it does not ask whether the
// endpoint is already ejected: when success rate and failure percentage
// both flag it in one tick (and the cap admits the second), it is ejected
// twice, the multiplier grows by 2 and numEndpointsEjected by 2, while the
// one unejection later gives back 1. The leaked slot then counts against
// max_ejection_percent for the rest of the run (doc.go, case G1).
func (d *Detector) ejectEndpoint(m *HostMonitor, now int64, ev *Event) {
	d.active++
	d.stats[StatEjectionsActive] = d.active
	d.stats[StatEjectionsEnforcedTotal]++
	d.stats[enforcedStat[ev.Detector]]++
	m.ejected = true
	m.numEjections++
	m.lastEjection = now
	m.ejectedAtNs = d.sweepNs // latestEjectionTimestamp = timerStartTime
	m.jitterMs = 0
	m.backoff++
	ev.Kind = EventEject
	ev.Backoff = m.backoff
	ev.NumEjections = m.numEjections
	ev.DurationMs = d.grpcEjectionDuration(m.backoff)
	d.events = append(d.events, *ev)
	if d.OnHostStateChange != nil {
		d.OnHostStateChange(m)
	}
}
