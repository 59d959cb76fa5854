package sim

import (
	"fmt"
	"reflect"
	"testing"
)

// TestPriorityLoadEnvoyCases are Envoy's own cases for priority load and
// panic (test/common/upstream/load_balancer_impl_test.cc,
// LoadBalancerBaseTest.GentleFailover, GentleFailoverWithExtraLevels and
// OverProvisioningFactor at the default factor, panic threshold 50 unless
// said), written as {hosts, healthy, degraded} per level.
func TestPriorityLoadEnvoyCases(t *testing.T) {
	type lv = levelCount
	for _, tc := range []struct {
		name      string
		threshold uint32
		levels    []levelCount
		healthy   []uint64
		degraded  []uint64
		panic     []bool
	}{
		{"GentleFailover: P0 all healthy", 50, []lv{{1, 1, 0}, {1, 1, 0}}, []uint64{100, 0}, nil, []bool{false, false}},
		{"GentleFailover: 70/30", 50, []lv{{2, 1, 0}, {2, 1, 0}}, []uint64{70, 30}, nil, []bool{false, false}},
		{"GentleFailover: P0 below panic, ignored at total health 100", 50, []lv{{4, 1, 0}, {2, 2, 0}}, []uint64{35, 65}, nil, []bool{false, false}},
		{"GentleFailover: scaled up, both in panic", 50, []lv{{4, 1, 0}, {4, 1, 0}}, []uint64{50, 50}, nil, []bool{true, true}},
		{"OverProvisioningFactor: 1.4", 50, []lv{{4, 2, 0}, {4, 2, 0}}, []uint64{70, 30}, nil, nil},
		{"ExtraLevels: 70/30/0", 50, []lv{{2, 1, 0}, {2, 1, 0}, {2, 1, 0}}, []uint64{70, 30, 0}, []uint64{0, 0, 0}, nil},
		{"ExtraLevels: 35/65/0", 50, []lv{{4, 1, 0}, {2, 2, 0}, {2, 1, 0}}, []uint64{35, 65, 0}, []uint64{0, 0, 0}, nil},
		{"ExtraLevels: 35/35/30", 50, []lv{{4, 1, 0}, {4, 1, 0}, {4, 1, 0}}, []uint64{35, 35, 30}, []uint64{0, 0, 0}, nil},
		{"ExtraLevels: rounding to P0", 50, []lv{{5, 1, 0}, {5, 1, 0}, {5, 1, 0}}, []uint64{34, 33, 33}, []uint64{0, 0, 0}, []bool{true, true, true}},
		{"ExtraLevels: P0 and P1 down, P2 healthy", 50, []lv{{5, 0, 0}, {5, 0, 0}, {5, 5, 0}}, []uint64{0, 0, 100}, []uint64{0, 0, 0}, []bool{false, false, false}},
		{"ExtraLevels: P2 80% healthy", 50, []lv{{5, 0, 0}, {5, 0, 0}, {5, 4, 0}}, []uint64{0, 0, 100}, []uint64{0, 0, 0}, []bool{false, false, false}},
		{"ExtraLevels: total panic by host count", 50, []lv{{5, 0, 0}, {5, 0, 0}, {5, 2, 0}}, []uint64{34, 33, 33}, []uint64{0, 0, 0}, []bool{true, true, true}},
		{"ExtraLevels: degraded P0, no panic", 50, []lv{{5, 0, 5}, {5, 2, 2}, {5, 2, 0}}, []uint64{0, 56, 44}, []uint64{0, 0, 0}, []bool{false, false, false}},
		{"ExtraLevels: all down, 50/30/20", 50, []lv{{5, 0, 0}, {3, 0, 0}, {2, 0, 0}}, []uint64{50, 30, 20}, []uint64{0, 0, 0}, []bool{true, true, true}},
		{"ExtraLevels: total panic 37/42/21", 50, []lv{{5, 0, 0}, {6, 2, 0}, {3, 1, 0}}, []uint64{37, 42, 21}, []uint64{0, 0, 0}, []bool{true, true, true}},
		{"ExtraLevels: spill into degraded", 50, []lv{{5, 0, 1}, {5, 0, 5}, {5, 1, 0}}, []uint64{0, 0, 28}, []uint64{28, 44, 0}, nil},
		{"ExtraLevels: degraded rounding, panic off", 0, []lv{{5, 0, 0}, {5, 0, 2}, {5, 0, 1}}, []uint64{0, 0, 0}, []uint64{0, 67, 33}, nil},
		{"ExtraLevels: degraded only, total panic", 50, []lv{{5, 0, 0}, {5, 0, 2}, {5, 0, 1}}, []uint64{34, 33, 33}, []uint64{0, 0, 0}, nil},
		{"ExtraLevels: first non-empty takes the remainder", 50, []lv{{0, 0, 0}, {6, 0, 0}, {3, 0, 0}}, []uint64{0, 67, 33}, nil, []bool{true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st priorityState
			priorityLoad(tc.levels, tc.threshold, &st)
			if !reflect.DeepEqual(st.healthyLoad, tc.healthy) {
				t.Errorf("healthy load %v, want %v", st.healthyLoad, tc.healthy)
			}
			if tc.degraded != nil && !reflect.DeepEqual(st.degradedLoad, tc.degraded) {
				t.Errorf("degraded load %v, want %v", st.degradedLoad, tc.degraded)
			}
			if tc.panic != nil && !reflect.DeepEqual(st.panic, tc.panic) {
				t.Errorf("panic %v, want %v", st.panic, tc.panic)
			}
			var sum uint64
			for i := range st.healthyLoad {
				sum += st.healthyLoad[i] + st.degradedLoad[i]
			}
			if sum != 100 {
				t.Errorf("loads sum to %d", sum)
			}
		})
	}
}

// TestPriorityLoadOneLevelIsTheBalancer: one level is what the
// one-priority balancer computes (balancer.recompute), for every host
// count and health up to 20 hosts and several thresholds: the levels'
// arithmetic and the one-priority balancer's are one rule.
func TestPriorityLoadOneLevelIsTheBalancer(t *testing.T) {
	for total := uint64(1); total <= 20; total++ {
		for healthy := uint64(0); healthy <= total; healthy++ {
			for degraded := uint64(0); healthy+degraded <= total; degraded++ {
				for _, thr := range []uint32{0, 30, 50, 80, 100} {
					var st priorityState
					priorityLoad([]levelCount{{total, healthy, degraded}}, thr, &st)
					b := oneLevel(total, healthy, degraded, thr)
					// In panic every pick goes to all the level's hosts,
					// whatever its load says (Envoy then loads P0 by host
					// count, 100; the balancer keeps its health's).
					if b.panic {
						b.healthyLoad = st.healthyLoad[0]
					}
					if got := fmt.Sprint(st.healthyLoad[0], st.panic[0]); got != fmt.Sprint(b.healthyLoad, b.panic) {
						t.Fatalf("%d hosts, %d healthy, %d degraded, threshold %d: %s, the balancer %d %v", total, healthy, degraded, thr, got, b.healthyLoad, b.panic)
					}
				}
			}
		}
	}
}

// oneLevel is balancer.recompute's arithmetic on counts.
func oneLevel(total, healthy, degraded uint64, threshold uint32) balancer {
	b := balancer{panicThreshold: threshold}
	b.recomputeCounts(total, healthy, degraded)
	return b
}
