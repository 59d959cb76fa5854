// Package chart builds the lab's charts from a run: every chart's ECharts
// option (go-echarts, with the few settings it has no field for patched
// in), the markers of injections, ejections and refusals, the sentences
// that name each chart for a screen reader, the Envoy/gRPC strip
// (dialects.go), the /compare page's charts (compare_charts.go), and the
// scripts a stream sends — a whole option, or a patch from one cursor to
// the next (chart_patch.go), remembered for a room's followers
// (chart_memo.go).
package chart

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// Chart options are built with go-echarts and sent as JSON to one
// long-lived ECharts instance per chart, which applies them with setOption
// (stack-notes §2: re-sending go-echarts' HTML snippet blanks the chart or
// redeclares its script variable). Every chart shares one category x axis
// holding every tick of the run, so the timeline never rescales while it
// plays; series hold the frames up to the cursor only.

// chart ids: the DOM ids of the chart boxes, and the keys of an update.
// Tests name the charts by these; a new chart needs no constant.
const (
	ChartSuccessRate = "chart-sr"
	ChartLanes       = "chart-lanes"
	ChartClients     = "chart-clients"
	ChartShare       = "chart-share"
	ChartCounters    = "chart-counters"
)

// Chart is one chart of the lab: its box on the page and how the stream
// fills it. Adding a chart is one entry in List, whose order is the
// page's.
type Chart struct {
	// ID is the box's DOM id and the chart's key in every update.
	ID string
	// Title and Caption head the box; together they are its accessible
	// name (the canvas itself says nothing to a screen reader).
	Title, Caption string
	// Size is the box's CSS class: "wide" takes the board's row, "half"
	// shares it with the next half.
	Size string
	// Height is the box's height in pixels for a run, for a chart whose
	// height follows the run; nil keeps the stylesheet's.
	Height func(r *tabstate.Run) int
	// Build is the chart's option for the frames shown so far (a prefix
	// of r.Frames).
	Build func(r *tabstate.Run, frames []scenario.Frame) JSONOption
	// Points are the data each of the chart's own series (in the option's
	// order, before the events series) holds for frames[from:]: Build's
	// series hold Points(r, frames, 0), and a played frame appends
	// Points(r, frames, from) to them (chart_step.go). A series' point at
	// a frame depends on the frames up to it alone, so the two agree.
	Points func(r *tabstate.Run, frames []scenario.Frame, from int) [][]any
	// Moving are the other parts of the option that the cursor changes
	// (an axis bound, the lanes' labels, the panic shading), each where
	// it stands in the option and its value for the frames shown; Build
	// writes the same values there.
	Moving []Moving
	// Alt is its text alternative for the same frames: what it shows at
	// the cursor, in one sentence (chartalt.go).
	Alt func(r *tabstate.Run, frames []scenario.Frame) string
	// Only, for a chart that only some runs need (the mesh's two, with
	// more than one client proxy), is when its box is shown; nil shows
	// it always. The box is on every page and the stream feeds it either
	// way, so the page keeps one shape whatever the run.
	Only *Only
}

// Only is one rule for showing a box, said twice: Run, on the server, for
// the box as the page is drawn; Signal, a Datastar expression over the
// page's signals, for the box as the settings move (data-show), so it
// appears when the slider does, not a redraw later. TestOnlyAgrees checks
// that the two say the same.
type Only struct {
	Run    func(r *tabstate.Run) bool
	Signal string
	// Control is the control whose signal Signal reads: a page without
	// that control must not read it (Datastar would create the signal,
	// and the page's settings would post it empty; lab.lessonBoxes).
	Control string
}

// Moving is a part of a chart's option that the cursor changes: its path
// from the option's root (object keys as strings, array indices as ints)
// and its value for the frames shown.
type Moving struct {
	Path []any
	At   func(r *tabstate.Run, frames []scenario.Frame) any
}

// eventsKey reads the markers every chart carries (chartmarks.go).
const eventsKey = "events (legend): grey shading a fault, solid line an ejection (at its interval's tick), dashed line a refusal by the cap, dash-dot line an injected fault"

// List is every chart, in page order.
var List = []Chart{
	{ID: ChartSuccessRate, Size: "wide", Title: "Success rate per host",
		Caption: "at each tick, for hosts with enough requests; below the dashed threshold is an outlier · " + eventsKey,
		Build:   successRateChart, Points: srPoints, Alt: srAlt,
		Moving: []Moving{{Path: []any{"yAxis", 0, "min"}, At: srAxisMin}}},
	{ID: ChartLanes, Size: "wide", Title: "Ejections",
		Caption: "a cell is an interval, filled if the host is out at the tick that closes it (an ejection at 20.1 s fills the cell of the 30 s tick: the decision log has its exact time) · ×N: the host's ejection multiplier · ▲ refused by the cap (overflow) · ◆ detected, not enforced · shaded violet, labelled panic: the cluster was in panic · events as above",
		Height:  lanesHeight, Build: lanesChart, Points: lanesPoints, Alt: lanesAlt,
		Moving: []Moving{
			{Path: []any{"yAxis", 0, "data"}, At: func(r *tabstate.Run, frames []scenario.Frame) any { return laneLabels(r, frames) }},
			{Path: []any{"series", 0, "markArea", "data"}, At: panicAreasAt},
		}},
	compareChartEntry,
	meshChartEntry,
	volumeChartEntry,
	{ID: ChartClients, Size: "wide", Title: "What clients saw",
		Caption: "requests that failed after retries (red line), retries sent, and retry overflows (retries refused by max_retries or the retry budget) · shaded violet, labelled panic: the cluster was in panic · events as above",
		Build:   clientsChart, Points: clientsPoints, Alt: clientsAlt,
		Moving: []Moving{{Path: []any{"series", 0, "markArea", "data"}, At: panicAreasAt}}},
	{ID: ChartShare, Size: "half", Title: "Traffic share",
		Caption: "attempts each host served · events as above",
		Build:   shareChart, Points: sharePoints, Alt: shareAlt},
	{ID: ChartCounters, Size: "half", Title: "Detector counters",
		Caption: "cumulative; active is a gauge · events as above",
		Build:   countersChart, Points: countersPoints, Alt: countersAlt},
}

// BoxesAt are the empty boxes a lab page holds, one per chart, for the
// stream to fill, each with its chart's text alternative at the cursor
// of r (none for a nil r), so the page reads right before the stream
// connects.
func BoxesAt(r *tabstate.Run, cursor int) []view.Chart {
	out := make([]view.Chart, len(List))
	for i, c := range List {
		out[i] = view.Chart{ID: c.ID, Title: c.Title, Caption: c.Caption, Size: c.Size}
		if r != nil {
			out[i].Alt = c.Alt(r, r.Frames[:min(max(cursor, 0), len(r.Frames))])
		}
		if c.Only != nil {
			out[i].ShowIf, out[i].ShowControl = c.Only.Signal, c.Only.Control
			out[i].Off = r == nil || !c.Only.Run(r)
		}
	}
	return out
}

// HostColors is the hosts' palette. Hosts get a palette of colours told apart with the common
// colour-vision deficiencies (Okabe–Ito's, then Tol's and ColorBrewer's)
// that never comes near the states' colours: no red or vermillion (the
// threshold, ejected, overflow), no purple (detect only), no grey (the
// mean). States have fixed colours and, on the swimlanes, a shape too, so
// colour is never the only cue. TestHostPalette measures the distances.
var HostColors = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#999933", "#8C564B", "#01665E", "#E7298A", "#053061"}

const (
	ColorEjected   = "#D55E00"
	ColorOverflow  = "#8B0000"
	ColorDetect    = "#6A3D9A"
	ColorMean      = "#444444"
	ColorThreshold = "#C00000"
	// Panic is violet, never the failures' red: a run without panic must
	// not look like one (issue 38: the failure line's pink fill matched the
	// caption's "shaded red: panic").
	colorPanic      = "rgba(106, 61, 154, 0.16)"
	colorPanicLabel = "#4B2A73"
	ColorText       = "#222222"
	FontSize        = 14
)

func hostColor(i int) string { return HostColors[i%len(HostColors)] }

// hostSymbols and hostDashes tell hosts apart past the ten colours: h10
// has h0's colour but squares and a dashed line, h20 triangles and a
// dotted one (the legend shows the symbol with the name).
var (
	hostSymbols = []string{"emptyCircle", "rect", "triangle", "diamond"}
	hostDashes  = []string{"", "dashed", "dotted", "dashed"}
)

func hostSymbol(i int) string { return hostSymbols[(i/len(HostColors))%len(hostSymbols)] }
func hostDash(i int) string   { return hostDashes[(i/len(HostColors))%len(hostDashes)] }

// Options builds every chart's option for the frames before cursor,
// by chart id: the chart, its markers (the events series) and its text
// alternative. ECharts' aria is off, so it neither writes its own
// description over the box's label nor reads this one; js/chart.js puts it in
// the box's accessible name.
func Options(r *tabstate.Run, cursor int) map[string]json.RawMessage {
	return OptionsOf(r, cursor, List)
}

// OptionsOf is Options for some of the charts only (a handout prints
// three of them; the Envoy/gRPC strip would run the other dialect too).
func OptionsOf(r *tabstate.Run, cursor int, list []Chart) map[string]json.RawMessage {
	cursor = min(max(cursor, 0), len(r.Frames))
	frames := r.Frames[:cursor]
	ev := markers(r, frames)
	out := make(map[string]json.RawMessage, len(list))
	for _, c := range list {
		alt := c.Alt(r, frames)
		out[c.ID] = OptionJSON(Patched{c.Build(r, frames), func(o map[string]any) {
			o["series"] = seriesPlus{o["series"], ev}
			o["aria"] = map[string]any{"enabled": false, "label": map[string]any{"description": alt}}
		}})
	}
	return out
}

// seriesPlus marshals a chart's series with more after them.
type seriesPlus struct {
	series any
	extra  []any
}

func (s seriesPlus) MarshalJSON() ([]byte, error) {
	base, err := json.Marshal(s.series)
	if err != nil {
		return nil, err
	}
	extra, err := json.Marshal(s.extra)
	if err != nil || len(s.extra) == 0 {
		return base, err
	}
	if string(base) == "null" || string(base) == "[]" {
		return extra, nil
	}
	return append(append(base[:len(base)-1], ','), extra[1:]...), nil
}

// chartHeights are the heights of the boxes that follow the run, by chart
// id.
func chartHeights(r *tabstate.Run) map[string]int {
	out := map[string]int{}
	for _, c := range List {
		if c.Height != nil {
			out[c.ID] = c.Height(r)
		}
	}
	return out
}

// JSONOption is what every go-echarts chart can give: its option object.
type JSONOption interface {
	Validate()
	JSON() map[string]any
}

// OptionJSON marshals an option with HTML escaping on: the JSON travels
// inside a <script> element, where "</script>" must never appear.
func OptionJSON(c JSONOption) json.RawMessage {
	c.Validate()
	b, err := json.Marshal(c.JSON())
	if err != nil {
		// Options are plain numbers and strings; failing here is a bug.
		panic("web: chart option: " + err.Error())
	}
	return b
}

// Common are the options every chart shares: a fixed category x axis with
// every tick, no animation (a frame every 60 ms would catch transitions
// half-way), large type for a projector, axis tooltips, and the legend in
// a column on the right (it holds six hosts or fifty, scrolling, without
// covering the plot). The wide charts share fixed margins, so one tick
// sits at the same x in all of them, one above the other. unit is
// appended to the y axis labels ("%", "").
func Common(r *tabstate.Run, unit string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithAnimation(false),
		charts.WithInitializationOpts(opts.Initialization{BackgroundColor: "#ffffff"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Orient: "vertical", Right: "0", Top: "8",
			ItemWidth: 18, ItemHeight: 10, TextStyle: &opts.TextStyle{FontSize: FontSize - 1, Color: ColorText}}),
		wideGrid,
		charts.WithXAxisOpts(opts.XAxis{
			Type: "category", Data: r.Times,
			AxisLabel: &opts.AxisLabel{FontSize: FontSize - 1, Color: ColorText, HideOverlap: opts.Bool(true)},
		}),
		charts.WithYAxisOpts(YAxis(unit, nil, nil)),
	}
}

// wideGrid is the wide charts' plot area: fixed margins (labels outside
// the plot, room for the legend on the right).
var wideGrid = setGrid(opts.Grid{Left: "66", Right: "112", Top: "10", Bottom: "26", ContainLabel: opts.Bool(false)})

// Grid is a small chart's plot area: labels contained, legend on top.
func Grid(right, top int) charts.GlobalOpts {
	return setGrid(opts.Grid{Left: "8", Right: tabstate.Itoa(right), Top: tabstate.Itoa(top), Bottom: "4", ContainLabel: opts.Bool(true)})
}

// setGrid replaces the grid: go-echarts' WithGridOpts adds one more, and
// series draw on the first.
func setGrid(g opts.Grid) charts.GlobalOpts {
	return func(bc *charts.BaseConfiguration) { bc.GridList = []opts.Grid{g} }
}

// YAxis is a value axis whose labels carry the unit; min and max may be nil
// (ECharts picks them).
func YAxis(unit string, lo, hi any) opts.YAxis {
	return opts.YAxis{
		Type: "value", Min: lo, Max: hi,
		AxisLabel: &opts.AxisLabel{FontSize: FontSize - 1, Color: ColorText, Formatter: types.FuncStr("{value}" + unit)},
		SplitLine: &opts.SplitLine{Show: opts.Bool(true), LineStyle: &opts.LineStyle{Color: "#e5e5e5"}},
	}
}

// RawData sets a series' data to plain values (null for a gap) instead of
// go-echarts' {"value": …} objects: a third of the bytes on every frame.
func RawData(data []any) charts.SeriesOpts {
	return func(s *charts.SingleSeries) { s.Data = data }
}

func LineStyle(color string, width float32, dash string) charts.SeriesOpts {
	return charts.WithLineStyleOpts(opts.LineStyle{Color: color, Width: width, Type: dash})
}

func SeriesColor(color string) charts.SeriesOpts {
	return charts.WithItemStyleOpts(opts.ItemStyle{Color: color})
}

func noSymbol(s *charts.SingleSeries) { s.ShowSymbol = opts.Bool(false) }

// successRateChart: each host's success rate per interval (the detector's
// own bucket), with the cluster mean and the mean − k·σ threshold the
// detector compared them with. A host below success_rate_request_volume, or
// ejected before the tick, is left out, as the detector leaves it out: a
// host that served 3 requests while ejected has a meaningless rate.
func successRateChart(r *tabstate.Run, frames []scenario.Frame) JSONOption {
	c := charts.NewLine()
	c.SetXAxis(r.Times)
	c.SetGlobalOptions(Common(r, "%")...)
	points := srPoints(r, frames, 0)
	for hi, name := range r.Hosts {
		c.AddSeries(name, nil, RawData(points[hi]), SeriesColor(hostColor(hi)), LineStyle(hostColor(hi), 2, hostDash(hi)),
			charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.SymbolSize, s.Symbol = 6, hostSymbol(hi) }))
	}
	n := len(r.Hosts)
	c.AddSeries("mean", nil, RawData(points[n]), SeriesColor(ColorMean), LineStyle(ColorMean, 2, "dotted"), charts.WithSeriesOpts(noSymbol))
	c.AddSeries("threshold", nil, RawData(points[n+1]), SeriesColor(ColorThreshold), LineStyle(ColorThreshold, 3, "dashed"),
		charts.WithSeriesOpts(noSymbol))
	c.SetGlobalOptions(charts.WithYAxisOpts(YAxis("%", srAxisMin(r, frames), 100)), namedFirst(r.Hosts, "mean", "threshold", EventsSeries))
	return c
}

// namedFirst orders a legend that holds the hosts: the lines a lesson
// names ("watch the mean") first, then the hosts. A legend of fifty hosts
// must page, and a paged legend must not hide what the text asks the
// learner to read (issue 38).
func namedFirst(hosts []string, named ...string) charts.GlobalOpts {
	return func(bc *charts.BaseConfiguration) { bc.Legend.Data = append(named, hosts...) }
}

// wrapLegend keeps a legend of a few named lines whole: sent as "plain",
// which js/fit.js never pages, wrapping it on a narrow box instead (issue
// 38: the gRPC lesson says to watch "active", which a phone's and a
// half-width box's paged legend put on its second page).
var wrapLegend charts.GlobalOpts = func(bc *charts.BaseConfiguration) { bc.Legend.Type = "plain" }

// srPoints are the success-rate chart's series (each host's, the mean,
// the threshold) over frames[from:]; null where the detector did not
// count a host or did not run.
func srPoints(r *tabstate.Run, frames []scenario.Frame, from int) [][]any {
	out := make([][]any, len(r.Hosts)+2)
	for hi := range r.Hosts {
		data := make([]any, len(frames)-from)
		for i := from; i < len(frames); i++ {
			if v, ok := srPlotted(r, frames, i, hi); ok {
				data[i-from] = Round2(v)
			}
		}
		out[hi] = data
	}
	mean := make([]any, len(frames)-from)
	thr := make([]any, len(frames)-from)
	for i := from; i < len(frames); i++ {
		if p := frames[i].External; p.SRGate == engine.GateRan {
			mean[i-from] = Round2(p.Mean)
			thr[i-from] = Round2(max(p.Threshold, 0))
		}
	}
	out[len(r.Hosts)], out[len(r.Hosts)+1] = mean, thr
	return out
}

// srAxisMin is where the success-rate axis starts: at the next 10 below
// the lowest value shown (success rates live near 100, and an axis from 0
// would flatten the gap that matters).
func srAxisMin(r *tabstate.Run, frames []scenario.Frame) any {
	lo := 100.0
	for i := range frames {
		for hi := range r.Hosts {
			if v, ok := srPlotted(r, frames, i, hi); ok {
				lo = min(lo, v)
			}
		}
		if p := frames[i].External; p.SRGate == engine.GateRan {
			lo = min(lo, max(p.Threshold, 0))
		}
	}
	return math.Max(0, math.Floor(lo/10)*10)
}

// srPlotted is host hi's success rate in frame i if the detector counted
// it: enough requests, and not ejected at the previous tick (out of the
// statistics, even if panic sent it traffic).
func srPlotted(r *tabstate.Run, frames []scenario.Frame, i, hi int) (float64, bool) {
	if hi >= len(frames[i].Hosts) {
		return 0, false
	}
	wasEjected := i > 0 && hi < len(frames[i-1].Hosts) && frames[i-1].Hosts[hi].Ejected
	h := &frames[i].Hosts[hi]
	if h.SuccessRate < 0 || h.Requests == 0 || h.Requests < uint64(r.Config.SuccessRateRequestVolume) || wasEjected {
		return 0, false
	}
	return h.SuccessRate, true
}

// lanesChart: one swimlane per host. A filled cell is an interval that
// ended with the host ejected; triangles are detections the cap refused
// (overflow), diamonds detections not enforced. Panic intervals are shaded.
// Each lane's label carries the host's ejection multiplier at the cursor
// ("h5 ×2"), and an ejected cell's tooltip the multiplier and
// num_ejections after that tick: what base_ejection_time is multiplied by
// next, visible without opening the host table.
func lanesChart(r *tabstate.Run, frames []scenario.Frame) JSONOption {
	c := charts.NewHeatMap()
	c.SetXAxis(r.Times)
	c.SetGlobalOptions(Common(r, "")...)
	c.SetGlobalOptions(laneAxis(laneLabels(r, frames), opts.AxisLabel{FontSize: FontSize, Color: ColorText}), cellTooltip)
	points := lanesPoints(r, frames, 0)
	panicSpans := PanicAreas(r, frames)
	// The ejected cells' tooltip is their name (a string template: options
	// travel as JSON, where no formatter function survives).
	c.AddSeries("ejected", nil, cells(points[0], ColorEjected, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
		s.MarkAreas = &opts.MarkAreas{Data: panicSpans, MarkAreaStyle: opts.MarkAreaStyle{
			ItemStyle: &opts.ItemStyle{Color: colorPanic},
			Label:     &opts.Label{Show: opts.Bool(true), Position: "insideTop", Color: colorPanicLabel, FontSize: FontSize - 2},
		}}
	}))...)
	sc := charts.NewScatter()
	sc.AddSeries("overflow", nil, RawData(points[1]), marks(ColorOverflow, "triangle", 14))
	sc.AddSeries("detect only", nil, RawData(points[2]), marks(ColorDetect, "diamond", 14))
	c.Overlap(sc)
	// ECharts colours heatmap cells through a visualMap (one piece: 1 is
	// ejected). It must be tied to the heatmap alone, or it would also
	// recolour, and hide, the marks of the other series; go-echarts'
	// VisualMap has no seriesIndex, so it is set on the option itself.
	return Patched{c, func(o map[string]any) {
		o["visualMap"] = []any{map[string]any{
			"type": "piecewise", "show": false, "seriesIndex": 0,
			"pieces": []any{map[string]any{"min": 0.5, "max": 1.5, "color": ColorEjected}},
		}}
	}}
}

// The lane charts' parts (the lab's lanes, the compare page's, the
// Envoy/gRPC strip's): a category axis of lanes, top to bottom, shaded
// rows; the filled cells' series, each cell named by its tooltip (a
// string template: options travel as JSON, where no formatter function
// survives); the marks over them (a scatter of symbols).

// laneAxis is a lane chart's y axis: a category per lane in labels.
func laneAxis(labels []string, label opts.AxisLabel) charts.GlobalOpts {
	return charts.WithYAxisOpts(opts.YAxis{
		Type: "category", Data: labels, Inverse: opts.Bool(true), AxisLabel: &label,
		SplitArea: &opts.SplitArea{Show: opts.Bool(true), AreaStyle: &opts.AreaStyle{Color: "#fafafa"}},
	})
}

// cellTooltip is the tooltip of a chart whose items say what they are.
var cellTooltip = charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"})

// cells are the options of a lane chart's filled cells, data, of color,
// and more.
func cells(data []any, color string, more ...charts.SeriesOpts) []charts.SeriesOpts {
	return append([]charts.SeriesOpts{RawData(data), SeriesColor(color),
		charts.WithSeriesTooltipOpts(opts.SeriesTooltip{Formatter: types.FuncStr("{b}")}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: color, BorderColor: "#ffffff", BorderWidth: 1}),
	}, more...)
}

// marks are the options of a scatter series of symbols of color and size;
// more may move them (onto another grid's axes).
func marks(color, symbol string, size int, more ...func(*charts.SingleSeries)) charts.SeriesOpts {
	return func(s *charts.SingleSeries) {
		SeriesColor(color)(s)
		s.Symbol, s.SymbolSize = symbol, size
		for _, f := range more {
			f(s)
		}
	}
}

// lanesPoints are the swimlanes' series over frames[from:]: the ejected
// cells, the refusals by the cap (overflow), the detections not enforced;
// each mark once per host, kind and tick.
func lanesPoints(r *tabstate.Run, frames []scenario.Frame, from int) [][]any {
	var ejected, overflow, detect []any
	for i := from; i < len(frames); i++ {
		f := &frames[i]
		var marked [][2]int // {host, kind} marked at this tick
		for hi := range f.Hosts {
			if h := &f.Hosts[hi]; h.Ejected {
				ejected = append(ejected, map[string]any{"value": []int{i, hi, 1},
					"name": fmt.Sprintf("%s ejected after %s · multiplier ×%d · num_ejections %d", h.Name, r.Times[i], h.Multiplier, h.NumEjections)})
			}
		}
		for _, e := range f.Events {
			hi := r.HostIndex[e.Host]
			kind := -1
			switch e.Kind {
			case engine.EventOverflow:
				kind = 0
			case engine.EventDetect:
				kind = 1
			}
			if kind < 0 || slices.Contains(marked, [2]int{hi, kind}) {
				continue
			}
			marked = append(marked, [2]int{hi, kind})
			if kind == 0 {
				overflow = append(overflow, []int{i, hi})
			} else {
				detect = append(detect, []int{i, hi})
			}
		}
	}
	return [][]any{ejected, overflow, detect}
}

// laneLabels are the swimlanes' labels at the cursor: the host, and its
// ejection multiplier when it has one ("h5 ×2"). An ejection raises it by
// one (up to where base × it passes max_ejection_time) and lasts
// base_ejection_time × it; each tick the host spends back in service
// lowers it by one (ejectHost and the interval timer's decay in
// outlier_detection_impl.cc; envoy-semantics.md §6.2).
func laneLabels(r *tabstate.Run, frames []scenario.Frame) []string {
	labels := slices.Clone(r.Hosts)
	if len(frames) == 0 {
		return labels
	}
	for hi, h := range frames[len(frames)-1].Hosts {
		if hi < len(labels) && h.Multiplier > 0 {
			labels[hi] = fmt.Sprintf("%s ×%d", h.Name, h.Multiplier)
		}
	}
	return labels
}

// Patched is a go-echarts chart with a last change to its option, for the
// few settings go-echarts has no field for.
type Patched struct {
	JSONOption
	Patch func(map[string]any)
}

func (p Patched) JSON() map[string]any {
	o := p.JSONOption.JSON()
	p.Patch(o)
	return o
}

// PanicAreas are mark areas over the intervals in which the cluster was in
// panic (the balancer ignored health because too few hosts were healthy).
func PanicAreas(r *tabstate.Run, frames []scenario.Frame) []any {
	var out []any
	for i := 0; i < len(frames); i++ {
		if !frames[i].Panic {
			continue
		}
		j := i
		for j+1 < len(frames) && frames[j+1].Panic {
			j++
		}
		out = append(out, []map[string]any{{"name": "panic", "xAxis": r.Times[i]}, {"xAxis": r.Times[j]}})
		i = j
	}
	return out
}

// panicAreasAt is PanicAreas as a moving part of an option.
func panicAreasAt(r *tabstate.Run, frames []scenario.Frame) any { return PanicAreas(r, frames) }

// clientsChart: what the cluster's clients saw: the share of requests that
// failed after retries, the retries sent, and the retries refused
// (upstream_rq_retry_overflow: the max_retries breaker, or the retry
// budget that replaces it, said no, and the failure went to the client);
// panic intervals shaded.
func clientsChart(r *tabstate.Run, frames []scenario.Frame) JSONOption {
	c := charts.NewLine()
	c.SetXAxis(r.Times)
	c.SetGlobalOptions(Common(r, "%")...)
	c.SetGlobalOptions(charts.WithYAxisOpts(YAxis("%", 0, nil)), wrapLegend)
	retryAxis := YAxis("", 0, nil)
	retryAxis.Position, retryAxis.SplitLine, retryAxis.MinInterval = "right", &opts.SplitLine{Show: opts.Bool(false)}, 1
	retryAxis.AxisLabel.Inside = opts.Bool(true) // inside the plot: the margins stay those of the other charts
	c.ExtendYAxis(retryAxis)
	points := clientsPoints(r, frames, 0)
	// No fill under the failures: shading on this chart means panic.
	c.AddSeries("failed %", nil, RawData(points[0]), SeriesColor(ColorThreshold), LineStyle(ColorThreshold, 3, ""),
		charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.SymbolSize = 5
			s.MarkAreas = &opts.MarkAreas{Data: PanicAreas(r, frames), MarkAreaStyle: opts.MarkAreaStyle{
				ItemStyle: &opts.ItemStyle{Color: colorPanic},
				Label:     &opts.Label{Show: opts.Bool(true), Position: "insideTop", Color: colorPanicLabel, FontSize: FontSize - 2},
			}}
		}))
	b := charts.NewBar()
	b.AddSeries("retries", nil, RawData(points[1]), SeriesColor("#9DB9D3"),
		charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.YAxisIndex = 1; s.BarMaxWidth = "18" }))
	// Dark red beside the pale retries: a refusal is a failure the client
	// got. The legend names both, so colour is not the only cue.
	b.AddSeries("retry overflow", nil, RawData(points[2]), SeriesColor(ColorOverflow),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: ColorOverflow, BorderColor: "#ffffff", BorderWidth: 1}),
		charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.YAxisIndex = 1; s.BarMaxWidth = "18" }))
	c.Overlap(b)
	return c
}

// clientsPoints are the clients chart's series over frames[from:]: the
// share of requests failed, the retries sent, the retries refused.
func clientsPoints(r *tabstate.Run, frames []scenario.Frame, from int) [][]any {
	n := len(frames) - from
	fail, retries, overflow := make([]any, n), make([]any, n), make([]any, n)
	for i := from; i < len(frames); i++ {
		fail[i-from] = Round2(frames[i].Clients.FailurePct())
		retries[i-from] = frames[i].Clients.RetriesSent
		overflow[i-from] = frames[i].Clients.BudgetRefusals
	}
	return [][]any{fail, retries, overflow}
}

// shareChart: each host's share of the attempts, stacked to 100%: an
// ejected host's share drops to zero and the others pick it up.
func shareChart(r *tabstate.Run, frames []scenario.Frame) JSONOption {
	c := charts.NewLine()
	c.SetXAxis(r.Times)
	c.SetGlobalOptions(Common(r, "%")...)
	// The legend names the markers only: the hosts keep the colours of the
	// success-rate chart.
	c.SetGlobalOptions(charts.WithYAxisOpts(YAxis("%", 0, 100)),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Data: []string{EventsSeries}, Top: "0", Right: "8",
			ItemWidth: 18, TextStyle: &opts.TextStyle{FontSize: FontSize - 2, Color: ColorText}}),
		Grid(16, 28))
	points := sharePoints(r, frames, 0)
	for hi, name := range r.Hosts {
		c.AddSeries(name, nil, RawData(points[hi]), SeriesColor(hostColor(hi)), LineStyle(hostColor(hi), 1, ""),
			charts.WithAreaStyleOpts(opts.AreaStyle{Color: hostColor(hi), Opacity: opts.Float(0.55)}),
			charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.Stack = "share"; s.ShowSymbol = opts.Bool(false) }))
	}
	return c
}

// sharePoints are each host's share of the attempts over frames[from:].
func sharePoints(r *tabstate.Run, frames []scenario.Frame, from int) [][]any {
	out := make([][]any, len(r.Hosts))
	for hi := range r.Hosts {
		data := make([]any, len(frames)-from)
		for i := from; i < len(frames); i++ {
			if hi < len(frames[i].Hosts) {
				data[i-from] = Round2(100 * frames[i].Hosts[hi].TrafficShare)
			}
		}
		out[hi] = data
	}
	return out
}

// countersChart: the detector's own counters, cumulative as Envoy keeps
// them, and the ejections_active gauge.
func countersChart(r *tabstate.Run, frames []scenario.Frame) JSONOption {
	c := charts.NewLine()
	c.SetXAxis(r.Times)
	c.SetGlobalOptions(Common(r, "")...)
	counts := YAxis("", 0, nil)
	counts.MinInterval = 1
	c.SetGlobalOptions(charts.WithYAxisOpts(counts),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Left: "center", ItemWidth: 18, TextStyle: &opts.TextStyle{FontSize: FontSize - 2, Color: ColorText}}),
		wrapLegend, Grid(16, 48))
	points := countersPoints(r, frames, 0)
	for k, s := range counterSeries {
		c.AddSeries(s.name, nil, RawData(points[k]), SeriesColor(s.color), LineStyle(s.color, 3, s.dash),
			charts.WithSeriesOpts(func(ss *charts.SingleSeries) { ss.Step = "end"; ss.SymbolSize = 5 }))
	}
	return c
}

// counterSeries are the counters chart's series.
var counterSeries = []struct {
	name, color, dash string
	value             func(*engine.Stats) uint64
}{
	{"detected", ColorDetect, "", detectedTotal},
	{"enforced", ColorEjected, "", func(s *engine.Stats) uint64 { return s[engine.StatEjectionsEnforcedTotal] }},
	{"overflow", ColorOverflow, "dashed", func(s *engine.Stats) uint64 { return s[engine.StatEjectionsOverflow] }},
	{"active", "#0072B2", "", func(s *engine.Stats) uint64 { return s[engine.StatEjectionsActive] }},
}

// countersPoints are each counter's values over frames[from:].
func countersPoints(r *tabstate.Run, frames []scenario.Frame, from int) [][]any {
	out := make([][]any, len(counterSeries))
	for k, s := range counterSeries {
		data := make([]any, len(frames)-from)
		for i := from; i < len(frames); i++ {
			data[i-from] = s.value(&frames[i].Stats)
		}
		out[k] = data
	}
	return out
}

// detectedTotal sums the ejections_detected_* counters of every detector
// (degradation aside: it is not an ejection).
func detectedTotal(s *engine.Stats) uint64 {
	var n uint64
	for _, st := range []engine.Stat{
		engine.StatEjectionsDetectedConsecutive5xx,
		engine.StatEjectionsDetectedConsecutiveGatewayFailure,
		engine.StatEjectionsDetectedConsecutiveLocalOriginFailure,
		engine.StatEjectionsDetectedSuccessRate,
		engine.StatEjectionsDetectedLocalOriginSuccessRate,
		engine.StatEjectionsDetectedFailurePercentage,
		engine.StatEjectionsDetectedLocalOriginFailurePercentage,
	} {
		n += s[st]
	}
	return n
}

// lanesHeight gives the swimlanes a row per host, within what a screen
// holds.
func lanesHeight(r *tabstate.Run) int { return min(max(56+22*len(r.Hosts), 150), 640) }

func Round2(v float64) float64 { return math.Round(v*100) / 100 }
