package chart

import (
	"encoding/json"

	"outlierlab/web/memo"
	"outlierlab/web/tabstate"
)

// Scripts is the lab's memo of what a redraw computes from a run and a
// cursor alone.
//
// A room's followers on one replica are all at the same run and cursor
// after each of the instructor's moves. What their streams compute from
// the run and the cursor alone (the charts' options, the biggest part of a
// redraw to build, and the permalink) is built once for all of them, not
// once per stream. A run is a function of its inputs, so an entry (keyed
// by the inputs, not the run, which it would keep in memory) never goes
// stale; the memos are small and bounded, and a tab alone pays only a map
// insert more than before. The lab holds one Scripts and gives it to
// every stream (a package-global memo would be shared by every lab a
// process builds, tests' too).
type Scripts struct {
	calls *memo.Cache[chartKey, string]
	steps *memo.Cache[chartStep, string]
	urls  *memo.Cache[runCursor, string]
}

// NewScripts is an empty Scripts of 64 entries of each kind.
func NewScripts() *Scripts {
	return &Scripts{
		calls: memo.New[chartKey, string](64),
		steps: memo.New[chartStep, string](64),
		urls:  memo.New[runCursor, string](64),
	}
}

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

// At is the applyCharts call that brings the page's charts to run at
// cursor: every chart's option, merged into the old ones, or with replace
// dropping them first and sizing the boxes that follow the run.
func (m *Scripts) At(run *tabstate.Run, cursor int, replace bool) (string, error) {
	js, _, err := m.calls.Get(chartKey{runCursor{run.Inputs.Key(), cursor}, replace}, func() (string, error) {
		b, err := json.Marshal(Options(run, cursor))
		if err != nil {
			return "", err
		}
		if !replace {
			return "applyCharts(" + string(b) + ")", nil
		}
		h, _ := json.Marshal(chartHeights(run))
		return "applyCharts(" + string(b) + ",true," + string(h) + ")", nil
	})
	return js, err
}

// Step is the advanceCharts call that brings the page's charts
// from run at cursor from (what the connection sent last) to cursor to:
// a patch of the options (chart_patch.go), a few hundred bytes where the
// whole options are tens of kilobytes. Forward it is built from what the
// frames add (chart_step.go); back, from both whole options.
func (m *Scripts) Step(run *tabstate.Run, from, to int) (string, error) {
	js, _, err := m.steps.Get(chartStep{run.Inputs.Key(), from, to}, func() (string, error) {
		var js []byte
		var err error
		if from <= to {
			js, err = StepPatch(run, from, to)
		} else {
			js, err = ChartPatch(Options(run, from), Options(run, to))
		}
		if err != nil {
			return "", err
		}
		return "advanceCharts(" + string(js) + ")", nil
	})
	return js, err
}

// Permalink is tabstate.LabURL, remembered.
func (m *Scripts) Permalink(run *tabstate.Run, cursor int) string {
	u, _, _ := m.urls.Get(runCursor{run.Inputs.Key(), cursor}, func() (string, error) { return tabstate.LabURL(run, cursor), nil })
	return u
}
