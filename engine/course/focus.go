package course

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Charts are the ids of the lab's charts a step can name in its charts:
// list (web/chart's List, in its page order; a test in web/lab holds the
// two lists equal). They live here because the course is validated
// without the web (lessons -check), and the engine imports nothing above
// it.
var Charts = []string{
	"chart-sr",       // Success rate per host
	"chart-lanes",    // Ejections
	"chart-compare",  // Envoy and gRPC, same traffic (a compare_strip lesson's)
	"chart-mesh",     // Ejected by k of N clients (a mesh run's)
	"chart-volume",   // Requests per host, as one client's detector counts them
	"chart-clients",  // What clients saw
	"chart-share",    // Traffic share
	"chart-counters", // Detector counters
}

// Figures are the small figures a step can name in its figure: field,
// each drawn by the web from the engine's frames: streaks is each host's
// consecutive 5xx counter against consecutive_5xx (the frame's
// Consecutive5xx and Peak5xx).
var Figures = []string{FigureStreaks}

// FigureStreaks is the per-host consecutive-5xx counter.
const FigureStreaks = "streaks"

// ChartCompare is the Envoy-and-gRPC strip's id: a step may name it only
// in a lesson that shows the strip (compare_strip).
const ChartCompare = "chart-compare"

// ControlNames are the controls a lesson's page shows, by setting name:
// its own controls, then any setting a step asks for that they miss (a
// step that says "set the cap to 50" needs the cap; so does a setting
// check), in that order, each once.
func (l *Lesson) ControlNames() []string {
	names := slices.Clone(l.Controls)
	for _, s := range l.Steps {
		names = append(names, slices.Sorted(maps.Keys(s.Settings))...)
		names = append(names, s.Check.SettingNames()...)
	}
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// validateFocus checks what a step is about (issue 38, one idea per
// step): its charts, the key chart first, each a chart of the lab's, and
// its controls, each one the lesson's page shows (ControlNames). The
// page shows these while the step is current and folds the others away.
func (l *Lesson) validateFocus(s *Step, where string) error {
	if len(s.Charts) == 0 {
		return fmt.Errorf("%s.charts: missing (the charts the step is about, its key chart first: %s)", where, strings.Join(Charts, ", "))
	}
	for i, c := range s.Charts {
		switch {
		case !slices.Contains(Charts, c):
			return fmt.Errorf("%s.charts[%d]: unknown chart %q (charts: %s)", where, i, c, strings.Join(Charts, ", "))
		case slices.Contains(s.Charts[:i], c):
			return fmt.Errorf("%s.charts[%d]: %q is listed twice", where, i, c)
		case c == ChartCompare && !l.CompareStrip:
			return fmt.Errorf("%s.charts[%d]: %q shows only in a lesson with compare_strip: true", where, i, c)
		}
	}
	if s.Figure != "" && !slices.Contains(Figures, s.Figure) {
		return fmt.Errorf("%s.figure: unknown figure %q (figures: %s)", where, s.Figure, strings.Join(Figures, ", "))
	}
	shown := l.ControlNames()
	for i, c := range s.Controls {
		switch {
		case !slices.Contains(shown, c):
			return fmt.Errorf("%s.controls[%d]: %q is not a control of the lesson (its controls, or a setting a step sets or checks: %s)", where, i, c, strings.Join(shown, ", "))
		case slices.Contains(s.Controls[:i], c):
			return fmt.Errorf("%s.controls[%d]: %q is listed twice", where, i, c)
		}
	}
	return nil
}
