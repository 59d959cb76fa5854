// Package memo is the web layer's one cache: a bounded map whose values
// are made once. Tabs with the same inputs (a room's fifty laptops on one
// preset) ask for the same run, chart options or sweep at the same moment;
// the first caller builds it and the others wait for that build instead of
// each repeating it (single flight). The map forgets its least recently
// used values past a count and, optionally, a cost (bytes).
package memo

import (
	"container/list"
	"fmt"
	"sync"
)

// Cache maps K to V. The zero value is not usable; make one with New.
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	max      int
	maxCost  int
	cost     func(V) int // nil: every value costs 0
	total    int
	order    *list.List // front: most recent; values are *entry[K, V]
	byKey    map[K]*list.Element
	inflight map[K]*call[V]
}

type entry[K comparable, V any] struct {
	key  K
	v    V
	cost int
}

// call is a build in progress: done is closed once v and err are set.
type call[V any] struct {
	done chan struct{}
	v    V
	err  error
}

// New is a cache of at most max values (at least one is always kept).
func New[K comparable, V any](max int) *Cache[K, V] {
	return &Cache[K, V]{max: max, order: list.New(), byKey: map[K]*list.Element{}, inflight: map[K]*call[V]{}}
}

// WithCost bounds the sum of cost(v) over the values kept by maxCost too.
func (c *Cache[K, V]) WithCost(maxCost int, cost func(V) int) *Cache[K, V] {
	c.maxCost, c.cost = maxCost, cost
	return c
}

// PanicError is what the callers waiting on a build get when it panicked;
// the builder's own goroutine panics on, to its recoverer.
type PanicError struct{ Value any }

func (e *PanicError) Error() string { return fmt.Sprintf("memo: the build panicked: %v", e.Value) }

// Get is the value for k and whether it was kept already; on a miss build
// makes it, once however many callers ask meanwhile. A failed build is not
// kept: the next Get tries again. A build that panics releases its
// waiters with a *PanicError, so that one bad value never stalls every
// later stream that asks for it.
func (c *Cache[K, V]) Get(k K, build func() (V, error)) (v V, hit bool, err error) {
	c.mu.Lock()
	if el, ok := c.byKey[k]; ok {
		c.order.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*entry[K, V]).v, true, nil
	}
	if cl, ok := c.inflight[k]; ok {
		c.mu.Unlock()
		<-cl.done
		return cl.v, false, cl.err
	}
	cl := &call[V]{done: make(chan struct{})}
	c.inflight[k] = cl
	c.mu.Unlock()

	finished := false
	defer func() {
		if !finished {
			cl.err = &PanicError{recover()}
			c.finish(k, cl)
			panic(cl.err)
		}
	}()
	cl.v, cl.err = build()
	finished = true
	c.finish(k, cl)
	return cl.v, false, cl.err
}

// finish keeps a build's value (when it has one) and releases its waiters.
func (c *Cache[K, V]) finish(k K, cl *call[V]) {
	c.mu.Lock()
	delete(c.inflight, k)
	if cl.err == nil {
		c.keep(k, cl.v)
	}
	c.mu.Unlock()
	close(cl.done)
}

// keep adds a value and forgets the oldest past the bounds; c.mu is held.
func (c *Cache[K, V]) keep(k K, v V) {
	if el, ok := c.byKey[k]; ok { // Put raced a build
		c.order.MoveToFront(el)
		return
	}
	e := &entry[K, V]{key: k, v: v}
	if c.cost != nil {
		e.cost = c.cost(v)
	}
	c.byKey[k] = c.order.PushFront(e)
	c.total += e.cost
	for c.order.Len() > 1 && (c.order.Len() > c.max || (c.maxCost > 0 && c.total > c.maxCost)) {
		old := c.order.Remove(c.order.Back()).(*entry[K, V])
		delete(c.byKey, old.key)
		c.total -= old.cost
	}
}

// Put keeps v for k (a value made elsewhere, such as a streamed sweep).
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keep(k, v)
}

// Peek is the value kept for k, if any, without building it.
func (c *Cache[K, V]) Peek(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*entry[K, V]).v, true
	}
	var zero V
	return zero, false
}

// Has says whether a value is kept for k; it does not count as a use.
func (c *Cache[K, V]) Has(k K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byKey[k]
	return ok
}

// Cost is the sum of the kept values' costs.
func (c *Cache[K, V]) Cost() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Clear forgets every value kept (benchmarks measure the work it spares).
func (c *Cache[K, V]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.byKey)
	c.order.Init()
	c.total = 0
}

// Len is the number of values kept.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
