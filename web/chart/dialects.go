package chart

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
	"outlierlab/web/budget"
	"outlierlab/web/tabstate"
)

// The compare strip: the run's ejections under Envoy's detector and under
// grpc-go's (gRFC A50), one above the other, over the same traffic. The
// visitor's run is one of the two (the dialect control picks which); the
// other is the same scenario, settings and seed with the dialect flipped,
// run once and cached, so stepping through the run costs a lookup.

const ChartCompare = "chart-compare"

// compareChartEntry is the strip's entry in List.
var compareChartEntry = Chart{ID: ChartCompare, Size: "wide", Title: "Envoy and gRPC, same traffic",
	Caption: "this run's ejections under Envoy's detector (above) and grpc-go's (below, gRFC A50), same settings and seed · filled: ejected after that tick · ▲ refused by the cap",
	Height:  CompareHeight, Build: compareChart, Points: comparePoints, Alt: compareAlt}

// compareAlt says in one sentence which hosts each dialect has out at the
// cursor, and how many refusals each cap made so far.
func compareAlt(r *tabstate.Run, frames []scenario.Frame) string {
	if len(frames) == 0 {
		return noFrame
	}
	envoy, grpc := lanesOf(frames), cut(TwinOf(r), len(frames))
	if r.Scenario.Cluster.Dialect == engine.DialectGRPC {
		envoy, grpc = grpc, envoy
	}
	i := len(frames) - 1
	say := func(name string, l *dialectLanes) string {
		if l.refused != "" {
			return fmt.Sprintf("%s would refuse this cluster (%s), so it has no run", name, l.refused)
		}
		var out []string
		for hi, ejected := range l.Ejected[i] {
			if ejected && hi < len(r.Hosts) {
				out = append(out, r.Hosts[hi])
			}
		}
		refused := 0
		for _, o := range l.overflow {
			if o[0] <= i {
				refused++
			}
		}
		hosts := "no host out"
		if len(out) > 0 {
			hosts = strings.Join(out, ", ") + " out"
		}
		return fmt.Sprintf("%s has %s (%d refused by the cap so far)", name, hosts, refused)
	}
	return fmt.Sprintf("At %s, same traffic: %s; %s.", r.Times[i], say("Envoy", envoy), say("gRPC", grpc))
}

// dialectLanes is what the strip draws of one dialect's run: which hosts
// are ejected after each tick, and the cap's refusals.
type dialectLanes struct {
	Ejected  [][]bool // [frame][host]
	overflow [][2]int // {frame, host}, once per host and tick
	// refused is set when Envoy would refuse the gRPC run's config (the
	// gRPC dialect takes what only Envoy refuses): Envoy's first reason.
	// There is then no Envoy run, and the lane says so.
	refused string
}

// lanesOf is built for every frame a tab plays (the strip's points and
// its sentence), so it allocates no map: a frame has a few hosts and
// fewer events, and its refusals are the last ones appended.
func lanesOf(frames []scenario.Frame) *dialectLanes {
	l := &dialectLanes{Ejected: make([][]bool, len(frames))}
	for i := range frames {
		f := &frames[i]
		l.Ejected[i] = make([]bool, len(f.Hosts))
		for hi := range f.Hosts {
			l.Ejected[i][hi] = f.Hosts[hi].Ejected
		}
		first := len(l.overflow) // this tick's refusals start here
		for _, e := range f.Events {
			if e.Kind != engine.EventOverflow {
				continue
			}
			hi := slices.IndexFunc(f.Hosts, func(h scenario.HostFrame) bool { return h.Name == e.Host })
			if hi >= 0 && !slices.Contains(l.overflow[first:], [2]int{i, hi}) {
				l.overflow = append(l.overflow, [2]int{i, hi})
			}
		}
	}
	return l
}

// TwinOf is the lanes of r's run under the other dialect, run on the
// first ask and kept on r (Run.Twin): once for the tabs that draw the run,
// for as long as the run cache keeps it.
func TwinOf(r *tabstate.Run) *dialectLanes {
	return r.Twin.Get(func() any {
		seed := uint64(tabstate.DefaultSeed)
		if r.Result != nil {
			seed = r.Result.Seed
		}
		return TwinLanes(r.Scenario.Clone(), r.Config, seed, r.Budget)
	}).(*dialectLanes)
}

// TwinLanes runs a run's scenario sc (a copy it may change), config and
// seed under the other dialect, and keeps the lanes of its ejections: a
// tabstate.Beside, so a run cache can start it beside the run. The
// traffic is the same: arrivals, latencies and failures come from the
// seed's own stream, apart from the detector's (sim.New).
func TwinLanes(sc scenario.Scenario, cfg engine.Config, seed uint64, b *budget.Budget) any {
	sc.Cluster.Dialect = otherDialect(sc.Cluster.Dialect)
	if sc.Cluster.Dialect == engine.DialectEnvoy {
		// grpc-go takes blocks Envoy refuses (envoyconf.ParseJSONGRPC):
		// Envoy would not load this cluster, so it runs no detector.
		if fes := envoyconf.FieldErrors(envoyconf.CheckEnvoy(cfg)); len(fes) > 0 {
			return &dialectLanes{refused: fes[0].Error()}
		}
	}
	// The other dialect's run is weighed as the run was (gRPC's detector
	// makes other events: no consecutive streaks); past the budget, the
	// strip is left empty.
	if b.CheckRun(sc, cfg) != nil {
		return &dialectLanes{}
	}
	res, err := scenario.Run(sc, cfg, seed)
	if err != nil {
		// The same inputs ran under r's dialect; an empty strip says
		// nothing false if the other cannot.
		return &dialectLanes{}
	}
	return lanesOf(res.Frames)
}

func otherDialect(d engine.Dialect) engine.Dialect {
	if d == engine.DialectGRPC {
		return engine.DialectEnvoy
	}
	return engine.DialectGRPC
}

// compareLayout is the strip's geometry for a run: two plots of one row
// per host, each under its title, sharing the x labels at the bottom.
type compareLayout struct {
	plot, total int // one plot's height, the box's
}

const (
	CompareTitle  = 20 // a plot's title line
	CompareGap    = 10 // between the first plot and the second title
	CompareAxis   = 26 // the x labels under the second plot
	CompareRow    = 16 // a host's row, up to CompareMax
	CompareMax    = 640
	compareMinRow = 40 // the smallest plot
)

func compareLayoutOf(r *tabstate.Run) compareLayout {
	chrome := 2*CompareTitle + CompareGap + CompareAxis
	plot := max(CompareRow*len(r.Hosts), compareMinRow)
	plot = min(plot, (CompareMax-chrome)/2)
	return compareLayout{plot: plot, total: 2*plot + chrome}
}

func CompareHeight(r *tabstate.Run) int { return compareLayoutOf(r).total }

// compareChart draws both dialects' lanes up to the cursor: the frames
// shown so far of r, and as many of the twin.
func compareChart(r *tabstate.Run, frames []scenario.Frame) JSONOption {
	points := comparePoints(r, frames, 0)
	c := charts.NewHeatMap()
	c.SetXAxis(r.Times)
	c.SetGlobalOptions(Common(r, "")...)
	c.SetGlobalOptions(cellTooltip)
	cell := func(i int) charts.SeriesOpts {
		return charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.XAxisIndex, s.YAxisIndex = i, i })
	}
	for i := range 2 {
		c.AddSeries("ejected", nil, cells(points[i], ColorEjected, cell(i))...)
	}
	sc := charts.NewScatter()
	for i := range 2 {
		sc.AddSeries("overflow", nil, RawData(points[2+i]), marks(ColorOverflow, "triangle", 10, func(s *charts.SingleSeries) { s.XAxisIndex, s.YAxisIndex = i, i }))
	}
	c.Overlap(sc)

	lay := compareLayoutOf(r)
	top2 := CompareTitle + lay.plot + CompareGap + CompareTitle
	return Patched{c, func(o map[string]any) {
		grid := func(top int) map[string]any {
			return map[string]any{"left": 66, "right": 112, "top": top, "height": lay.plot, "containLabel": false}
		}
		o["grid"] = []any{grid(CompareTitle), grid(top2)}
		xAxis := func(i int, labels bool) map[string]any {
			return map[string]any{"type": "category", "data": r.Times, "gridIndex": i,
				"axisLabel": map[string]any{"show": labels, "fontSize": FontSize - 1, "color": ColorText, "hideOverlap": true}}
		}
		o["xAxis"] = []any{xAxis(0, false), xAxis(1, true)}
		// Every host named while its row holds a label; past that ECharts
		// leaves some out rather than overlap them.
		label := map[string]any{"fontSize": FontSize - 2, "color": ColorText}
		if len(r.Hosts) > 0 && lay.plot/len(r.Hosts) >= FontSize {
			label["interval"] = 0
		}
		yAxis := func(i int) map[string]any {
			return map[string]any{"type": "category", "data": r.Hosts, "gridIndex": i, "inverse": true,
				"axisLabel": label,
				"splitArea": map[string]any{"show": true, "areaStyle": map[string]any{"color": "#fafafa"}}}
		}
		o["yAxis"] = []any{yAxis(0), yAxis(1)}
		title := func(text string, top int) map[string]any {
			return map[string]any{"text": text, "left": 66, "top": top,
				"textStyle": map[string]any{"fontSize": FontSize - 1, "fontWeight": "bold", "color": ColorText}}
		}
		envoyTitle := "Envoy (outlier_detection_impl.cc)"
		if r.Scenario.Cluster.Dialect == engine.DialectGRPC {
			if why := TwinOf(r).refused; why != "" {
				envoyTitle = "Envoy refuses this cluster, so no run: " + why
			}
		}
		o["title"] = []any{title(envoyTitle, 0), title("gRPC (gRFC A50, grpc-go)", top2-CompareTitle)}
		// One piece colours both dialects' cells; the marks keep theirs.
		o["visualMap"] = []any{map[string]any{
			"type": "piecewise", "show": false, "seriesIndex": []int{0, 1},
			"pieces": []any{map[string]any{"min": 0.5, "max": 1.5, "color": ColorEjected}},
		}}
	}}
}

// comparePoints are the strip's series over frames[from:]: Envoy's
// ejected cells, gRPC's, then each one's refusals by the cap.
func comparePoints(r *tabstate.Run, frames []scenario.Frame, from int) [][]any {
	envoy, grpc := lanesOf(frames), cut(TwinOf(r), len(frames))
	if r.Scenario.Cluster.Dialect == engine.DialectGRPC {
		envoy, grpc = grpc, envoy
	}
	out := make([][]any, 4)
	for i, d := range []struct {
		name  string
		lanes *dialectLanes
	}{{"Envoy", envoy}, {"gRPC", grpc}} {
		for fi := from; fi < len(d.lanes.Ejected); fi++ {
			for hi, ejected := range d.lanes.Ejected[fi] {
				if ejected && hi < len(r.Hosts) && fi < len(r.Times) {
					out[i] = append(out[i], map[string]any{"value": []int{fi, hi, 1},
						"name": fmt.Sprintf("%s: %s ejected after %s", d.name, r.Hosts[hi], r.Times[fi])})
				}
			}
		}
		for _, m := range d.lanes.overflow {
			if m[0] >= from {
				out[2+i] = append(out[2+i], []int{m[0], m[1]})
			}
		}
	}
	return out
}

// cut is l up to the first n frames.
func cut(l *dialectLanes, n int) *dialectLanes {
	out := &dialectLanes{Ejected: l.Ejected[:min(n, len(l.Ejected))], refused: l.refused}
	for _, m := range l.overflow {
		if m[0] < n {
			out.overflow = append(out.overflow, m)
		}
	}
	return out
}
