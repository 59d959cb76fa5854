package web

import (
	"encoding/json"
	"sync"
)

// A room's followers on one replica are all at the same run and cursor
// after each of the instructor's moves. What their streams compute from
// the run and the cursor alone (the charts' options, the biggest part of a
// redraw to build, and the permalink) is built once for all of them, not
// once per stream. Runs are immutable, so an entry never goes stale; the
// memos are small and bounded, and a tab alone pays only a map insert more
// than before.
var (
	chartCalls = newMemo[chartKey, string](64)
	labURLs    = newMemo[runCursor, string](64)
)

type runCursor struct {
	run    *Run
	cursor int
}

type chartKey struct {
	runCursor
	replace bool
}

// chartsJS is the applyCharts call that brings the page's charts to run at
// cursor: every chart's option, merged into the old ones, or with replace
// dropping them first and sizing the boxes that follow the run.
func chartsJS(run *Run, cursor int, replace bool) (string, error) {
	return chartCalls.get(chartKey{runCursor{run, cursor}, replace}, func() (string, error) {
		b, err := json.Marshal(chartOptions(run, cursor))
		if err != nil {
			return "", err
		}
		if !replace {
			return "applyCharts(" + string(b) + ")", nil
		}
		h, _ := json.Marshal(chartHeights(run))
		return "applyCharts(" + string(b) + ",true," + string(h) + ")", nil
	})
}

// permalink is labURL, remembered.
func permalink(run *Run, cursor int) string {
	u, _ := labURLs.get(runCursor{run, cursor}, func() (string, error) { return labURL(run, cursor), nil })
	return u
}

// memo is a small map that forgets its oldest entries.
type memo[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	byKey map[K]V
	order []K // oldest first
}

func newMemo[K comparable, V any](max int) *memo[K, V] {
	return &memo[K, V]{max: max, byKey: map[K]V{}}
}

// get is the value for k, made by make the first time (outside the lock:
// two streams missing at once both make it, and neither waits).
func (m *memo[K, V]) get(k K, make func() (V, error)) (V, error) {
	m.mu.Lock()
	v, ok := m.byKey[k]
	m.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := make()
	if err != nil {
		return v, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byKey[k]; !ok {
		m.byKey[k] = v
		m.order = append(m.order, k)
		if len(m.order) > m.max {
			delete(m.byKey, m.order[0])
			m.order = m.order[1:]
		}
	}
	return v, nil
}
