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

// The queue pops exactly what the reference queue pops, idx included, so
// events at the same microsecond keep the order earlier runs gave them:
// a workload dense in ties, topKey calls at random between operations.
func TestEventQueueMatchesReference(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		q, ref := newEventQueue(), newRefQueue()
		now := int64(0)
		for step := range 50000 {
			if rng.IntN(4) == 0 {
				if a, b := q.topKey(), ref.topKey(); a != b {
					t.Fatalf("seed %d step %d: top %d, reference %d", seed, step, a, b)
				}
			}
			if rng.IntN(2) == 0 || ref.len() == 0 {
				var d int64
				switch rng.IntN(8) {
				case 0, 1:
					d = rng.Int64N(4) // ties
				case 2:
					d = rng.Int64N(600) // same or next bucket
				case 3:
					d = rng.Int64N(50000)
				case 4:
					d = 600_000 + rng.Int64N(4)*256 // beyond the ring, ties there too
				case 5:
					// either side of the ring's edge, where ring and heap meet
					d = 523_000 + rng.Int64N(8)*200
				case 6:
					d = rng.Int64N(400_000) // sparse: the bitmap search goes far
				}
				c := eventClass(rng.IntN(3))
				q.push(now+d, c, int32(step))
				ref.push(now+d, c, int32(step))
				continue
			}
			a, b := q.pop(), ref.pop()
			if a != b {
				t.Fatalf("seed %d step %d: popped %+v, reference %+v", seed, step, a, b)
			}
			now = a.at()
			if q.len() != ref.len() {
				t.Fatalf("len %d, reference %d", q.len(), ref.len())
			}
		}
		if now < 4*ringSize<<bucketShift {
			t.Fatalf("seed %d: the run ended at %d µs, before the ring went round four times", seed, now)
		}
	}
}
