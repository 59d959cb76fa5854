package sim

// balancer is Envoy's load balancer for one priority with equal weights
// (load_balancer_impl.cc). Its host lists and panic flag are recomputed
// when a host's health changes, never per request, the way Envoy's cluster
// rebuilds its host sets from runChangedStateCallbacks.
type balancer struct {
	policy         LBPolicy
	panicThreshold uint32
	healthy        []int32 // hosts with neither FAILED_OUTLIER_CHECK nor FAILED_ACTIVE_HC, in host order
	all            []int32
	panic          bool
	// Envoy keeps one round-robin index per host source and seeds it with
	// a random number; a change of the host list does not reset it.
	rrHealthy, rrAll uint64
	// lbHealthyPanic is cluster.<name>.lb_healthy_panic: one per pick
	// attempt made while the priority is in panic.
	lbHealthyPanic uint64
}

// recompute mirrors recalculatePerPriorityState and
// recalculatePerPriorityPanic for a single priority without degraded hosts
// (envoy-semantics.md §7.2–7.3):
//
//	health = min(100, 140·healthy/total)           (integer, overprovisioning 1.4)
//	panic  = health < 100 && 100·healthy/total < threshold   (float, strict)
//
// so with the default threshold 50 there is no panic while at least ~71.4%
// of hosts are healthy, and panic once fewer than half are.
func (b *balancer) recompute(s *Sim) {
	s.work.Rebuilds += uint64(len(s.hosts))
	b.healthy = b.healthy[:0]
	for i := range s.hosts {
		h := &s.hosts[i]
		if !h.mon.Ejected() && !h.failedHC {
			b.healthy = append(b.healthy, int32(i))
		}
	}
	total := uint64(len(b.all))
	healthy := uint64(len(b.healthy))
	availability := min(100, 140*healthy/total)
	switch {
	case b.panicThreshold == 0 && availability == 0:
		// Envoy gives P0 all the load and leaves the panic flags alone;
		// with threshold 0 they are never set, so picks find no host.
		b.panic = false
	case availability == 100:
		b.panic = false
	default:
		b.panic = 100.0*float64(healthy)/float64(total) < float64(min(b.panicThreshold, 100))
	}
}

// pickOnce is chooseHostOnce: the source is the healthy hosts, or every
// host while in panic (ejected and HC-failed hosts included). -1: no host.
func (b *balancer) pickOnce(s *Sim) int32 {
	src, rr := b.healthy, &b.rrHealthy
	if b.panic {
		b.lbHealthyPanic++
		src, rr = b.all, &b.rrAll
	}
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
