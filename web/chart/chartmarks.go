package chart

import (
	"sort"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/engine/sim"
	"outlierlab/web/tabstate"
)

// Chart markers put the story on every chart's time axis: the scenario's
// fault windows shaded, and a vertical line where a fault was injected,
// where hosts were ejected and where the cap refused an ejection
// (overflow). They ride on one extra series per chart, "events", whose
// legend entry shows or hides them all; each marker names itself in its
// tooltip. Markers appear as the cursor reaches them, like the data.

// EventsSeries is the markers' series name and legend entry.
const EventsSeries = "events"

const (
	colorFault    = "rgba(110, 110, 110, 0.14)"
	ColorInjected = "#222222"
)

// dashDot is the injection lines' dash: neither the mean's dots nor the
// threshold's dashes.
var dashDot = []int{8, 4, 2, 4}

// markTime is the axis label where a moment shows: the tick of the first
// interval that ends at or after it.
func markTime(r *tabstate.Run, ms int64) (string, int) {
	k := sort.Search(len(r.Frames), func(i int) bool { return r.Frames[i].TMs >= ms })
	if k == len(r.Frames) {
		return "", k
	}
	return r.Times[k], k
}

// markers are the events series for the frames shown: line series with no
// data of their own, all named EventsSeries (so one legend entry shows or
// hides them all), one per kind of marker so that each line needs only its
// tick and its name: the fault areas, the injections, the ejections, the
// refusals.
func markers(r *tabstate.Run, frames []scenario.Frame) []any {
	lines, areas := markerData(r, frames)
	return []any{
		eventSeries(ColorEjected, "solid", 2, lines[0], areas),
		eventSeries(ColorOverflow, "dashed", 1, lines[1], nil),
		eventSeries(ColorInjected, dashDot, 2, lines[2], nil),
	}
}

// markerData are what the events series hold that the frames move: each
// series' lines (ejections, refusals, injections, in the series' order)
// and the first one's areas (the faults). The rest of each series is the
// same at every cursor.
func markerData(r *tabstate.Run, frames []scenario.Frame) (lines [3][]any, areas []any) {
	inj, ej, ov := markLines(r, frames)
	return [3][]any{ej, ov, inj}, faultAreas(r, frames)
}

// eventSeries is one kind of marker: its lines (and areas) drawn alike.
func eventSeries(color string, dash any, width float64, lines, areas []any) map[string]any {
	s := map[string]any{
		"name": EventsSeries, "type": "line", "data": []any{},
		"itemStyle": map[string]any{"color": color},
		"lineStyle": map[string]any{"color": color, "width": 2},
		"tooltip":   map[string]any{"trigger": "item"},
		"markLine": map[string]any{
			"symbol": []string{"none", "none"}, "silent": false, "animation": false,
			"label":     map[string]any{"show": false},
			"lineStyle": map[string]any{"color": color, "type": dash, "width": width},
			"data":      lines,
		},
	}
	if areas != nil {
		s["markArea"] = map[string]any{
			"silent": true, "animation": false,
			"itemStyle": map[string]any{"color": colorFault},
			"label":     map[string]any{"show": true, "position": "insideTopLeft", "color": ColorText, "fontSize": FontSize - 2},
			"data":      areas,
		}
	}
	return s
}

// faultAreas shades the scenario's own fault windows (injected faults are
// lines) from their start to their end, or to the cursor while they last.
func faultAreas(r *tabstate.Run, frames []scenario.Frame) []any {
	out := []any{}
	injected := map[string]bool{}
	for _, in := range r.Scenario.Injections {
		injected[in.Fault.Label] = true
	}
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
		// The label says when the fault began: the axis labels every
		// few ticks (10, 40, 70 s …) and rarely names the start (issue 25).
		// It says what the fault is now, from the run's own fault, so a
		// learner who changes how or how often it fails reads the new
		// fault, not the preset's story (issue 38: it stayed "cache lost").
		// The area's label is its name (ECharts' default), said once.
		out = append(out, []map[string]any{
			{"name": "fault: " + faultWords(r, &f) + " from " + from, "xAxis": from},
			{"xAxis": r.Times[last]},
		})
	}
	return out
}

// faultWords is a fault as it is in the run: its hosts and how they
// fail ("h5: 503, 1 in 3"; "every host: 503, 30% at random").
func faultWords(r *tabstate.Run, f *sim.Fault) string {
	var hosts []string
	n := len(r.Hosts)
	for i := range n {
		if f.AppliesTo(i, n) {
			hosts = append(hosts, r.Hosts[i])
		}
	}
	who := strings.Join(hosts, ", ")
	switch {
	case f.AllHosts || (n > 1 && len(hosts) == n):
		who = "every host"
	case len(hosts) > 3: // a label, not a list: the log names them
		who = tabstate.Itoa(len(hosts)) + " hosts"
	}
	// An injection's words are the knob's (scenario.Injection.Describe):
	// one way of saying how a host fails.
	return who + ": " + scenario.Injection{Fault: *f}.Describe()
}

// markLines are the injections, ejections and refusals (overflows) so
// far, one line per tick and kind, naming its hosts; refusals at
// consecutive sweeps are one line at the first, naming the span (a cap
// refuses at every sweep while it is full: a line every interval hid the
// lanes, issue 25; the lanes' triangles still mark each refusal).
func markLines(r *tabstate.Run, frames []scenario.Frame) (inj, ej, ov []any) {
	inj, ej, ov = []any{}, []any{}, []any{}
	var run []string // the hosts of the refusals run so far
	first, last := -1, -1
	endRun := func() {
		if first < 0 {
			return
		}
		name := "refused by the cap: " + strings.Join(run, ", ")
		if last > first {
			name += " at each of the " + tabstate.Itoa(last-first+1) + " sweeps " + strings.TrimSuffix(r.Times[first], " s") + "–" + r.Times[last]
		}
		ov = append(ov, markAt(r.Times[first], name))
		run, first = nil, -1
	}
	for _, in := range r.Scenario.Injections {
		if at, k := markTime(r, in.At.Milliseconds()); k < len(frames) {
			inj = append(inj, markAt(at, "injected: h"+tabstate.Itoa(in.Host)))
		}
	}
	for i := range frames {
		var ejected, refused []string
		between := false // an ejection decided between two ticks
		for _, e := range frames[i].Events {
			switch e.Kind {
			case engine.EventEject:
				// A consecutive-error ejection happens when the streak
				// completes (DetectorImpl::onConsecutiveErrorWorker), not
				// at a tick: its line stands at the tick that closes its
				// interval, and its name gives the moment.
				h := e.Host
				if e.AtMs != frames[i].TMs {
					h += " at " + tabstate.FormatMs(e.AtMs)
					between = true
				}
				ejected = appendOnce(ejected, h)
			case engine.EventOverflow:
				refused = appendOnce(refused, e.Host)
			}
		}
		if len(ejected) > 0 {
			name := "ejected: " + strings.Join(ejected, ", ")
			if between {
				name += " (marked at the " + r.Times[i] + " tick that closes the interval)"
			}
			ej = append(ej, markAt(r.Times[i], name))
		}
		if len(refused) == 0 {
			endRun()
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
		for _, h := range refused {
			run = appendOnce(run, h)
		}
	}
	endRun()
	return inj, ej, ov
}

func markAt(at, name string) map[string]any { return map[string]any{"xAxis": at, "name": name} }

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
