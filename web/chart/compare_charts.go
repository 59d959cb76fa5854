package chart

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// The compare page's charts put A and B on one set of axes: the ticks of
// both runs (the same ones unless B changes interval), what clients saw
// and the ejections in force as two lines each, and the ejection lanes
// interleaved, h0 A above h0 B, so a host's two fates sit side by side.

const (
	cmpClients = "cmp-clients"
	cmpActive  = "cmp-active"
	CmpLanes   = "cmp-lanes"

	ColorA = "#0072B2"
	ColorB = "#E69F00"
)

// cmpAxis is the shared x axis: every tick of A and of B, in ms.
type cmpAxis struct {
	ms     []int64
	labels []string
}

func cmpAxisOf(a, b *tabstate.Run) cmpAxis {
	var ms []int64
	for _, r := range []*tabstate.Run{a, b} {
		for i := range r.Frames {
			ms = append(ms, r.Frames[i].TMs)
		}
	}
	slices.Sort(ms)
	ms = slices.Compact(ms)
	ax := cmpAxis{ms: ms, labels: make([]string, len(ms))}
	for i, t := range ms {
		ax.labels[i] = tabstate.FormatMs(t)
	}
	return ax
}

// at is the index of the run's frame in force at the axis' i-th tick: its
// last frame at or before it (-1 before its first).
func (ax cmpAxis) at(r *tabstate.Run, i int) int {
	t := ax.ms[i]
	return sort.Search(len(r.Frames), func(k int) bool { return r.Frames[k].TMs > t }) - 1
}

// own is the run's value at the axis' i-th tick if the run ticks there,
// else nil (a gap the line bridges).
func (ax cmpAxis) own(r *tabstate.Run, i int, v func(*scenario.Frame) any) any {
	if k := ax.at(r, i); k >= 0 && r.Frames[k].TMs == ax.ms[i] {
		return v(&r.Frames[k])
	}
	return nil
}

// CompareCharts are the page's chart boxes and their options.
func CompareCharts(a, b *tabstate.Run) view.StaticCharts {
	ax := cmpAxisOf(a, b)
	rows := 2 * len(cmpHosts(a, b))
	boxes := []view.Chart{
		{ID: cmpClients, Size: "wide", Title: "What clients saw", Caption: "requests that failed after retries, A (solid) and B (dashed), on the same axes"},
		{ID: cmpActive, Size: "wide", Title: "Hosts ejected", Caption: "ejections_active after each tick, A (solid) and B (dashed)"},
		{ID: CmpLanes, Size: "wide", Title: "Ejections, A and B interleaved", Caption: "each host's lane under A, then under B · filled: ejected after that tick · ▲ refused by the cap"},
	}
	opt := map[string]json.RawMessage{
		cmpClients: OptionJSON(cmpLines(ax, a, b, "%", func(f *scenario.Frame) any { return Round2(f.Clients.FailurePct()) }, "failed %")),
		cmpActive:  OptionJSON(cmpLines(ax, a, b, "", func(f *scenario.Frame) any { return f.Stats[engine.StatEjectionsActive] }, "ejected")),
		CmpLanes:   OptionJSON(cmpLanesChart(ax, a, b)),
	}
	o, _ := json.Marshal(opt)
	h, _ := json.Marshal(map[string]int{CmpLanes: min(max(56+16*rows, 150), 900)})
	return view.StaticCharts{Boxes: boxes, Options: string(o), Heights: string(h)}
}

// cmpCommon are the options the compare charts share with the lab's: the
// axis is the compare's.
func cmpCommon(ax cmpAxis, unit string) []charts.GlobalOpts {
	return Common(&tabstate.Run{Times: ax.labels}, unit)
}

// cmpLines draws one number of both runs as two lines.
func cmpLines(ax cmpAxis, a, b *tabstate.Run, unit string, v func(*scenario.Frame) any, what string) JSONOption {
	c := charts.NewLine()
	c.SetXAxis(ax.labels)
	c.SetGlobalOptions(cmpCommon(ax, unit)...)
	y := YAxis(unit, 0, nil)
	if unit == "" {
		y.MinInterval = 1
	}
	c.SetGlobalOptions(charts.WithYAxisOpts(y))
	for _, s := range []struct {
		name, color, dash string
		run               *tabstate.Run
	}{{"A " + what, ColorA, "", a}, {"B " + what, ColorB, "dashed", b}} {
		data := make([]any, len(ax.ms))
		for i := range ax.ms {
			data[i] = ax.own(s.run, i, v)
		}
		c.AddSeries(s.name, nil, RawData(data), SeriesColor(s.color), LineStyle(s.color, 3, s.dash),
			charts.WithSeriesOpts(func(ss *charts.SingleSeries) { ss.SymbolSize = 5; ss.ConnectNulls = opts.Bool(true) }))
	}
	return c
}

// cmpHosts are the hosts of the run with more of them (B may change the
// cluster's size): h0, h1, … in both.
func cmpHosts(a, b *tabstate.Run) []string {
	if len(b.Hosts) > len(a.Hosts) {
		return b.Hosts
	}
	return a.Hosts
}

// cmpLaneLabels are the interleaved lanes: "h0 A", "h0 B", "h1 A", …
func cmpLaneLabels(hosts []string) []string {
	out := make([]string, 0, 2*len(hosts))
	for _, h := range hosts {
		out = append(out, h+" A", h+" B")
	}
	return out
}

// cmpLanesChart is the ejection lanes of both runs, interleaved: A's
// cells hold 1, B's 2, so one visual map colours each run its own way.
func cmpLanesChart(ax cmpAxis, a, b *tabstate.Run) JSONOption {
	c := charts.NewHeatMap()
	c.SetXAxis(ax.labels)
	c.SetGlobalOptions(cmpCommon(ax, "")...)
	c.SetGlobalOptions(laneAxis(cmpLaneLabels(cmpHosts(a, b)), opts.AxisLabel{FontSize: FontSize - 2, Color: ColorText, Interval: "0"}), cellTooltip)
	sc := charts.NewScatter()
	for side, r := range []*tabstate.Run{a, b} {
		name := string(rune('A' + side))
		filled, refused := cmpLaneData(ax, r, side, name)
		color := []string{ColorA, ColorB}[side]
		c.AddSeries(name+" ejected", nil, cells(filled, color)...)
		sc.AddSeries(name+" overflow", nil, RawData(refused), marks(ColorOverflow, "triangle", 11))
	}
	c.Overlap(sc)
	return Patched{c, func(o map[string]any) {
		o["visualMap"] = []any{map[string]any{
			"type": "piecewise", "show": false, "seriesIndex": []int{0, 1},
			"pieces": []any{
				map[string]any{"min": 0.5, "max": 1.5, "color": ColorA},
				map[string]any{"min": 1.5, "max": 2.5, "color": ColorB},
			},
		}}
	}}
}

// cmpLaneData is one run's cells (ejected in force at each tick of the
// axis) and its overflow marks (at the tick of the tick that refused),
// on its own rows: 2·host + side.
func cmpLaneData(ax cmpAxis, r *tabstate.Run, side int, name string) (cells, marks []any) {
	seen := map[[2]int]bool{}
	for i := range ax.ms {
		k := ax.at(r, i)
		if k < 0 {
			continue
		}
		f := &r.Frames[k]
		for hi := range f.Hosts {
			if f.Hosts[hi].Ejected {
				cells = append(cells, map[string]any{"value": []int{i, 2*hi + side, side + 1},
					"name": fmt.Sprintf("%s: %s ejected at %s", name, f.Hosts[hi].Name, ax.labels[i])})
			}
		}
		if f.TMs != ax.ms[i] {
			continue
		}
		for _, e := range f.Events {
			hi, ok := r.HostIndex[e.Host]
			if ok && e.Kind == engine.EventOverflow && !seen[[2]int{i, hi}] {
				seen[[2]int{i, hi}] = true
				marks = append(marks, []int{i, 2*hi + side})
			}
		}
	}
	return cells, marks
}
