package sim

// eventClass orders events that fall on the same microsecond. Envoy defines
// no order between a response and the interval timer in the same instant
// (envoy-semantics.md §15); outlierlab picks: attempt completions first,
// then retries leaving their backoff, then active health checks, then the
// detector's tick, then new requests. So every response that has arrived
// by the tick's instant is in the interval the tick judges, and a request
// arriving at the tick's instant already sees the tick's ejections. Events
// of one class at the same microsecond run in an order the heap fixes:
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

// eventQueue is a binary min-heap on a slice: no allocation per event once
// the slice has grown to the run's peak number of pending events.
type eventQueue struct {
	items []event
}

// push schedules an event; times beyond never (the end of any run) are
// clamped so the key cannot overflow.
func (q *eventQueue) push(at int64, c eventClass, idx int32) {
	e := event{key: eventKey(min(at, never), c), idx: idx}
	q.items = append(q.items, e)
	i := len(q.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if e.key >= q.items[p].key {
			break
		}
		q.items[i] = q.items[p]
		i = p
	}
	q.items[i] = e
}

// never is later than any run ends (about 36 years in µs).
const never = int64(1) << 60

func (q *eventQueue) len() int { return len(q.items) }

// topKey is the head's key, or the largest key when empty.
func (q *eventQueue) topKey() uint64 {
	if len(q.items) == 0 {
		return ^uint64(0)
	}
	return q.items[0].key
}

func (q *eventQueue) pop() event {
	items := q.items
	top := items[0]
	n := len(items) - 1
	last := items[n]
	items = items[:n]
	q.items = items
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
