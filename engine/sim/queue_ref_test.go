package sim

import "math/bits"

// refQueue is the calendar queue as it was before its buckets were kept
// sorted (commit 538ec65), kept as the reference the new queue must match
// event for event, ties included: the order of events at the same
// microsecond reaches the frames.
// refQueue is a calendar queue: a ring of 256 µs buckets covering the
// next half second, each an unsorted linked list of events in a node pool, plus a binary heap for events further out (timeouts, health
// checks). Nearly every event is a response a few milliseconds away, so a
// push is an O(1) link and a pop scans a bucket or two of one or two
// events. Nothing is allocated per event once the pool has grown to the
// run's peak of pending events.
type refQueue struct {
	heads [refRing]int32       // first node of each bucket, -1 when empty
	used  [refRing / 64]uint64 // bit per bucket: non-empty
	nodes []refNode
	free  int32 // free-list head, -1 when empty
	n     int   // events in the ring
	cur   int64 // bucket number (µs >> refShift) the ring starts at
	far   farHeap

	// the ring's minimum, cached between a topKey and the next change
	minOK   bool
	minNode int32
	minPrev int32 // node before minNode in its bucket, -1 if it is the head
	minKey  uint64
}

func newRefQueue() *refQueue {
	q := &refQueue{free: -1}
	for i := range q.heads {
		q.heads[i] = -1
	}
	return q
}

func (q *refQueue) len() int { return q.n + len(q.far.items) }

// push schedules an event at or after the last popped one; times beyond
// never are clamped so the key cannot overflow.
func (q *refQueue) push(at int64, c eventClass, idx int32) {
	at = min(at, never)
	e := event{key: eventKey(at, c), idx: idx}
	b := at >> refShift
	if b-q.cur >= refRing {
		q.far.push(e)
		return
	}
	ni := q.free
	if ni >= 0 {
		q.free = q.nodes[ni].next
	} else {
		q.nodes = append(q.nodes, refNode{})
		ni = int32(len(q.nodes) - 1)
	}
	slot := b & refMask
	q.nodes[ni] = refNode{e: e, next: q.heads[slot]}
	q.heads[slot] = ni
	q.used[slot>>6] |= 1 << (slot & 63)
	q.n++
	if q.minOK {
		switch {
		case e.key < q.minKey:
			q.minNode, q.minPrev, q.minKey = ni, -1, e.key
		case q.minPrev < 0 && slot == refBucketOf(q.minKey)&refMask:
			// The new node is now the head, in front of the cached minimum.
			q.minPrev = ni
		}
	}
}

// ringMin finds the ring's earliest event: the first non-empty bucket from
// cur on holds it, since every ring event's bucket is in [cur, cur+refRing).
// cur itself only moves when an event is popped: events are processed in
// time order, so nothing is pushed before the last popped event.
func (q *refQueue) ringMin() {
	if q.minOK || q.n == 0 {
		return
	}
	ni := q.heads[q.nextUsed(q.cur&refMask)]
	best, bestPrev, prev := ni, int32(-1), ni
	for ni = q.nodes[ni].next; ni >= 0; prev, ni = ni, q.nodes[ni].next {
		if q.nodes[ni].e.key < q.nodes[best].e.key {
			best, bestPrev = ni, prev
		}
	}
	q.minOK, q.minNode, q.minPrev, q.minKey = true, best, bestPrev, q.nodes[best].e.key
}

// nextUsed is the first non-empty slot at or after from, going round the
// ring; the ring must not be empty.
func (q *refQueue) nextUsed(from int64) int64 {
	w := from >> 6
	if m := q.used[w] >> (from & 63); m != 0 {
		return from + int64(bits.TrailingZeros64(m))
	}
	for i := int64(1); i <= refRing/64; i++ {
		wi := (w + i) & (refRing/64 - 1)
		if m := q.used[wi]; m != 0 {
			return wi<<6 + int64(bits.TrailingZeros64(m))
		}
	}
	panic("sim: empty event ring")
}

// topKey is the earliest event's key, or the largest key when empty.
func (q *refQueue) topKey() uint64 {
	k := ^uint64(0)
	if q.n > 0 {
		q.ringMin()
		k = q.minKey
	}
	if len(q.far.items) > 0 && q.far.items[0].key < k {
		k = q.far.items[0].key
	}
	return k
}

// pop removes and returns the earliest event; the queue must not be empty.
func (q *refQueue) pop() event {
	if q.n > 0 {
		q.ringMin()
		if len(q.far.items) == 0 || q.minKey <= q.far.items[0].key {
			ni := q.minNode
			e := q.nodes[ni].e
			q.cur = refBucketOf(e.key)
			if slot := q.cur & refMask; q.minPrev < 0 {
				q.heads[slot] = q.nodes[ni].next
				if q.heads[slot] < 0 {
					q.used[slot>>6] &^= 1 << (slot & 63)
				}
			} else {
				q.nodes[q.minPrev].next = q.nodes[ni].next
			}
			q.nodes[ni].next = q.free
			q.free = ni
			q.n--
			q.minOK = false
			return e
		}
	}
	// The far event is the earliest of all, so the ring's window may start
	// at its bucket.
	e := q.far.pop()
	if b := refBucketOf(e.key); b > q.cur {
		q.cur = b
	}
	return e
}

type refNode struct {
	e    event
	next int32
}

const (
	refShift = 8
	refRing  = 2048
	refMask  = refRing - 1
)

func refBucketOf(key uint64) int64 { return int64(key>>classBits) >> refShift }
