package web

import (
	"encoding/json"
	"sync"
)

// A room's followers on one replica are all at the same run and cursor
// after each of the instructor's moves. What their streams compute from
// the run and the cursor alone (the charts' options, the biggest part of a
// redraw to build, and the permalink) is built once for all of them, not
// once per stream. A run is a function of its inputs, so an entry (keyed
// by the inputs, not the run, which it would keep in memory) never goes
// stale; the memos are small and bounded, and a tab alone pays only a map
// insert more than before.
var (
	chartCalls = newMemo[chartKey, string](64)
	chartSteps = newMemo[chartStep, string](64)
	// chartOptionsAt are the charts' options by run and cursor: a playing
	// tab's next frame diffs from what its last frame built.
	chartOptionsAt = newMemo[runCursor, map[string]json.RawMessage](16)
	labURLs        = newMemo[runCursor, string](64)
)

type runCursor struct {
	inputs string // the run's Inputs.key()
	cursor int
}

// chartStep is a played step: the charts from one cursor to a later one.
type chartStep struct {
	inputs   string
	from, to int
}

type chartKey struct {
	runCursor
	replace bool
}

// chartsJS is the applyCharts call that brings the page's charts to run at
// cursor: every chart's option, merged into the old ones, or with replace
// dropping them first and sizing the boxes that follow the run.
func chartsJS(run *Run, cursor int, replace bool) (string, error) {
	return chartCalls.get(chartKey{runCursor{run.Inputs.key(), cursor}, replace}, func() (string, error) {
		b, err := json.Marshal(optionsAt(run, cursor)) // the next frame's patch starts from these
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

// chartsStepJS is the advanceCharts call that brings the page's charts
// from run at cursor from (what the connection sent last) to cursor to:
// a patch of the options (chart_patch.go), a few hundred bytes where the
// whole options are tens of kilobytes.
func chartsStepJS(run *Run, from, to int) (string, error) {
	return chartSteps.get(chartStep{run.Inputs.key(), from, to}, func() (string, error) {
		js, err := chartPatch(optionsAt(run, from), optionsAt(run, to))
		if err != nil {
			return "", err
		}
		return "advanceCharts(" + string(js) + ")", nil
	})
}

// optionsAt is chartOptions, remembered.
func optionsAt(run *Run, cursor int) map[string]json.RawMessage {
	o, _ := chartOptionsAt.get(runCursor{run.Inputs.key(), cursor}, func() (map[string]json.RawMessage, error) {
		return chartOptions(run, cursor), nil
	})
	return o
}

// permalink is labURL, remembered.
func permalink(run *Run, cursor int) string {
	u, _ := labURLs.get(runCursor{run.Inputs.key(), cursor}, func() (string, error) { return labURL(run, cursor), nil })
	return u
}

// memo is a small map that forgets its oldest entries. A value is made
// once: streams that ask for it while it is being made wait for it (a
// room's hundred followers wake at once, and each making it would be a
// hundred times the work).
type memo[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	byKey map[K]*memoEntry[V]
	order []K // oldest first
}

type memoEntry[V any] struct {
	done chan struct{} // closed once v and err are set
	v    V
	err  error
}

func newMemo[K comparable, V any](max int) *memo[K, V] {
	return &memo[K, V]{max: max, byKey: map[K]*memoEntry[V]{}}
}

// get is the value for k, made by build the first time. A failure is not
// kept: the next call tries again.
func (m *memo[K, V]) get(k K, build func() (V, error)) (V, error) {
	m.mu.Lock()
	if e, ok := m.byKey[k]; ok {
		m.mu.Unlock()
		<-e.done
		return e.v, e.err
	}
	e := &memoEntry[V]{done: make(chan struct{})}
	m.byKey[k] = e
	m.order = append(m.order, k)
	if len(m.order) > m.max {
		delete(m.byKey, m.order[0])
		m.order = m.order[1:]
	}
	m.mu.Unlock()
	e.v, e.err = build()
	close(e.done)
	if e.err != nil {
		m.mu.Lock()
		if m.byKey[k] == e {
			delete(m.byKey, k)
		}
		m.mu.Unlock()
	}
	return e.v, e.err
}
