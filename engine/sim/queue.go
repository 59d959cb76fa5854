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

// eventQueue is a calendar queue: a ring of 64 µs buckets covering the
// next half second, each an unsorted linked list of events in a node pool,
// plus a binary heap for events further out (timeouts, health checks).
// Nearly every event is a response a few milliseconds away, so a push is an
// O(1) link and a pop takes a bucket of one event, found through a
// two-level occupancy bitmap. Nothing is allocated per event once the pool
// has grown to the run's peak of pending events.
//
// Events with the same key reach the frames in the order this queue pops
// them, so that order is part of the contract (TestEventQueueMatchesReference
// holds it to the 256 µs queue it replaced): a bucket lists its events
// newest first, the earliest is the first of its key in that list, and once
// found it stays the one to pop until it is popped or an earlier event is
// pushed; the far heap takes exactly the events the 256 µs ring could not
// hold, and loses ties to the ring.
//
// The simulator's event loop (runUntil) writes out push, popRing and
// ringMin's common case; TestEventLoopMatchesReference holds its copies to
// these methods.
type eventQueue struct {
	// the ring's minimum, cached from a topKey or pop until the next ring pop
	minOK   bool
	minNode int32
	minPrev int32 // node before minNode in its bucket, -1 if it is the head
	minKey  uint64
	farKey  uint64 // the far heap's earliest key, ^0 when it is empty
	n       int    // events in the ring
	cur     int64  // bucket number (µs >> bucketShift) the ring starts at
	free    int32  // free-list head, -1 when empty
	nodes   []node
	words   [ringSize / 64 / 64]uint64 // bit per word of used: non-zero
	used    [ringSize / 64]uint64      // bit per bucket: non-empty
	heads   [ringSize]int32            // first node of each bucket, -1 when empty
	far     farHeap
	// farPushes counts the events that went to the far heap (Work:
	// each costs a heap's log n where the ring costs a link).
	farPushes uint64
}

type node struct {
	key  uint64
	idx  int32
	next int32
}

const (
	// Which events go to the far heap is decided on 256 µs steps and a
	// 2048-step window, as it was when the ring had 256 µs buckets: where
	// an event waits decides its order among equal keys.
	farShift  = 8
	farWindow = 2048
	// The ring itself is finer, so a bucket rarely holds two events; it
	// spans the same half second, so it holds every event the rule admits.
	bucketShift = 6 // 64 µs per bucket
	ringSize    = farWindow << (farShift - bucketShift)
	ringMask    = ringSize - 1
)

func newEventQueue() *eventQueue {
	q := &eventQueue{free: -1, farKey: ^uint64(0)}
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
	key := eventKey(at, c)
	if at>>farShift-q.cur>>(farShift-bucketShift) >= farWindow {
		q.pushFar(event{key: key, idx: idx})
		return
	}
	ni := q.free
	if ni < 0 {
		ni = q.grow()
	}
	nd := &q.nodes[ni]
	q.free = nd.next
	slot := (at >> bucketShift) & ringMask
	head := q.heads[slot]
	*nd = node{key: key, idx: idx, next: head}
	q.heads[slot] = ni
	if head < 0 {
		q.setUsed(slot)
	}
	q.n++
	if q.minOK {
		if key < q.minKey {
			q.minNode, q.minPrev, q.minKey = ni, -1, key
		} else if head == q.minNode && q.minPrev < 0 {
			// The new node is now the head, in front of the cached minimum.
			q.minPrev = ni
		}
	}
}

// grow adds a node to the pool and puts it on the free list.
func (q *eventQueue) grow() int32 {
	q.nodes = append(q.nodes, node{next: -1})
	q.free = int32(len(q.nodes) - 1)
	return q.free
}

func (q *eventQueue) pushFar(e event) {
	q.farPushes++
	q.far.push(e)
	q.farKey = q.far.items[0].key
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
	nodes := q.nodes
	ni := q.heads[q.nextUsed(q.cur&ringMask)]
	best, bestPrev, bestKey := ni, int32(-1), nodes[ni].key
	for prev, ni := ni, nodes[ni].next; ni >= 0; prev, ni = ni, nodes[ni].next {
		if k := nodes[ni].key; k < bestKey {
			best, bestPrev, bestKey = ni, prev, k
		}
	}
	q.minOK, q.minNode, q.minPrev, q.minKey = true, best, bestPrev, bestKey
}

// nextUsed is the first non-empty slot at or after from, going round the
// ring; the ring must not be empty.
func (q *eventQueue) nextUsed(from int64) int64 {
	w := from >> 6
	if m := q.used[w] >> (from & 63); m != 0 {
		return from + int64(bits.TrailingZeros64(m))
	}
	// The first non-zero word after w, going round, through the summary.
	const nw = int64(len(q.words))
	w1 := (w + 1) & (ringSize/64 - 1)
	sw := w1 >> 6
	m := q.words[sw] & (^uint64(0) << (w1 & 63))
	for i := 0; m == 0; i++ {
		if i > int(nw) {
			panic("sim: empty event ring")
		}
		sw = (sw + 1) & (nw - 1)
		m = q.words[sw]
	}
	wi := sw<<6 + int64(bits.TrailingZeros64(m))
	return wi<<6 + int64(bits.TrailingZeros64(q.used[wi]))
}

// topKey is the earliest event's key, or the largest key when empty.
func (q *eventQueue) topKey() uint64 {
	if !q.minOK {
		q.ringMin()
		if !q.minOK {
			return q.farKey
		}
	}
	return min(q.minKey, q.farKey)
}

// pop removes and returns the earliest event; the queue must not be empty.
func (q *eventQueue) pop() event {
	q.ringMin()
	if q.minOK && q.minKey <= q.farKey {
		return q.popRing()
	}
	return q.popFar()
}

// popRing removes the ring's minimum; ringMin must have found it.
func (q *eventQueue) popRing() event {
	ni := q.minNode
	nd := &q.nodes[ni]
	e := event{key: nd.key, idx: nd.idx}
	q.cur = bucketOf(e.key)
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
	return e
}

// setUsed marks a bucket that was empty.
func (q *eventQueue) setUsed(slot int64) {
	q.used[slot>>6] |= 1 << (slot & 63)
	q.words[slot>>12] |= 1 << ((slot >> 6) & 63)
}

// clearUsed marks an emptied bucket.
func (q *eventQueue) clearUsed(slot int64) {
	w := slot >> 6
	if q.used[w] &^= 1 << (slot & 63); q.used[w] == 0 {
		q.words[w>>6] &^= 1 << (w & 63)
	}
}

// popFar removes the far heap's earliest event, the earliest of all: the
// ring's window may start at its bucket.
func (q *eventQueue) popFar() event {
	e := q.far.pop()
	q.farKey = ^uint64(0)
	if len(q.far.items) > 0 {
		q.farKey = q.far.items[0].key
	}
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
