package web

import (
	"encoding/json"
	"sync"
)

// chartCalls remembers the last applyCharts calls the streams sent, by
// run, cursor and kind. A room's followers on one replica are all at the
// same run and cursor after each of the instructor's moves: the options
// (the biggest part of a redraw to compute) are built once for all of
// them, not once per stream. Runs are immutable, so a call never goes
// stale; the memo is small and bounded, and a tab alone pays only a map
// insert more than before.
var chartCalls = &chartMemo{max: 64, byKey: map[chartKey]string{}}

type chartKey struct {
	run     *Run
	cursor  int
	replace bool
}

type chartMemo struct {
	mu    sync.Mutex
	max   int
	byKey map[chartKey]string
	order []chartKey // oldest first
}

// js is the applyCharts call that brings the page's charts to run at
// cursor: every chart's option, merged into the old ones, or with replace
// dropping them first and sizing the boxes that follow the run.
func (m *chartMemo) js(run *Run, cursor int, replace bool) (string, error) {
	k := chartKey{run, cursor, replace}
	m.mu.Lock()
	js, ok := m.byKey[k]
	m.mu.Unlock()
	if ok {
		return js, nil
	}
	b, err := json.Marshal(chartOptions(run, cursor))
	if err != nil {
		return "", err
	}
	js = "applyCharts(" + string(b) + ")"
	if replace {
		h, _ := json.Marshal(chartHeights(run))
		js = "applyCharts(" + string(b) + ",true," + string(h) + ")"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byKey[k]; !ok {
		m.byKey[k] = js
		m.order = append(m.order, k)
		if len(m.order) > m.max {
			delete(m.byKey, m.order[0])
			m.order = m.order[1:]
		}
	}
	return js, nil
}
