package sim

// eventClass orders events that fall on the same microsecond. Envoy defines
// no order between a response and the interval timer in the same instant
// (envoy-semantics.md §15); outlierlab picks: attempt completions first,
// then retries leaving their backoff, then active health checks, then the
// detector's tick, then new requests. So every response that has arrived
// by the tick's instant is in the interval the tick judges, and a request
// arriving at the tick's instant already sees the tick's ejections.
type eventClass uint8

const (
	classCompletion eventClass = iota
	classRetry
	classHealthCheck
	classTick
	classArrival
)

// event is one pending event: a completion or retry of request idx, or a
// health check of host idx. ord packs the class above a sequence number so
// that one integer comparison gives (class, insertion order).
type event struct {
	at  int64 // µs
	ord uint64
	idx int32
}

func (e event) class() eventClass { return eventClass(e.ord >> 56) }

func (e event) before(o event) bool {
	return e.at < o.at || (e.at == o.at && e.ord < o.ord)
}

// eventQueue is a binary min-heap on a slice: no allocation per event once
// the slice has grown to the run's peak number of pending events.
type eventQueue struct {
	items []event
	seq   uint64
}

func (q *eventQueue) push(at int64, c eventClass, idx int32) {
	q.seq++
	e := event{at: at, ord: uint64(c)<<56 | q.seq, idx: idx}
	q.items = append(q.items, e)
	// sift up
	i := len(q.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(q.items[p]) {
			break
		}
		q.items[i] = q.items[p]
		i = p
	}
	q.items[i] = e
}

func (q *eventQueue) len() int { return len(q.items) }

func (q *eventQueue) top() event { return q.items[0] }

func (q *eventQueue) pop() event {
	top := q.items[0]
	n := len(q.items) - 1
	last := q.items[n]
	q.items = q.items[:n]
	if n == 0 {
		return top
	}
	// sift down
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && q.items[r].before(q.items[l]) {
			c = r
		}
		if !q.items[c].before(last) {
			break
		}
		q.items[i] = q.items[c]
		i = c
	}
	q.items[i] = last
	return top
}
