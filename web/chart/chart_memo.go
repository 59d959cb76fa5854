package chart

import (
	"encoding/json"

	"outlierlab/web/memo"
	"outlierlab/web/tabstate"
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
	chartCalls = memo.New[chartKey, string](64)
	ChartSteps = memo.New[chartStep, string](64)
	// chartOptionsAt are the charts' options by run and cursor: a playing
	// tab's next frame diffs from what its last frame built.
	ChartOptionsAt = memo.New[runCursor, map[string]json.RawMessage](16)
	labURLs        = memo.New[runCursor, string](64)
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
func ScriptAt(run *tabstate.Run, cursor int, replace bool) (string, error) {
	js, _, err := chartCalls.Get(chartKey{runCursor{run.Inputs.Key(), cursor}, replace}, func() (string, error) {
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
	return js, err
}

// chartsStepJS is the advanceCharts call that brings the page's charts
// from run at cursor from (what the connection sent last) to cursor to:
// a patch of the options (chart_patch.go), a few hundred bytes where the
// whole options are tens of kilobytes.
func StepScript(run *tabstate.Run, from, to int) (string, error) {
	js, _, err := ChartSteps.Get(chartStep{run.Inputs.Key(), from, to}, func() (string, error) {
		js, err := ChartPatch(optionsAt(run, from), optionsAt(run, to))
		if err != nil {
			return "", err
		}
		return "advanceCharts(" + string(js) + ")", nil
	})
	return js, err
}

// optionsAt is chartOptions, remembered.
func optionsAt(run *tabstate.Run, cursor int) map[string]json.RawMessage {
	o, _, _ := ChartOptionsAt.Get(runCursor{run.Inputs.Key(), cursor}, func() (map[string]json.RawMessage, error) {
		return Options(run, cursor), nil
	})
	return o
}

// permalink is labURL, remembered.
func Permalink(run *tabstate.Run, cursor int) string {
	u, _, _ := labURLs.Get(runCursor{run.Inputs.Key(), cursor}, func() (string, error) { return tabstate.LabURL(run, cursor), nil })
	return u
}
