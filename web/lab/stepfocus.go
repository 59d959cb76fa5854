package lab

import (
	"slices"
	"strings"

	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// A lesson page shows what its current step is about (issue 38, one idea
// per step on one screen): the step's controls and charts, its key chart
// first; the others stay on the page, one click away ("All settings",
// "All charts"), never removed. The current step is the page's local
// signal _now (a step id), set by the step list's buttons and by
// js/lesson.js (the first step not done, the prediction's step when the
// run stops for it, the c key); _allset and _allcharts are the two
// toggles. All three start with "_", so no command posts them, and the
// page declares them (lessonSignals): an expression reading a signal the
// page lacks makes Datastar create it (commit 47c83d2).
const (
	sigNow       = "$_now"
	sigAllSet    = "$_allset"
	sigAllCharts = "$_allcharts"
)

// stepFocus is, for each control and chart, the steps that are about it,
// and for each chart the steps it is the key chart of.
type stepFocus struct {
	first                  string
	controls, charts, keys map[string][]string
}

func focusOf(d *lessonbook.Doc) stepFocus {
	f := stepFocus{controls: map[string][]string{}, charts: map[string][]string{}, keys: map[string][]string{}}
	for i, st := range d.Steps {
		if i == 0 {
			f.first = st.ID
		}
		// A lesson may name a control by another of its setting's names
		// (retries, lb); the page's controls go by the catalog's
		// (num_retries, lb_policy): keyed by the lesson's, the controls a
		// step asks for were folded away while it was current.
		for _, c := range st.Controls {
			if ctl := tabstate.LookupControl(c); ctl != nil {
				c = ctl.Name
			}
			f.controls[c] = append(f.controls[c], st.ID)
		}
		for j, c := range st.Charts {
			f.charts[c] = append(f.charts[c], st.ID)
			if j == 0 {
				f.keys[c] = append(f.keys[c], st.ID)
			}
		}
	}
	return f
}

// nowIn is the expression "the current step is one of steps".
func nowIn(steps []string) string {
	terms := make([]string, len(steps))
	for i, s := range steps {
		terms[i] = sigNow + " === '" + s + "'"
	}
	return strings.Join(terms, " || ")
}

// orNow is toggle, or the current step is one of steps.
func orNow(toggle string, steps []string) string {
	if len(steps) == 0 {
		return toggle
	}
	return toggle + " || " + nowIn(steps)
}

// control keeps v in view while a step about it is current, or all
// settings.
func (f stepFocus) control(v *view.Control, name string) {
	steps := f.controls[name]
	v.Focus = orNow(sigAllSet, steps)
	v.Unfocused = !slices.Contains(steps, f.first)
}

// box keeps b in view while a step about it is current, or all charts,
// and makes it the key chart while a step it is key to is current. The
// focus is a class (off-step), not a data-show: a box the run keeps out
// (the mesh's, chart.Only) keeps its own data-show, and the projector
// view, which shows every chart, ignores the class.
func (f stepFocus) box(b *view.Chart) {
	steps := f.charts[b.ID]
	b.Focus = orNow(sigAllCharts, steps)
	b.Unfocused = !slices.Contains(steps, f.first)
	if keys := f.keys[b.ID]; len(keys) > 0 {
		b.Key = nowIn(keys)
		b.IsKey = slices.Contains(keys, f.first)
	}
}
