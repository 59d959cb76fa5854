package sim

import "math/bits"

// eventClass orders events that fall on the same microsecond. Envoy defines
// no order between a response and the interval timer in the same instant
// (envoy-semantics.md §15); outlierlab picks: attempt completions first,
// then retries leaving their backoff, then active health checks, then the
// detector's tick, then new requests. So every response that has arrived
// by the tick's instant is in the interval the tick judges, and a request
// arriving at the tick's instant already sees the tick's ejections. Events
// of one class at the same microsecond run in an order the queue fixes:
// deterministic, but not promised to be insertion order.
type eventClass uint8

const (
	classCompletion eventClass = iota
	classRetry
	classHealthCheck
	classTick
	classArrival
)

const classBits = 3

// event is one pending event: a completion or retry of request idx, or a
// health check of host idx. key packs the time (µs) above the class so one
// integer comparison orders events.
type event struct {
	key uint64
	idx int32
}

func (e event) at() int64         { return int64(e.key >> classBits) }
func (e event) class() eventClass { return eventClass(e.key & (1<<classBits - 1)) }

func eventKey(at int64, c eventClass) uint64 { return uint64(at)<<classBits | uint64(c) }

// never is later than any run ends (about 36 years in µs).
const never = int64(1) << 60

// eventQueue is a calendar queue: a ring of 256 µs buckets covering the
// next half second, each an unsorted linked list of events in a node pool, plus a binary heap for events further out (timeouts, health
// checks). Nearly every event is a response a few milliseconds away, so a
// push is an O(1) link and a pop scans a bucket or two of one or two
// events. Nothing is allocated per event once the pool has grown to the
// run's peak of pending events.
type eventQueue struct {
	heads [ringSize]int32       // first node of each bucket, -1 when empty
	used  [ringSize / 64]uint64 // bit per bucket: non-empty
	nodes []node
	free  int32 // free-list head, -1 when empty
	n     int   // events in the ring
	cur   int64 // bucket number (µs >> bucketShift) the ring starts at
	far   farHeap

	// the ring's minimum, cached between a topKey and the next change
	minOK   bool
	minNode int32
	minPrev int32 // node before minNode in its bucket, -1 if it is the head
	minKey  uint64
}

type node struct {
	e    event
	next int32
}

const (
	bucketShift = 8 // 256 µs per bucket
	ringSize    = 2048
	ringMask    = ringSize - 1
)

func newEventQueue() *eventQueue {
	q := &eventQueue{free: -1}
	for i := range q.heads {
		q.heads[i] = -1
	}
	return q
}

func (q *eventQueue) len() int { return q.n + len(q.far.items) }

// push schedules an event at or after the last popped one; times beyond
// never are clamped so the key cannot overflow.
func (q *eventQueue) push(at int64, c eventClass, idx int32) {
	at = min(at, never)
	e := event{key: eventKey(at, c), idx: idx}
	b := at >> bucketShift
	if b-q.cur >= ringSize {
		q.far.push(e)
		return
	}
	ni := q.free
	if ni >= 0 {
		q.free = q.nodes[ni].next
	} else {
		q.nodes = append(q.nodes, node{})
		ni = int32(len(q.nodes) - 1)
	}
	slot := b & ringMask
	q.nodes[ni] = node{e: e, next: q.heads[slot]}
	q.heads[slot] = ni
	q.used[slot>>6] |= 1 << (slot & 63)
	q.n++
	if q.minOK {
		switch {
		case e.key < q.minKey:
			q.minNode, q.minPrev, q.minKey = ni, -1, e.key
		case q.minPrev < 0 && slot == bucketOf(q.minKey)&ringMask:
			// The new node is now the head, in front of the cached minimum.
			q.minPrev = ni
		}
	}
}

func bucketOf(key uint64) int64 { return int64(key>>classBits) >> bucketShift }

// ringMin finds the ring's earliest event: the first non-empty bucket from
// cur on holds it, since every ring event's bucket is in [cur, cur+ringSize).
// cur itself only moves when an event is popped: events are processed in
// time order, so nothing is pushed before the last popped event.
func (q *eventQueue) ringMin() {
	if q.minOK || q.n == 0 {
		return
	}
	ni := q.heads[q.nextUsed(q.cur&ringMask)]
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
func (q *eventQueue) nextUsed(from int64) int64 {
	w := from >> 6
	if m := q.used[w] >> (from & 63); m != 0 {
		return from + int64(bits.TrailingZeros64(m))
	}
	for i := int64(1); i <= ringSize/64; i++ {
		wi := (w + i) & (ringSize/64 - 1)
		if m := q.used[wi]; m != 0 {
			return wi<<6 + int64(bits.TrailingZeros64(m))
		}
	}
	panic("sim: empty event ring")
}

// topKey is the earliest event's key, or the largest key when empty.
func (q *eventQueue) topKey() uint64 {
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
func (q *eventQueue) pop() event {
	if q.n > 0 {
		q.ringMin()
		if len(q.far.items) == 0 || q.minKey <= q.far.items[0].key {
			ni := q.minNode
			e := q.nodes[ni].e
			q.cur = bucketOf(e.key)
			if slot := q.cur & ringMask; q.minPrev < 0 {
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
	if b := bucketOf(e.key); b > q.cur {
		q.cur = b
	}
	return e
}

// farHeap is a binary min-heap on a slice for events beyond the ring.
type farHeap struct {
	items []event
}

func (h *farHeap) push(e event) {
	h.items = append(h.items, e)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if e.key >= h.items[p].key {
			break
		}
		h.items[i] = h.items[p]
		i = p
	}
	h.items[i] = e
}

func (h *farHeap) pop() event {
	items := h.items
	top := items[0]
	n := len(items) - 1
	last := items[n]
	items = items[:n]
	h.items = items
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && items[r].key < items[c].key {
			c = r
		}
		if last.key <= items[c].key {
			break
		}
		items[i] = items[c]
		i = c
	}
	items[i] = last
	return top
}
