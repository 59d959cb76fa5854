package sim

import (
	"math/bits"

	"outlierlab/engine"
)

// connectFailUs is how long a refused connection takes to fail.
const connectFailUs = 1000

// runUntil handles every event whose key is below tickKey, in key order:
// the next event is the earliest of the queue's head and the next arrival
// (no two sources share a class, so no two keys are equal). Arrivals,
// retries leaving their backoff and responses that are not a 5xx are
// handled in this one loop, the queue's pop and push written out: at a few
// dozen instructions of work per event, a call costs as much as the work.
func (s *Sim) runUntil(tickKey uint64) {
	q := s.q
	batch := s.batchable && s.OnReport == nil
	for {
		if !q.minOK && q.n > 0 {
			// ringMin's common case, written out: the earliest bucket is in
			// cur's bitmap word and holds one event.
			slot := q.cur & ringMask
			if m := q.used[slot>>6] >> (slot & 63); m != 0 {
				slot += int64(bits.TrailingZeros64(m))
				if ni := q.heads[slot]; q.nodes[ni].next < 0 {
					q.minOK, q.minNode, q.minPrev, q.minKey = true, ni, -1, q.nodes[ni].key
				}
			}
			if !q.minOK {
				q.ringMin()
			}
		}
		qKey, ring := q.farKey, false
		if q.minOK && q.minKey <= qKey {
			qKey, ring = q.minKey, true
		}
		var ri int32
		var t int64
		var r *request
		if aKey := eventKey(s.nextArrival, classArrival); aKey < qKey {
			if aKey > tickKey {
				return
			}
			// A new request: draw the next arrival (arrivalGap, with
			// expVariate's common path written out), take a slot.
			t = s.nextArrival
			u := s.rng.Uint64()
			var x float64
			if k := u >> (64 - expBits); k != expSteps-1 {
				frac := float64(uint32(u>>(32-expBits))) * (1.0 / (1 << 32))
				st := &expSteps2[k]
				x = st[0] + st[1]*frac
			} else {
				x = expVariate(u)
			}
			next := t + int64(x*s.meanGapUs+0.5)
			if next >= s.endUs {
				next = never
			}
			s.nextArrival = next
			if ri = s.free; ri >= 0 {
				s.free = s.reqs[ri].nextFree
			} else {
				// Slots are reused, so a run allocates only while it
				// reaches its peak concurrency.
				s.reqs = append(s.reqs, request{})
				ri = int32(len(s.reqs) - 1)
			}
			r = &s.reqs[ri]
			*r = request{id: s.nextID, arrivalUs: t, deadlineUs: never, retryLeft: uint8(s.c.Retry.NumRetries)}
			if s.routeUs > 0 {
				r.deadlineUs = t + s.routeUs
			}
			s.nextID++
		} else {
			if qKey > tickKey {
				return
			}
			var key uint64
			if ring {
				// popRing, written out.
				ni := q.minNode
				nd := &q.nodes[ni]
				key, ri = nd.key, nd.idx
				q.cur = bucketOf(key)
				if q.minPrev >= 0 {
					q.nodes[q.minPrev].next = nd.next
				} else if slot := q.cur & ringMask; nd.next >= 0 {
					q.heads[slot] = nd.next
				} else {
					q.heads[slot] = -1
					q.clearUsed(slot)
				}
				nd.next = q.free
				q.free = ni
				q.n--
				q.minOK = false
			} else {
				e := q.popFar()
				key, ri = e.key, e.idx
			}
			t = int64(key >> classBits)
			switch eventClass(key & (1<<classBits - 1)) {
			case classCompletion:
				r := &s.reqs[ri]
				if r.outcome != outResponse || r.code >= 500 || r.degraded || s.OnReport != nil {
					s.complete(ri, t)
					continue
				}
				// complete for a response that is not a 5xx, written out:
				// it is reported as a success (report) and answers the
				// client (endAttempt, finish with failed false). The
				// detector turns a success with a code into
				// PutHTTPResponseCode(code) in both modes (putResultNoSplit,
				// putResultSplit), so that is called directly.
				h := &s.hosts[r.host]
				s.setClockUs(t)
				h.mon.PutHTTPResponseCode(int(r.code))
				if r.holdsRetry {
					s.stats.RetrySuccess++
					s.retries--
					r.holdsRetry = false
				}
				h.active--
				s.inFlight--
				s.hist.add(t - r.arrivalUs)
				s.clients.Requests++
				r.nextFree, s.free = s.free, ri
				continue
			case classHealthCheck:
				s.healthCheck(ri, t)
				continue
			}
			// classRetry: the backoff has elapsed; unless the route timeout
			// fired first (then the client gets a 504 and, with no upstream
			// request in flight, nothing is reported), dispatch the retry.
			if r = &s.reqs[ri]; t >= r.deadlineUs {
				s.stats.RouteTimeout++
				s.finish(ri, t, true)
				continue
			}
		}

		// dispatch: pick a host for the request's next attempt and decide,
		// from the host's fault profile at t, how and when the attempt ends.
		var hi int32
		if b := &s.lb; b.policy == RoundRobin && !b.panic && b.healthyLoad == 100 && (r.attempts == 0 || !s.c.Retry.PreviousHosts) {
			// pick for round robin out of panic, every pick to the healthy
			// hosts, with nothing to skip, written out.
			if n := uint64(len(b.healthy)); n > 0 {
				hi = b.healthy[b.rrHealthy%n]
				b.rrHealthy++
			} else {
				hi = -1
			}
		} else {
			hi = b.pick(s, r)
		}
		if hi < 0 {
			// Envoy answers 503 "no healthy upstream" itself: no upstream
			// request, nothing reported to outlier detection, no retry.
			s.stats.UpstreamCxNoneHealthy++
			s.clients.NoHealthy++
			s.finish(ri, t, true)
			continue
		}
		r.attempts++
		if s.c.Retry.PreviousHosts {
			// Only the previous_hosts predicate reads the tried hosts.
			r.triedHosts[r.triedN] = int16(hi)
			r.triedN++
		}
		r.host = hi
		h := &s.hosts[hi]
		h.active++
		h.attempts++
		s.inFlight++
		s.stats.UpstreamRq++

		seg := h.segmentAt(t)
		fail := false
		if seg.fault >= 0 {
			if seg.pattern == Interleaved {
				n := h.faultN[seg.fault]
				h.faultN[seg.fault] = n + 1
				fail = interleavedFails(n, seg.share)
			} else {
				fail = s.rng.Float64() < seg.share
			}
		}

		var latency int64 // µs until the attempt ends on its own
		r.outcome, r.code, r.degraded = outResponse, 200, false
		if fail && seg.kind == ConnectFailure {
			// onPoolFailure: no stream ever attaches.
			r.outcome = outConnectFailed
			latency = connectFailUs
		} else {
			// onPoolReady: the stream attaches to a (new or reused) connection
			// before any response, so the router reports
			// LocalOriginConnectSuccess first; in split mode that is a
			// local-origin success that lands between other attempts' failures
			// (§3.4), in non-split mode the detector ignores it (see report).
			if s.split || s.OnReport != nil {
				s.report(r, hi, engine.LocalOriginConnectSuccess, 0, t)
			}
			hang := fail && seg.kind == Timeout
			// One random word per response: the high bits draw the
			// exponential jitter (expVariate, written out), the low 22 bits
			// decide the tail.
			u := s.rng.Uint64()
			var x float64
			if k := u >> (64 - expBits); k != expSteps-1 {
				frac := float64(uint32(u>>(32-expBits))) * (1.0 / (1 << 32))
				st := &expSteps2[k]
				x = st[0] + st[1]*frac
			} else {
				x = expVariate(u)
			}
			lat := seg.baseUs + x*s.latencyUs.jitter
			if u&(1<<22-1) < s.tailCut {
				lat += s.latencyUs.tail
			}
			shed := false
			if seg.serviceUs > 0 && !hang {
				// Capacity: one queue per host that serves capacity requests
				// per second; the wait is how far behind the host is.
				start := max(h.busyUntilUs, float64(t))
				wait := start - float64(t)
				if wait > s.queueUs {
					shed = true
				} else {
					h.busyUntilUs = start + seg.serviceUs
					lat += wait
				}
			}
			latency = int64(lat)
			if shed || fail {
				switch {
				case shed:
					// Overloaded: the host sheds the request at once with a 503.
					s.stats.QueueShed++
					r.code = 503
					latency = int64(s.latencyUs.base)
				case hang:
					latency = never
				case seg.kind == Reset:
					r.outcome = outReset
				case seg.kind == Degraded:
					// A 200 that carries x-envoy-degraded: an answer, not
					// a failure.
					r.degraded = true
				default:
					r.code = int16(seg.kind.httpCode())
				}
			}
		}
		// The router's timers: the per-try timeout, and what is left of the
		// route timeout (the earlier one wins; the route timeout ends the
		// request, a per-try timeout may be retried).
		limit, perTry := int64(never), false
		if s.perTryUs > 0 {
			limit, perTry = s.perTryUs, true
		}
		if r.deadlineUs != never {
			if rem := r.deadlineUs - t; rem <= limit {
				limit, perTry = rem, false
			}
		}
		if latency > limit {
			latency = limit
			if perTry {
				r.outcome = outPerTryTimeout
			} else {
				r.outcome = outRouteTimeout
			}
		}
		at := min(t+latency, never)
		if r.outcome != outResponse || r.code >= 500 {
			h.pendingFail++
		} else if batch && r.code == 200 && latency < limit && at < seg.endUs && seg.clean && h.pendingFail == 0 && eventKey(at, classCompletion) < tickKey {
			// A success that nothing can overtake: answer it now and hand
			// the detector its response at the interval's end (see
			// batchable), not through the queue.
			h.pendingOK++
			h.active--
			s.inFlight--
			s.hist.add(at - r.arrivalUs)
			s.clients.Requests++
			r.nextFree, s.free = s.free, ri
			continue
		}
		// q.push, written out for the ring.
		if at>>farShift-q.cur>>(farShift-bucketShift) >= farWindow || q.free < 0 {
			q.push(at, classCompletion, ri)
			continue
		}
		key := eventKey(at, classCompletion)
		ni := q.free
		nd := &q.nodes[ni]
		q.free = nd.next
		slot := (at >> bucketShift) & ringMask
		head := q.heads[slot]
		*nd = node{key: key, idx: ri, next: head}
		q.heads[slot] = ni
		if head < 0 {
			q.setUsed(slot)
		}
		q.n++
		if q.minOK {
			if key < q.minKey {
				q.minNode, q.minPrev, q.minKey = ni, -1, key
			} else if head == q.minNode && q.minPrev < 0 {
				q.minPrev = ni
			}
		}
	}
}

// Batching successes. A response that is not a 5xx only moves its host's
// monitor by total++, success++ and a reset of the consecutive counters,
// which commutes with every other success, with health-check unejections
// (they reset the same counters) and with the other hosts' results; only
// the host's own failures and the tick's interval swap must see it in
// place. So a success is answered at dispatch and counted in
// host.pendingOK, and flushOK hands the monitor those responses before the
// host's next failure or non-batched result (complete) and before the tick
// (closeInterval), when
//
//   - no attempt is ever retried (batchable), so every attempt is a fresh
//     request whose timeouts are its own: any failure of the host
//     dispatched later ends at least limit after its dispatch, and the
//     batched success ends strictly sooner (latency < limit: an attempt
//     dispatched in the same microsecond could time out in the same
//     microsecond otherwise);
//   - the host's fault segment is clean (no failing share, no capacity
//     limit) until after the success ends, so nothing else can fail there
//     first, and no failure dispatched earlier is still pending on the
//     host (pendingFail);
//   - it ends in this interval, so it is no longer in flight at the tick,
//     and the LB does not read in-flight counts (not least request);
//   - nobody watches the reports (OnReport), which would see the order.
//
// TestEventLoopMatchesReference holds the frames to the unbatched loop.
func (s *Sim) flushOK(h *host) {
	for ; h.pendingOK > 0; h.pendingOK-- {
		h.mon.PutHTTPResponseCode(200)
	}
}

// report is the router's updateOutlierDetection for one attempt of r on
// host hi: it reaches the detector with the clock at t (whole ms).
func (s *Sim) report(r *request, hi int32, res engine.Result, code int, t int64) {
	// In non-split mode the detector records nothing for
	// LocalOriginConnectSuccess (putResultNoLocalExternalSplit), so the call
	// is skipped there: it is the one report per attempt that changes
	// nothing, and skipping it keeps the hot path short.
	if res != engine.LocalOriginConnectSuccess || s.split {
		s.setClockUs(t)
		m := s.hosts[hi].mon
		if code == 0 {
			m.PutResult(res)
		} else {
			m.PutResultCode(res, code)
		}
	}
	if s.OnReport != nil {
		s.OnReport(Report{AtUs: t, Host: int(hi), Request: r.id, Attempt: int(r.attempts) - 1, Result: res, Code: code})
	}
}

// complete ends the attempt in flight: report it to its own host's monitor
// exactly as Envoy's router does (§3.4), then retry or answer the client.
func (s *Sim) complete(ri int32, t int64) {
	r := &s.reqs[ri]
	hi := r.host
	h := &s.hosts[hi]
	if r.outcome != outResponse || r.code >= 500 {
		h.pendingFail--
	}
	// The host's batched successes all ended before this attempt's end
	// (see batchable), so the detector sees them first.
	s.flushOK(h)
	failed := true
	switch r.outcome {
	case outResponse:
		// Filter::onUpstreamHeaders: a 5xx is a failure whatever its
		// headers ("ejection has priority over degradation"), else a
		// response with x-envoy-degraded is ExtOriginRequestDegraded.
		switch {
		case r.code >= 500:
			s.report(r, hi, engine.ExtOriginRequestFailed, int(r.code), t)
		case r.degraded:
			s.report(r, hi, engine.ExtOriginRequestDegraded, int(r.code), t)
			failed = false
		default:
			s.report(r, hi, engine.ExtOriginRequestSuccess, int(r.code), t)
			failed = false
		}
	case outConnectFailed, outReset:
		// Pool failures and resets of any kind: LocalOriginConnectFailed,
		// which non-split mode records as a 503.
		s.report(r, hi, engine.LocalOriginConnectFailed, 0, t)
	case outPerTryTimeout:
		s.stats.PerTryTimeout++
		s.report(r, hi, engine.LocalOriginTimeout, 504, t)
	case outRouteTimeout:
		s.stats.RouteTimeout++
		s.report(r, hi, engine.LocalOriginTimeout, 504, t)
	}
	if !failed {
		if r.holdsRetry {
			s.stats.RetrySuccess++
		}
		s.endAttempt(hi)
		s.finish(ri, t, false)
		return
	}
	s.hosts[hi].failedAttempts++
	if r.outcome == outRouteTimeout {
		// onResponseTimeout ends the request without asking the retry state.
		s.endAttempt(hi)
		s.finish(ri, t, true)
		return
	}
	if !s.retriable(r) {
		// RetryStateImpl::shouldRetry counts upstream_rq_retry_success when
		// a retry was armed and this outcome is not retried, whatever it is:
		// a non-retriable 5xx after a retry counts too.
		if r.holdsRetry {
			s.stats.RetrySuccess++
		}
		s.endAttempt(hi)
		s.finish(ri, t, true)
		return
	}
	// shouldRetry (§12.1): release the retry this request held, spend one
	// of its retries (before the budget check, so an overflowed retry still
	// uses one up), then ask the budget or the max_retries breaker.
	if r.holdsRetry {
		s.retries--
		r.holdsRetry = false
	}
	if r.retryLeft == 0 {
		s.stats.RetryLimitExceeded++
		s.endAttempt(hi)
		s.finish(ri, t, true)
		return
	}
	r.retryLeft--
	// The attempt being judged still counts as an active request here:
	// Envoy decides on the retry while the upstream request exists.
	admitted := s.canCreateRetry()
	if s.onRetryAdmission != nil {
		s.onRetryAdmission(s.inFlight, s.retries, admitted)
	}
	if !admitted {
		s.stats.RetryOverflow++
		s.clients.RetryOverflow++
		s.endAttempt(hi)
		s.finish(ri, t, true)
		return
	}
	s.retries++
	r.holdsRetry = true
	s.stats.RetrySent++
	s.clients.Retries++
	s.endAttempt(hi)
	at := t + s.backoffUs(int(r.attempts))
	if at > r.deadlineUs {
		at = r.deadlineUs
	}
	s.q.push(at, classRetry, ri)
}

func (s *Sim) endAttempt(hi int32) {
	s.hosts[hi].active--
	s.inFlight--
}

// retriable is the retry_on check for the attempt's outcome (Envoy's
// wouldRetryFromHeaders / wouldRetryFromReset). A non-hedged per-try
// timeout reaches the retry state as a LocalReset (router.cc
// onPerTryTimeoutCommon → maybeRetryReset), so it is retried like any
// other reset: under reset, 5xx and gateway-error, not connect-failure.
func (s *Sim) retriable(r *request) bool {
	on := s.c.Retry.RetryOn
	if s.c.Retry.NumRetries == 0 || on == 0 {
		return false // no retry policy on the route
	}
	switch r.outcome {
	case outResponse:
		return on&RetryOn5xx != 0 || (on&RetryOnGatewayError != 0 && r.code >= 502 && r.code <= 504)
	case outConnectFailed:
		return on&(RetryOn5xx|RetryOnGatewayError|RetryOnReset|RetryOnConnectFailure) != 0
	case outReset, outPerTryTimeout:
		return on&(RetryOn5xx|RetryOnGatewayError|RetryOnReset) != 0
	}
	return false
}

// canCreateRetry is the cluster's retry admission: with a retry budget,
// active retries must stay below max(budget_percent% of active requests,
// min_retry_concurrency), recomputed at every check and truncated to an
// integer (RetryBudgetImpl); without one, below the max_retries circuit
// breaker. Pending requests are not modelled (no connection-pool queue).
func (s *Sim) canCreateRetry() bool {
	rp := &s.c.Retry
	if !rp.Budget {
		return s.retries < int64(rp.MaxRetries)
	}
	limit := uint64(rp.BudgetPercent / 100.0 * float64(s.inFlight))
	limit = max(limit, uint64(rp.MinRetryConcurrency))
	return uint64(s.retries) < limit
}

// backoffUs is the fully jittered backoff before retry n (1-based):
// random % I_n ms with I_1 = base, doubling, capped at max.
func (s *Sim) backoffUs(n int) int64 {
	base := s.c.Retry.BackoffBase.Milliseconds()
	maxMs := s.c.Retry.BackoffMax.Milliseconds()
	interval := base
	for i := 1; i < n && interval < maxMs; i++ {
		interval *= 2
	}
	interval = min(interval, maxMs)
	if interval <= 0 {
		return 0
	}
	return int64(s.rng.Uint64()%uint64(interval)) * 1000
}

// finish answers the client and frees the request's slot.
func (s *Sim) finish(ri int32, t int64, failed bool) {
	r := &s.reqs[ri]
	if r.holdsRetry {
		s.retries--
		r.holdsRetry = false
	}
	lat := t - r.arrivalUs
	s.hist.add(lat)
	s.clients.Requests++
	if failed {
		s.clients.Failures++
	}
	r.nextFree, s.free = s.free, ri
}

// healthCheck runs one active health check of host hi, then the outlier
// detector's callback (§8), and schedules the next check.
func (s *Sim) healthCheck(hi int32, t int64) {
	s.work.HealthChecks++
	h := &s.hosts[hi]
	seg := h.segmentFor(t)
	healthy, degraded := true, false
	if seg.hcFails {
		var hit bool
		if seg.hcPattern == Interleaved {
			n := h.hcN[seg.hcFault]
			h.hcN[seg.hcFault] = n + 1
			hit = interleavedFails(n, seg.hcShare)
		} else {
			hit = s.rng.Float64() < seg.hcShare
		}
		if s.c.Faults[seg.hcFault].Kind == Degraded {
			// The HTTP health checker reads a 200 with x-envoy-degraded
			// as HealthCheckResult::Degraded: a pass (handleSuccess(true)).
			degraded = hit
		} else {
			healthy = !hit
		}
	}
	hc := &s.c.HealthCheck
	changed := false
	// HealthCheckerImplBase::handleSuccess / handleFailure: a host turns
	// FAILED_ACTIVE_HC after unhealthy_threshold network failures in a row
	// (or at once on a failed HTTP status) and back after healthy_threshold
	// passes in a row.
	if healthy {
		h.hcFailures = 0
		if h.failedHC {
			h.hcSuccess++
			if h.hcSuccess >= hc.HealthyThreshold {
				h.failedHC, h.hcSuccess, changed = false, 0, true
			}
		}
		// handleSuccess(degraded): DEGRADED_ACTIVE_HC follows every
		// passing check, whatever the healthy threshold.
		if h.degradedHC != degraded {
			h.degradedHC, changed = degraded, true
		}
	} else {
		h.hcSuccess = 0
		if !h.failedHC {
			h.hcFailures++
			// setUnhealthy: a failed HTTP check (a response outside
			// expected_statuses: handleFailure(ACTIVE, retriable=false))
			// marks the host at once; unhealthy_threshold only counts
			// network failures and timeouts (refused, reset, hung).
			httpFailure := s.c.Faults[seg.hcFault].Kind.httpCode() != 0
			if httpFailure || h.hcFailures >= hc.UnhealthyThreshold {
				h.failedHC, h.hcFailures, changed = true, 0, true
			}
		}
	}
	s.setClockUs(t)
	if changed {
		// The flag changes before the callbacks run, so the success that
		// reaches healthy_threshold also unejects (§8).
		h.mon.SetActiveHCFailed(h.failedHC)
		s.healthChanged()
	}
	s.det.ActiveHealthCheck(h.mon, healthy)
	if next := t + s.hcUs; next < s.endUs {
		s.q.push(next, classHealthCheck, hi)
	}
}
