package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The calendar queue pops events in key order, as a sorted list would,
// whatever mix of near, same-bucket and far events it holds, as long as
// nothing is pushed before the last popped event (the simulator's rule).
func TestEventQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := newEventQueue()
	var ref []uint64
	now := int64(0)
	for step := range 200000 {
		if rng.IntN(2) == 0 || len(ref) == 0 {
			var d int64
			switch rng.IntN(4) {
			case 0:
				d = rng.Int64N(2000) // same or next bucket
			case 1:
				d = rng.Int64N(50000)
			case 2:
				d = rng.Int64N(3_000_000) // beyond the ring
			default:
				d = 0
			}
			c := eventClass(rng.IntN(3))
			q.push(now+d, c, int32(step))
			ref = append(ref, eventKey(now+d, c))
			slices.Sort(ref)
			continue
		}
		if rng.IntN(3) == 0 && q.topKey() != ref[0] {
			t.Fatalf("step %d: top %d, want %d", step, q.topKey(), ref[0])
		}
		e := q.pop()
		if e.key != ref[0] {
			t.Fatalf("step %d: popped %d, want %d", step, e.key, ref[0])
		}
		ref = ref[1:]
		now = e.at()
		if q.len() != len(ref) {
			t.Fatalf("len %d, want %d", q.len(), len(ref))
		}
	}
}
