package engine

import "math"

// Clock gives the detector monotonic time in milliseconds. Envoy's detector
// reads its TimeSource; outlierlab injects it so runs are reproducible.
type Clock interface {
	NowMs() int64
}

// Random is the detector's source of randomness: the enforcement draws and
// the ejection jitter. *math/rand/v2.Rand satisfies it.
type Random interface {
	Uint64() uint64
}

// NanoClock is a Clock that also tells nanoseconds. The gRPC dialect reads
// it when the clock has it (grpc-go's time.Time is nanoseconds); any other
// Clock gives it NowMs whole.
type NanoClock interface {
	Clock
	NowNs() int64
}

// ManualClock is a Clock whose time is set by its owner (the replay harness,
// the simulator, tests). SubMsNs, the nanoseconds past Ms, is read only by
// NowNs; an owner that sets Ms without it sets it too (the simulator does,
// for gRPC sweeps whose interval has a sub-millisecond part).
type ManualClock struct {
	Ms      int64
	SubMsNs int64
}

func (c *ManualClock) NowMs() int64 { return c.Ms }

// NowNs is Ms·10⁶ + SubMsNs.
func (c *ManualClock) NowNs() int64 { return c.Ms*1_000_000 + c.SubMsNs }

// FixedRandom returns the same value for every draw, the way Envoy's unit
// tests pin their random generator.
type FixedRandom uint64

func (r FixedRandom) Uint64() uint64 { return uint64(r) }

// bucket is one SuccessRateAccumulatorBucket.
type bucket struct{ total, success uint64 }

// rateMonitor is Envoy's SuccessRateMonitor: a bucket being written and the
// bucket of the interval that just ended, read at the tick.
type rateMonitor struct{ current, backup bucket }

// swap mirrors updateCurrentWriter: the old backup is zeroed and becomes the
// new current, so backup holds exactly the last interval (a tumbling window).
func (r *rateMonitor) swap() {
	r.backup = r.current
	r.current = bucket{}
}

// HostMonitor is one host's DetectorHostMonitorImpl: its consecutive
// counters, success-rate buckets and ejection bookkeeping.
type HostMonitor struct {
	d       *Detector
	name    string
	removed bool

	c5xx, cGateway, cLocal uint32
	// peak5xx is the highest c5xx stood since the last tick, peakBackup
	// the interval's before it, read at the tick: a tumbling window like
	// the rate buckets' (swap). Envoy keeps no such number; the lab reads
	// it to draw a streak that rose and was reset between two ticks (a
	// dead host's five failures), which the counter after the tick hides.
	peak5xx, peakBackup uint32
	ext, local          rateMonitor
	extSR, localSR      float64

	ejected        bool
	numEjections   uint32
	lastEjection   int64
	ejectedAtNs    int64 // gRPC: latestEjectionTimestamp, in ns
	lastUnejection int64
	everUnejected  bool
	backoff        uint32
	jitterMs       int64

	degraded        bool
	numDegradations uint32
	lastDegraded    int64
	lastUndegraded  int64
	everUndegraded  bool
	degradeBackoff  uint32

	failedActiveHC bool
}

// Detector is Envoy's DetectorImpl for one cluster.
type Detector struct {
	cfg     Config
	clock   Clock
	rng     Random
	dialect Dialect // DialectGRPC switches to the rules of grpc.go
	// grpcClock: how the gRPC dialect's sweeps sit on the clock (grpc.go).
	grpcClock GRPCClock
	sweepNs   int64 // gRPC: timerStartTime of the sweep running now

	hosts  []*HostMonitor // insertion order: Envoy's map order is unspecified
	active uint64         // ejections_active as the cap sees it
	stats  Stats
	events []Event

	// OnHostStateChange is called whenever a host is ejected, unejected,
	// degraded or undegraded: Envoy's runChangedStateCallbacks, after which
	// the cluster recomputes its healthy hosts and load-balancer state.
	OnHostStateChange func(*HostMonitor)

	report          TickReport
	srHosts, fpHost []rateSample
}

type rateSample struct {
	m  *HostMonitor
	sr float64
}

// NewDetector creates a detector. The first tick is due at clock time +
// interval; the caller owns the timer and calls Tick.
func NewDetector(cfg Config, clock Clock, rng Random) *Detector {
	return &Detector{cfg: cfg, clock: clock, rng: rng}
}

// Config returns the configuration the detector runs with.
func (d *Detector) Config() Config { return d.cfg }

// AddHost adds a host with a fresh monitor. A host re-added under an old name
// is a new monitor: Envoy keys monitors by host object (§11 case 6).
func (d *Detector) AddHost(name string) *HostMonitor {
	m := &HostMonitor{d: d, name: name, extSR: -1, localSR: -1}
	d.hosts = append(d.hosts, m)
	return m
}

// RemoveHost removes a host. An ejected host gives back its ejections_active
// slot, and the cap's denominator shrinks with it.
func (d *Detector) RemoveHost(m *HostMonitor) {
	for i, h := range d.hosts {
		if h == m {
			d.hosts = append(d.hosts[:i], d.hosts[i+1:]...)
			// grpc-go's UpdateClientConnState drops a removed endpoint
			// without giving back its numEndpointsEjected slot.
			if m.ejected && !d.grpc() {
				d.active--
				d.stats[StatEjectionsActive] = d.active
			}
			m.removed = true
			return
		}
	}
}

// Hosts returns the monitors in iteration order. The slice is the
// detector's own; do not modify it.
func (d *Detector) Hosts() []*HostMonitor { return d.hosts }

// Host finds a monitor by name.
func (d *Detector) Host(name string) *HostMonitor {
	for _, h := range d.hosts {
		if h.name == name {
			return h
		}
	}
	return nil
}

// Stats returns a copy of every outlier_detection stat.
func (d *Detector) Stats() Stats { return d.stats }

// EjectionsActive is the ejections_active gauge.
func (d *Detector) EjectionsActive() uint64 { return d.active }

// Events returns the events recorded since the last DrainEvents. The slice
// is reused after DrainEvents.
func (d *Detector) Events() []Event { return d.events }

// DrainEvents appends the pending events to dst and forgets them.
func (d *Detector) DrainEvents(dst []Event) []Event {
	dst = append(dst, d.events...)
	d.events = d.events[:0]
	return dst
}

// ---- per-host accessors -------------------------------------------------

func (m *HostMonitor) Name() string { return m.name }

// Ejected reports Envoy's FAILED_OUTLIER_CHECK flag.
func (m *HostMonitor) Ejected() bool { return m.ejected }

// DegradedByOutlier reports the DEGRADED_OUTLIER_DETECTION flag (≥ 1.38).
func (m *HostMonitor) DegradedByOutlier() bool { return m.degraded }

func (m *HostMonitor) NumEjections() uint32 { return m.numEjections }

// Backoff is the ejection-time multiplier (ejectTimeBackoff).
func (m *HostMonitor) Backoff() uint32 { return m.backoff }

// Consecutive returns the consecutive 5xx, gateway and local-origin counters.
func (m *HostMonitor) Consecutive() (c5xx, gateway, local uint32) {
	return m.c5xx, m.cGateway, m.cLocal
}

// SuccessRate is the external-origin success rate the detector computed at
// the last tick, or -1 if the host lacked volume (Envoy's reported value).
func (m *HostMonitor) SuccessRate() float64 { return m.extSR }

// LocalSuccessRate is the local-origin counterpart of SuccessRate.
func (m *HostMonitor) LocalSuccessRate() float64 { return m.localSR }

// EjectionDurationMs is how long the current (or next) ejection lasts before
// the tick check lets it go: min(base·backoff, max) + jitter.
func (m *HostMonitor) EjectionDurationMs() int64 {
	return m.d.ejectionDuration(m.backoff, m.jitterMs)
}

// SetActiveHCFailed mirrors the FAILED_ACTIVE_HC flag, which the active
// health checker owns; the detector only reads it (§8).
func (m *HostMonitor) SetActiveHCFailed(failed bool) { m.failedActiveHC = failed }

// ---- recording results (§3) -----------------------------------------------

// PutHTTPResponseCode records an upstream response code on the
// external-origin path (putHttpResponseCode).
func (m *HostMonitor) PutHTTPResponseCode(code int) {
	if m.d.grpc() {
		m.putRPC(code == 200)
		return
	}
	if m.removed {
		return
	}
	d := m.d
	m.ext.current.total++
	if code >= 500 && code < 600 {
		if code >= 502 && code <= 504 {
			m.cGateway++
			// Gateway is posted before 5xx for the same response.
			if m.cGateway == d.cfg.ConsecutiveGatewayFailure {
				d.onConsecutive(m, ConsecutiveGatewayFailure)
			}
		} else {
			// A 500/501/505+ breaks the gateway streak.
			m.cGateway = 0
		}
		m.c5xx++
		m.peak5xx = max(m.peak5xx, m.c5xx)
		if m.c5xx == d.cfg.Consecutive5xx {
			d.onConsecutive(m, Consecutive5xx)
		}
		return
	}
	// Success is "not 5xx": 1xx–4xx and ≥ 600 included.
	m.ext.current.success++
	m.c5xx = 0
	m.cGateway = 0
}

// PutResult records a result without an HTTP code (putResult(result)).
func (m *HostMonitor) PutResult(r Result) { m.putResult(r, 0) }

// PutResultCode records a result with the code the router attached, e.g.
// LocalOriginTimeout with 504 or ExtOriginRequestFailed with the status.
func (m *HostMonitor) PutResultCode(r Result, code int) { m.putResult(r, code) }

func (m *HostMonitor) putResult(r Result, code int) {
	if m.d.grpc() {
		m.putGRPCResult(r, code)
		return
	}
	if m.removed {
		return
	}
	if m.d.cfg.SplitExternalLocalOriginErrors {
		m.putResultSplit(r, code)
	} else {
		m.putResultNoSplit(r, code)
	}
}

// putResultNoSplit is putResultNoLocalExternalSplit: everything becomes an
// HTTP code on the external path; the local bucket is never written.
func (m *HostMonitor) putResultNoSplit(r Result, code int) {
	if r == ExtOriginRequestDegraded {
		m.d.requestDegrade(m)
	}
	if code != 0 {
		m.PutHTTPResponseCode(code)
		return
	}
	switch r {
	case ExtOriginRequestSuccess, LocalOriginConnectSuccessFinal, ExtOriginRequestDegraded:
		m.PutHTTPResponseCode(200)
	case LocalOriginTimeout:
		m.PutHTTPResponseCode(504)
	case LocalOriginConnectFailed:
		m.PutHTTPResponseCode(503)
	case ExtOriginRequestFailed:
		// 500, not a gateway error: it resets the gateway streak (issue #12453).
		m.PutHTTPResponseCode(500)
	case LocalOriginConnectSuccess:
		// Invisible in non-split mode.
	}
}

// putResultSplit is putResultWithLocalExternalSplit, newest code (after
// PR #39440): ExtOriginRequestSuccess records the external result only.
func (m *HostMonitor) putResultSplit(r Result, code int) {
	switch r {
	case LocalOriginConnectSuccess, LocalOriginConnectSuccessFinal:
		m.local.current.total++
		m.local.current.success++
		m.cLocal = 0
	case LocalOriginTimeout, LocalOriginConnectFailed:
		// Any code passed with a local failure is ignored.
		m.local.current.total++
		m.cLocal++
		if m.cLocal == m.d.cfg.ConsecutiveLocalOriginFailure {
			m.d.onConsecutive(m, ConsecutiveLocalOriginFailure)
		}
	case ExtOriginRequestFailed:
		if code == 0 {
			code = 503 // split mode maps a code-less failure to 503, a gateway error
		}
		m.PutHTTPResponseCode(code)
	case ExtOriginRequestSuccess:
		if code == 0 {
			code = 200
		}
		m.PutHTTPResponseCode(code)
	case ExtOriginRequestDegraded:
		m.d.requestDegrade(m)
		if code == 0 {
			code = 200
		}
		m.PutHTTPResponseCode(code)
	}
}

// ---- consecutive detection (§3.5) ------------------------------------------

// onConsecutive is onConsecutiveErrorWorker. Envoy posts it to the main
// thread; its tests run posts at once, and so does outlierlab, so the
// ejection happens at the very result that reached the threshold.
func (d *Detector) onConsecutive(m *HostMonitor, t EjectionType) {
	if m.ejected {
		// Already ejected: no stat and no counter reset (§11 case 3); the
		// uneject clears the counter later.
		return
	}
	d.stats[detectedStat[t]]++
	d.ejectHost(m, t, d.clock.NowMs(), -1, 0, 0)
	// The counter is reset whatever ejectHost decided (§11 case 2).
	switch t {
	case Consecutive5xx:
		d.stats[StatEjectionsConsecutive5xx]++
		m.c5xx = 0
	case ConsecutiveGatewayFailure:
		m.cGateway = 0
	case ConsecutiveLocalOriginFailure:
		m.cLocal = 0
	}
}

// ---- ejectHost (§4) ----------------------------------------------------------

// CapAdmits is the ejection cap of ejectHost: the share of all hosts that
// would be ejected after this ejection, compared inclusively (Envoy ≥ 1.28),
// with always_eject_one_host letting the first ejection through (≥ 1.31).
func CapAdmits(active uint64, hosts int, maxPercent uint32, alwaysEjectOne bool) CapCheck {
	maxPct := min(maxPercent, 100)
	c := CapCheck{Active: active, Hosts: hosts, MaxPercent: maxPct}
	if hosts > 0 {
		c.Percent = 100.0 * float64(active+1) / float64(hosts)
	} else {
		c.Percent = math.Inf(1)
	}
	c.Allowed = c.Percent <= float64(maxPct)
	if !c.Allowed && alwaysEjectOne && active == 0 {
		c.Allowed = true
		c.ByAlwaysEjectOne = true
	}
	return c
}

// enforce is SnapshotImpl::featureEnabled: 0 and 100 draw nothing.
func (d *Detector) enforce(p uint32) bool {
	switch {
	case p == 0:
		return false
	case p >= 100:
		return true
	}
	return d.rng.Uint64()%100 < uint64(p)
}

func (d *Detector) ejectHost(m *HostMonitor, t EjectionType, now int64, hostSR, mean, thr float64) {
	ev := Event{AtMs: now, Host: m.name, Detector: t, HostSuccessRate: hostSR, Mean: mean, Threshold: thr}
	ev.Cap = CapAdmits(d.active, len(d.hosts), d.cfg.MaxEjectionPercent, d.cfg.AlwaysEjectOneHost)
	if !ev.Cap.Allowed {
		// Envoy logs nothing for an overflow and draws no random number.
		d.stats[StatEjectionsOverflow]++
		ev.Kind = EventOverflow
		d.events = append(d.events, ev)
		return
	}
	if t == Consecutive5xx || t == SuccessRate {
		// Deprecated ejections_total: only these two types, only past the cap.
		d.stats[StatEjectionsTotal]++
	}
	ev.Enforcing = d.cfg.enforcing(t)
	if !d.enforce(ev.Enforcing) {
		ev.Kind = EventDetect
		d.events = append(d.events, ev)
		return
	}
	// No "already ejected?" check here, as in Envoy: §5.2's double ejection
	// by success rate and failure percentage in one tick is reproduced.
	d.active++
	d.stats[StatEjectionsActive] = d.active
	d.stats[StatEjectionsEnforcedTotal]++
	d.stats[enforcedStat[t]]++
	m.ejected = true
	m.numEjections++
	m.lastEjection = now
	m.jitterMs = d.drawJitter()
	d.bumpBackoff(&m.backoff)
	ev.Kind = EventEject
	ev.Backoff = m.backoff
	ev.NumEjections = m.numEjections
	ev.JitterMs = m.jitterMs
	ev.DurationMs = d.ejectionDuration(m.backoff, m.jitterMs)
	d.events = append(d.events, ev)
	if d.OnHostStateChange != nil {
		d.OnHostStateChange(m)
	}
}

// drawJitter is random % (max_ejection_time_jitter_ms + 1), drawn on every
// enforced ejection and degradation, even when the jitter is 0.
func (d *Detector) drawJitter() int64 {
	return int64(d.rng.Uint64() % uint64(d.cfg.MaxEjectionTimeJitterMs+1))
}

// bumpBackoff grows an ejection (or degradation) multiplier while
// backoff·base < max + base: it saturates at ceil(max/base)+1, one step of
// "memory" past the point where the duration is already max (§6.2).
func (d *Detector) bumpBackoff(b *uint32) {
	if int64(*b)*d.cfg.BaseEjectionTimeMs < d.cfg.MaxEjectionTimeMs+d.cfg.BaseEjectionTimeMs {
		*b++
	}
}

// ejectionDuration is checkHostForUneject's min(base·backoff, max) + jitter:
// the jitter is added after the cap, so it can outlast max_ejection_time.
func (d *Detector) ejectionDuration(backoff uint32, jitter int64) int64 {
	if d.grpc() {
		return d.grpcEjectionDuration(backoff)
	}
	return min(d.cfg.BaseEjectionTimeMs*int64(backoff), d.cfg.MaxEjectionTimeMs) + jitter
}

// ---- unejection (§6.3, §8) ---------------------------------------------------

func (d *Detector) unejectHost(m *HostMonitor, now int64, cause UnejectCause) {
	d.active--
	d.stats[StatEjectionsActive] = d.active
	m.ejected = false
	// Only the consecutive counters are reset; buckets, backoff, jitter and
	// numEjections survive (the docs' "clears all counters" means these).
	m.c5xx, m.cGateway, m.cLocal = 0, 0, 0
	m.lastUnejection = now
	m.everUnejected = true
	d.events = append(d.events, Event{AtMs: now, Host: m.name, Kind: EventUneject, Cause: cause, EjectedMs: now - m.lastEjection})
	if d.OnHostStateChange != nil {
		d.OnHostStateChange(m)
	}
}

// ActiveHealthCheck is the callback Envoy registers on the cluster's active
// health checker when successful_active_health_check_uneject_host is true.
// A healthy result unejects an ejected host at once, unless the host also
// carries FAILED_ACTIVE_HC; backoff and buckets are untouched (§8).
func (d *Detector) ActiveHealthCheck(m *HostMonitor, healthy bool) {
	// A50 has no uneject on a health check.
	if !d.cfg.SuccessfulActiveHealthCheckUnejectHost || m.removed || d.grpc() {
		return
	}
	if healthy && !m.failedActiveHC && m.ejected {
		d.unejectHost(m, d.clock.NowMs(), UnejectActiveHealthCheck)
	}
}

// ---- degraded hosts (§9, Envoy ≥ 1.38) -----------------------------------

func (d *Detector) requestDegrade(m *HostMonitor) {
	if !d.cfg.DetectDegradedHosts || m.degraded {
		return
	}
	now := d.clock.NowMs()
	d.stats[StatEjectionsDetectedDegradation]++
	m.degraded = true
	m.numDegradations++
	m.lastDegraded = now
	// The same jitter field as ejections: a degrade overwrites an ejected
	// host's jitter (§11 case 16).
	m.jitterMs = d.drawJitter()
	d.bumpBackoff(&m.degradeBackoff)
	d.events = append(d.events, Event{AtMs: now, Host: m.name, Kind: EventDegrade, Detector: Degraded,
		Backoff: m.degradeBackoff, JitterMs: m.jitterMs, DurationMs: d.ejectionDuration(m.degradeBackoff, m.jitterMs)})
	if d.OnHostStateChange != nil {
		d.OnHostStateChange(m)
	}
}
