package web

import (
	"sort"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
)

// Chart markers put the story on every chart's time axis: the scenario's
// fault windows shaded, and a vertical line where a fault was injected,
// where hosts were ejected and where the cap refused an ejection
// (overflow). They ride on one extra series per chart, "events", whose
// legend entry shows or hides them all; each marker names itself in its
// tooltip. Markers appear as the cursor reaches them, like the data.

// eventsSeries is the markers' series name and legend entry.
const eventsSeries = "events"

const (
	colorFault    = "rgba(110, 110, 110, 0.14)"
	colorInjected = "#222222"
)

// dashDot is the injection lines' dash: neither the mean's dots nor the
// threshold's dashes.
var dashDot = []int{8, 4, 2, 4}

// markTime is the axis label where a moment shows: the tick of the first
// interval that ends at or after it.
func markTime(r *Run, ms int64) (string, int) {
	k := sort.Search(len(r.Frames), func(i int) bool { return r.Frames[i].TMs >= ms })
	if k == len(r.Frames) {
		return "", k
	}
	return r.Times[k], k
}

// markers is the events series for the frames shown: a line series with
// no data of its own, its markLine and markArea holding the markers.
func markers(r *Run, frames []scenario.Frame) map[string]any {
	return map[string]any{
		"name": eventsSeries, "type": "line", "data": []any{},
		"itemStyle": map[string]any{"color": colorEjected},
		"lineStyle": map[string]any{"color": colorEjected, "width": 2},
		"tooltip":   map[string]any{"trigger": "item"},
		"markLine": map[string]any{
			"symbol": []string{"none", "none"}, "silent": false, "animation": false,
			"label": map[string]any{"show": false},
			"data":  markLines(r, frames),
		},
		"markArea": map[string]any{
			"silent": true, "animation": false,
			"itemStyle": map[string]any{"color": colorFault},
			"label":     map[string]any{"show": true, "position": "insideTopLeft", "color": colorText, "fontSize": fontSize - 2},
			"data":      faultAreas(r, frames),
		},
	}
}

// faultAreas shades the scenario's own fault windows (injected faults are
// lines) from their start to their end, or to the cursor while they last.
func faultAreas(r *Run, frames []scenario.Frame) []any {
	injected := map[string]bool{}
	for _, in := range r.Scenario.Injections {
		injected[in.Fault.Label] = true
	}
	var out []any
	for _, f := range r.Scenario.Cluster.Faults {
		from, k := markTime(r, f.From.Milliseconds())
		if injected[f.Label] || k >= len(frames) {
			continue
		}
		last := len(frames) - 1
		if f.Until > 0 {
			if _, j := markTime(r, f.Until.Milliseconds()); j < last {
				last = j
			}
		}
		out = append(out, []map[string]any{
			{"name": "fault: " + f.Label, "xAxis": from},
			{"xAxis": r.Times[last]},
		})
	}
	return out
}

// markLines are the injections, ejections and overflows so far, one line
// per tick and kind, naming its hosts.
func markLines(r *Run, frames []scenario.Frame) []any {
	var out []any
	for _, in := range r.Scenario.Injections {
		if at, k := markTime(r, in.At.Milliseconds()); k < len(frames) {
			out = append(out, markLine(at, "injected: h"+itoa(in.Host), colorInjected, dashDot, 2))
		}
	}
	for i := range frames {
		var ej, ov []string
		for _, e := range frames[i].Events {
			switch e.Kind {
			case engine.EventEject:
				ej = appendOnce(ej, e.Host)
			case engine.EventOverflow:
				ov = appendOnce(ov, e.Host)
			}
		}
		if len(ej) > 0 {
			out = append(out, markLine(r.Times[i], "ejected: "+strings.Join(ej, ", "), colorEjected, "solid", 2))
		}
		if len(ov) > 0 {
			out = append(out, markLine(r.Times[i], "refused by the cap: "+strings.Join(ov, ", "), colorOverflow, "dashed", 1))
		}
	}
	return out
}

func markLine(at, name, color string, dash any, width float64) map[string]any {
	return map[string]any{"xAxis": at, "name": name, "lineStyle": map[string]any{"color": color, "type": dash, "width": width}}
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
