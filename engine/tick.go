package engine

import "math"

// Origin selects the external-origin or local-origin statistics.
type Origin uint8

const (
	External Origin = iota
	Local
)

// RateGate says why a success-rate or failure-percentage pass did not run.
type RateGate uint8

const (
	// GateRan: the pass ran.
	GateRan RateGate = iota
	// GateTooFewHosts: the cluster has fewer hosts than both
	// success_rate_minimum_hosts and failure_percentage_minimum_hosts, so
	// Envoy returns before collecting anything.
	GateTooFewHosts
	// GateTooFewHostsWithVolume: fewer hosts reached the request volume than
	// the *_minimum_hosts setting asks for (or none did).
	GateTooFewHostsWithVolume
	// GateNotConfigured: the gRPC dialect does not run this algorithm
	// (grpc-go's xDS translation left its block out), or has no such pass
	// (local origin).
	GateNotConfigured
)

// RatePass is what one processRates call saw and decided, for one origin.
type RatePass struct {
	Origin Origin
	// Hosts is the cluster's host count (the early-exit comparison).
	Hosts int
	// Success rate.
	SRGate          RateGate
	SRHostsVolume   int // non-ejected hosts with ≥ success_rate_request_volume
	SRMinimumHosts  uint32
	SRRequestVolume uint32
	Mean, StdDev    float64 // valid when SRGate == GateRan
	Threshold       float64 // mean − k·σ
	SROutliers      int
	// Failure percentage.
	FPGate          RateGate
	FPHostsVolume   int
	FPMinimumHosts  uint32
	FPRequestVolume uint32
	FPThreshold     uint32
	FPOutliers      int
}

// HostSample is one host as the detector saw it at a tick: the bucket of the
// interval that just ended, and its state after the tick.
type HostSample struct {
	Name             string
	Requests         uint64 // external-origin requests in the interval
	Successes        uint64
	SuccessRate      float64 // 100·success/total, or -1 with no requests
	LocalRequests    uint64
	LocalSuccesses   uint64
	LocalRate        float64
	Ejected          bool
	Degraded         bool
	Backoff          uint32
	NumEjections     uint32
	EjectedAtMs      int64 // valid when Ejected
	ReturnEligibleMs int64 // valid when Ejected: lastEjection + duration
	Consecutive5xx   uint32
	ConsecutiveGW    uint32
	ConsecutiveLocal uint32
	// Peak5xx is the highest the consecutive 5xx counter stood in the
	// interval that just ended (its streak before a success, an ejection
	// or an uneject reset it); Consecutive5xx is where it stands now.
	Peak5xx uint32
}

// TickReport is everything a teacher needs about one interval tick. It is
// owned by the detector and overwritten by the next Tick.
type TickReport struct {
	AtMs     int64
	Hosts    []HostSample
	External RatePass
	Local    RatePass
	// Events holds the events recorded during this tick (a view into the
	// detector's pending events; valid until DrainEvents).
	Events []Event
}

// Tick is onIntervalTimer (§5.1), in Envoy's order: one pass that unejects,
// undegrades and swaps buckets; success rate then failure percentage on
// external then local buckets; backoff decay. The caller re-arms the timer
// for now + interval.
func (d *Detector) Tick() *TickReport {
	if d.grpc() {
		return d.grpcTick()
	}
	now := d.clock.NowMs()
	start := len(d.events)
	for _, m := range d.hosts {
		d.checkHostForUneject(m, now)
		d.checkHostForUndegrade(m, now)
		m.ext.swap()
		m.local.swap()
		// After the uneject, which clears the counter: the next interval's
		// peak starts from the streak it inherits.
		m.peakBackup, m.peak5xx = m.peak5xx, m.c5xx
		m.extSR = -1
		m.localSR = -1
	}
	r := &d.report
	r.AtMs = now
	d.processRates(External, now, &r.External)
	d.processRates(Local, now, &r.Local)
	for _, m := range d.hosts {
		// A host unejected in this tick has now−lastUnejection = 0 and is
		// not decayed until the next tick.
		if !m.ejected && m.everUnejected && now-m.lastUnejection >= d.cfg.IntervalMs && m.backoff > 0 {
			m.backoff--
		}
	}
	for _, m := range d.hosts {
		if !m.degraded && m.everUndegraded && now-m.lastUndegraded >= d.cfg.IntervalMs && m.degradeBackoff > 0 {
			m.degradeBackoff--
		}
	}
	return d.finishReport(start)
}

// finishReport samples every host after a tick; events from start on are
// the tick's.
func (d *Detector) finishReport(start int) *TickReport {
	r := &d.report
	r.Hosts = r.Hosts[:0]
	for _, m := range d.hosts {
		s := HostSample{
			Name:             m.name,
			Requests:         m.ext.backup.total,
			Successes:        m.ext.backup.success,
			SuccessRate:      rate(m.ext.backup),
			LocalRequests:    m.local.backup.total,
			LocalSuccesses:   m.local.backup.success,
			LocalRate:        rate(m.local.backup),
			Ejected:          m.ejected,
			Degraded:         m.degraded,
			Backoff:          m.backoff,
			NumEjections:     m.numEjections,
			Consecutive5xx:   m.c5xx,
			ConsecutiveGW:    m.cGateway,
			ConsecutiveLocal: m.cLocal,
			Peak5xx:          m.peakBackup,
		}
		if m.ejected {
			s.EjectedAtMs = m.lastEjection
			s.ReturnEligibleMs = m.lastEjection + d.ejectionDuration(m.backoff, m.jitterMs)
		}
		r.Hosts = append(r.Hosts, s)
	}
	r.Events = d.events[start:]
	return r
}

func rate(b bucket) float64 {
	if b.total == 0 {
		return -1
	}
	return float64(b.success) * 100.0 / float64(b.total)
}

// checkHostForUneject: the ejection ends at the first check where
// min(base·backoff, max) + jitter <= now − lastEjection (inclusive).
func (d *Detector) checkHostForUneject(m *HostMonitor, now int64) {
	if !m.ejected {
		return
	}
	if d.ejectionDuration(m.backoff, m.jitterMs) <= now-m.lastEjection {
		d.unejectHost(m, now, UnejectTimeElapsed)
	}
}

// checkHostForUndegrade mirrors checkHostForUneject for degraded hosts
// (≥ 1.38). No counters are reset and Envoy logs it as an UNEJECT.
func (d *Detector) checkHostForUndegrade(m *HostMonitor, now int64) {
	if !m.degraded {
		return
	}
	if d.ejectionDuration(m.degradeBackoff, m.jitterMs) <= now-m.lastDegraded {
		m.degraded = false
		m.lastUndegraded = now
		m.everUndegraded = true
		d.events = append(d.events, Event{AtMs: now, Host: m.name, Kind: EventUndegrade, Detector: Degraded, EjectedMs: now - m.lastDegraded})
		if d.OnHostStateChange != nil {
			d.OnHostStateChange(m)
		}
	}
}

// processRates is processSuccessRateEjections for one origin: success rate,
// then failure percentage, both over lists built before any ejection.
func (d *Detector) processRates(o Origin, now int64, p *RatePass) {
	cfg := &d.cfg
	*p = RatePass{
		Origin: o, Hosts: len(d.hosts),
		SRMinimumHosts: cfg.SuccessRateMinimumHosts, SRRequestVolume: cfg.SuccessRateRequestVolume,
		FPMinimumHosts: cfg.FailurePercentageMinimumHosts, FPRequestVolume: cfg.FailurePercentageRequestVolume,
		FPThreshold: cfg.FailurePercentageThreshold,
		Mean:        -1, Threshold: -1,
	}
	n := uint64(len(d.hosts))
	if n < uint64(cfg.SuccessRateMinimumHosts) && n < uint64(cfg.FailurePercentageMinimumHosts) {
		p.SRGate, p.FPGate = GateTooFewHosts, GateTooFewHosts
		return
	}
	srVol := uint64(cfg.SuccessRateRequestVolume)
	fpVol := uint64(cfg.FailurePercentageRequestVolume)
	d.srHosts, d.fpHost = d.srHosts[:0], d.fpHost[:0]
	sum := 0.0
	for _, m := range d.hosts {
		if m.ejected {
			continue // ejected hosts are left out of the statistics
		}
		b := &m.ext.backup
		if o == Local {
			b = &m.local.backup
		}
		if b.total == 0 {
			continue // even with a request volume of 0
		}
		sr := float64(b.success) * 100.0 / float64(b.total)
		if b.total >= min(srVol, fpVol) {
			if o == External {
				m.extSR = sr
			} else {
				m.localSR = sr
			}
		}
		if b.total >= srVol {
			d.srHosts = append(d.srHosts, rateSample{m, sr})
			sum += sr
		}
		if b.total >= fpVol {
			d.fpHost = append(d.fpHost, rateSample{m, sr})
		}
	}
	p.SRHostsVolume, p.FPHostsVolume = len(d.srHosts), len(d.fpHost)

	srType, fpType := SuccessRate, FailurePercentage
	if o == Local {
		srType, fpType = SuccessRateLocalOrigin, FailurePercentageLocalOrigin
	}
	if len(d.srHosts) > 0 && uint64(len(d.srHosts)) >= uint64(cfg.SuccessRateMinimumHosts) {
		cnt := float64(len(d.srHosts))
		mean := sum / cnt
		variance := 0.0
		for _, s := range d.srHosts {
			dv := s.sr - mean
			variance += dv * dv // pow(x, 2) == x*x for IEEE doubles
		}
		variance /= cnt // population variance, as Envoy
		sd := math.Sqrt(variance)
		thr := mean - cfg.StdevFactor()*sd
		p.Mean, p.StdDev, p.Threshold = mean, sd, thr
		for _, s := range d.srHosts {
			if s.sr < thr { // strict: all-equal hosts (σ = 0) eject nobody
				p.SROutliers++
				d.stats[StatEjectionsSuccessRate]++
				d.stats[detectedStat[srType]]++
				d.ejectHost(s.m, srType, now, s.sr, mean, thr)
			}
		}
	} else {
		p.SRGate = GateTooFewHostsWithVolume
	}
	if len(d.fpHost) > 0 && uint64(len(d.fpHost)) >= uint64(cfg.FailurePercentageMinimumHosts) {
		for _, s := range d.fpHost {
			// No "already ejected?" check: a host just ejected by success
			// rate can be ejected again here (§5.2), as in Envoy release builds.
			if 100.0-s.sr >= float64(cfg.FailurePercentageThreshold) {
				p.FPOutliers++
				d.stats[detectedStat[fpType]]++
				d.ejectHost(s.m, fpType, now, s.sr, -1, -1)
			}
		}
	} else {
		p.FPGate = GateTooFewHostsWithVolume
	}
}
