package sim

// Priorities: a cluster's hosts in priority levels P0, P1, … (Envoy's
// endpoint priorities, as Istio's locality failover writes them: the
// local zone at P0, the next at P1). Each level's share of the picks
// follows its healthy hosts (load_balancer_impl.cc,
// LoadBalancerBase::recalculatePerPriorityState and
// recalculatePerPriorityPanic); ejected and HC-failed hosts count as
// unhealthy in their level, and each level has its own panic flag
// (isHostSetInPanic). The outlier detector's cap is not per level: it
// counts the whole cluster (DetectorImpl::ejectHost: "Note this is not
// currently checked per-priority level, so it is possible for outlier
// detection to eject all hosts at any given priority level").

// MaxPriorityLevels bounds the levels a cluster may have.
const MaxPriorityLevels = 8

// levelCount is one priority level's hosts as the balancer counts them.
type levelCount struct{ total, healthy, degraded uint64 }

// priorityState is what the balancer keeps per level, recomputed at every
// host-set change: the healthy and degraded loads (percent, summing to
// 100) and the level's panic flag.
type priorityState struct {
	healthyLoad, degradedLoad []uint64
	panic                     []bool
}

// overprovisioning is Envoy's default overprovisioning factor, 1.4, in
// percent (host_set.overprovisioningFactor()).
const overprovisioning = 140

// priorityLoad is recalculatePerPriorityState over every level, then
// recalculatePerPriorityPanic (and recalculateLoadInTotalPanic when every
// level is in panic):
//
//	health_i    = min(100, 140·healthy_i/total_i)      (integers)
//	degraded_i  = min(100, 140·degraded_i/total_i)
//	normalized  = min(100, Σ health_i + Σ degraded_i)
//	load_i      = min(left, health_i·100/normalized), level by level (distributeLoad),
//	              then the degraded loads from what is left; a rounding
//	              remainder goes to the first level with healthy hosts, else degraded
//	panic_i     = normalized < 100 && 100·healthy_i/total_i + 100·degraded_i/total_i < threshold
//
// With every level in panic the load follows the levels' host counts
// instead (the first non-empty level takes the remainder). With no
// availability at all and a threshold of 0, P0 takes the load and no level
// is in panic: picks find no host.
func priorityLoad(levels []levelCount, panicThreshold uint32, st *priorityState) {
	n := len(levels)
	st.healthyLoad = resize(st.healthyLoad, n)
	st.degradedLoad = resize(st.degradedLoad, n)
	st.panic = append(st.panic[:0], make([]bool, n)...)
	health, degraded := make([]uint64, n), make([]uint64, n)
	var sum uint64
	for i, l := range levels {
		if l.total > 0 {
			health[i] = min(100, overprovisioning*l.healthy/l.total)
			degraded[i] = min(100, overprovisioning*l.degraded/l.total)
		}
		sum += health[i] + degraded[i]
	}
	normalized := min(100, sum)
	if normalized > 0 {
		firstH, left := distributeLoad(st.healthyLoad, health, 100, normalized)
		firstD, left := distributeLoad(st.degradedLoad, degraded, left, normalized)
		if left != 0 {
			if firstH >= 0 {
				st.healthyLoad[firstH] += left
			} else {
				st.degradedLoad[firstD] += left
			}
		}
	}
	threshold := min(panicThreshold, 100)
	if threshold == 0 && normalized == 0 {
		st.healthyLoad[0] = 100
		return
	}
	total := true
	for i, l := range levels {
		st.panic[i] = normalized != 100 && hostSetInPanic(l, threshold)
		total = total && st.panic[i]
	}
	if total {
		loadInTotalPanic(levels, st)
	}
}

// distributeLoad gives each level min(what is left, availability·100 /
// normalized) and returns the first level with availability (-1: none)
// and what is left.
func distributeLoad(load, avail []uint64, left, normalized uint64) (int, uint64) {
	first := -1
	for i, a := range avail {
		if first < 0 && a > 0 {
			first = i
		}
		load[i] = min(left, a*100/normalized)
		left -= load[i]
	}
	return first, left
}

// hostSetInPanic is isHostSetInPanic: healthy and degraded hosts, as
// percentages of the level's hosts (floating point), below the threshold.
func hostSetInPanic(l levelCount, threshold uint32) bool {
	var healthy, degraded float64
	if l.total > 0 {
		healthy = 100.0 * float64(l.healthy) / float64(l.total)
		degraded = 100.0 * float64(l.degraded) / float64(l.total)
	}
	return healthy+degraded < float64(threshold)
}

// loadInTotalPanic is recalculateLoadInTotalPanic: load by host count.
func loadInTotalPanic(levels []levelCount, st *priorityState) {
	var hosts uint64
	for _, l := range levels {
		hosts += l.total
	}
	clear(st.degradedLoad)
	if hosts == 0 {
		clear(st.healthyLoad)
		st.healthyLoad[0] = 100
		return
	}
	left, first := uint64(100), -1
	for i, l := range levels {
		if first < 0 && l.total > 0 {
			first = i
		}
		st.healthyLoad[i] = 100 * l.total / hosts
		left -= st.healthyLoad[i]
	}
	st.healthyLoad[first] += left
}

// choosePriority is LoadBalancerBase::choosePriority: draw (1–100) walks
// the healthy loads, then the degraded ones.
func choosePriority(draw uint64, st *priorityState) (level int, degraded bool) {
	var acc uint64
	for i, l := range st.healthyLoad {
		if acc += l; draw <= acc {
			return i, false
		}
	}
	for i, l := range st.degradedLoad {
		if acc += l; draw <= acc {
			return i, true
		}
	}
	return 0, false // the loads sum to 100
}

func resize(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	s = s[:n]
	clear(s)
	return s
}
