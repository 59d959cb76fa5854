package sim

// balancer is Envoy's load balancer for one priority with equal weights
// (load_balancer_impl.cc). Its host lists and panic flag are recomputed
// when a host's health changes, never per request, the way Envoy's cluster
// rebuilds its host sets from runChangedStateCallbacks.
type balancer struct {
	policy         LBPolicy
	panicThreshold uint32
	// healthy: hosts with neither FAILED_OUTLIER_CHECK nor FAILED_ACTIVE_HC
	// nor a degraded flag; degraded: hosts with neither failure flag and
	// DEGRADED_OUTLIER_DETECTION or DEGRADED_ACTIVE_HC (coarseHealth);
	// both in host order.
	healthy  []int32
	degraded []int32
	all      []int32
	panic    bool
	// healthyLoad is the share of picks (0–100) that go to the healthy
	// hosts out of panic: per_priority_load_'s healthy load of the one
	// priority; the degraded hosts take the rest (its degraded load).
	healthyLoad uint64
	// Envoy keeps one round-robin index per host source and seeds each
	// with the same random number (RoundRobinLoadBalancer's rr_indexes_,
	// refreshHostSource); a change of the host list does not reset it.
	rrHealthy, rrDegraded, rrAll uint64
	// lbHealthyPanic is cluster.<name>.lb_healthy_panic: one per pick
	// attempt made while the priority is in panic.
	lbHealthyPanic uint64

	// levels are the priority levels when there are more than one
	// (priority.go); nil for one, which the fields above balance alone.
	// With levels, panic says whether any level is in panic and
	// healthyLoad is 0, so the router's round-robin shortcut (one
	// priority, every pick to its healthy hosts) never applies.
	levels []level
	prio   priorityState
	counts []levelCount
}

// level is one priority level's hosts and round-robin indexes (Envoy
// keeps an index per host source: priority and source type).
type level struct {
	all, healthy, degraded       []int32
	rrHealthy, rrDegraded, rrAll uint64
}

// recompute mirrors recalculatePerPriorityState and
// recalculatePerPriorityPanic for a single priority (envoy-semantics.md
// §7.2–7.3; load_balancer_impl.cc):
//
//	health     = min(100, 140·healthy/total)      (integer, overprovisioning 1.4)
//	degraded   = min(100, 140·degraded/total)
//	normalized = min(100, health + degraded)
//	panic      = normalized < 100 && 100·healthy/total + 100·degraded/total < threshold   (float, strict)
//
// so with the default threshold 50 there is no panic while at least ~71.4%
// of hosts are healthy, and panic once fewer than half are healthy or
// degraded. Out of panic, distributeLoad gives the healthy hosts
// min(100, health·100/normalized) of the picks and the degraded ones what
// is left (a rounding remainder goes to the healthy hosts if any have
// availability): degraded hosts get traffic only once fewer than ~71.4%
// of the hosts are healthy, and then a share that grows as health falls.
func (b *balancer) recompute(s *Sim) {
	s.work.Rebuilds += uint64(len(s.hosts))
	b.healthy, b.degraded = b.healthy[:0], b.degraded[:0]
	for k := range b.levels {
		b.levels[k].healthy, b.levels[k].degraded = b.levels[k].healthy[:0], b.levels[k].degraded[:0]
	}
	for i := range s.hosts {
		h := &s.hosts[i]
		switch {
		case h.mon.Ejected() || h.failedHC:
		case h.mon.DegradedByOutlier() || h.degradedHC:
			b.degraded = append(b.degraded, int32(i))
			if b.levels != nil {
				lv := &b.levels[h.level]
				lv.degraded = append(lv.degraded, int32(i))
			}
		default:
			b.healthy = append(b.healthy, int32(i))
			if b.levels != nil {
				lv := &b.levels[h.level]
				lv.healthy = append(lv.healthy, int32(i))
			}
		}
	}
	if b.levels != nil {
		b.recomputeLevels()
		return
	}
	b.recomputeCounts(uint64(len(b.all)), uint64(len(b.healthy)), uint64(len(b.degraded)))
}

// recomputeLevels is priorityLoad over the levels.
func (b *balancer) recomputeLevels() {
	b.counts = b.counts[:0]
	for _, lv := range b.levels {
		b.counts = append(b.counts, levelCount{uint64(len(lv.all)), uint64(len(lv.healthy)), uint64(len(lv.degraded))})
	}
	priorityLoad(b.counts, b.panicThreshold, &b.prio)
	b.panic, b.healthyLoad = false, 0
	for _, p := range b.prio.panic {
		b.panic = b.panic || p
	}
}

// recomputeCounts is recompute's arithmetic for one priority of total
// hosts, healthy and degraded of them.
func (b *balancer) recomputeCounts(total, healthy, degraded uint64) {
	health := min(100, 140*healthy/total)
	degradedAvail := min(100, 140*degraded/total)
	normalized := min(100, health+degradedAvail)
	b.healthyLoad = 100
	if normalized > 0 {
		b.healthyLoad = min(100, health*100/normalized)
		degradedLoad := min(100-b.healthyLoad, degradedAvail*100/normalized)
		if rem := 100 - b.healthyLoad - degradedLoad; rem != 0 && health > 0 {
			b.healthyLoad += rem
		}
	}
	switch {
	case b.panicThreshold == 0 && normalized == 0:
		// Envoy gives P0 all the load and leaves the panic flags alone;
		// with threshold 0 they are never set, so picks find no host.
		b.panic = false
	case normalized == 100:
		b.panic = false
	default:
		b.panic = 100.0*float64(healthy)/float64(total)+100.0*float64(degraded)/float64(total) < float64(min(b.panicThreshold, 100))
	}
}

// pickOnce is chooseHostOnce: the source is every host while in panic
// (ejected and HC-failed hosts included), else the healthy hosts or, for
// the degraded load's share of picks, the degraded ones. -1: no host.
//
// Envoy draws random() % 100 + 1 for choosePriority at every pick; the
// simulation draws it only when both sources have load, where the draw
// decides (so a run without degraded hosts draws what it always drew).
func (b *balancer) pickOnce(s *Sim) int32 {
	if b.levels != nil {
		return b.pickLevel(s)
	}
	src, rr := b.healthy, &b.rrHealthy
	switch {
	case b.panic:
		b.lbHealthyPanic++
		src, rr = b.all, &b.rrAll
	case b.healthyLoad == 0:
		src, rr = b.degraded, &b.rrDegraded
	case b.healthyLoad < 100 && s.rng.Uint64()%100+1 > b.healthyLoad:
		src, rr = b.degraded, &b.rrDegraded
	}
	return b.choose(s, src, rr)
}

// pickLevel is chooseHostOnce with priorities: chooseHostSet draws the
// level and source by their loads (choosePriority, a draw at every pick,
// as Envoy's), then the level's own panic flag decides between its
// source and all its hosts (hostSourceToUse).
func (b *balancer) pickLevel(s *Sim) int32 {
	p, degraded := choosePriority(s.rng.Uint64()%100+1, &b.prio)
	lv := &b.levels[p]
	src, rr := lv.healthy, &lv.rrHealthy
	switch {
	case b.prio.panic[p]:
		b.lbHealthyPanic++
		src, rr = lv.all, &lv.rrAll
	case degraded:
		src, rr = lv.degraded, &lv.rrDegraded
	}
	return b.choose(s, src, rr)
}

// choose is the policy's pick among src (rr: the source's round-robin
// index); -1 when src is empty.
func (b *balancer) choose(s *Sim, src []int32, rr *uint64) int32 {
	n := uint64(len(src))
	if n == 0 {
		return -1
	}
	switch b.policy {
	case LeastRequest:
		// Power of two choices (choice_count 2): the first sample is the
		// candidate; a later one replaces it only with strictly fewer
		// active requests. Both samples may be the same host.
		c := src[s.rng.Uint64()%n]
		o := src[s.rng.Uint64()%n]
		if s.hosts[o].active < s.hosts[c].active {
			c = o
		}
		return c
	case Random:
		return src[s.rng.Uint64()%n]
	default:
		h := src[*rr%n]
		*rr++
		return h
	}
}

// pick is chooseHost with the previous_hosts retry predicate: on a retry
// the LB may pick up to host_selection_retry_max_attempts+1 times, skipping
// hosts this request already tried; if every pick is rejected the last one
// is used anyway (envoy-semantics.md §12.2).
func (b *balancer) pick(s *Sim, r *request) int32 {
	h := b.pickOnce(s)
	if h < 0 || r.attempts == 0 || !s.c.Retry.PreviousHosts {
		return h
	}
	for range s.c.Retry.HostSelectionRetryMaxAttempts {
		if !r.tried(h) {
			return h
		}
		s.work.Picks++ // a re-pick: Work adds the one per attempt
		h = b.pickOnce(s)
		if h < 0 {
			return h
		}
	}
	return h
}
