package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"outlierlab/engine/scenario"
	"outlierlab/engine/sweep"
	"outlierlab/web/budget"
	"outlierlab/web/chart"
	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

type sweepEntry struct {
	key  string
	sw   *sweep.Sweep
	took time.Duration
}

// sweepKey names a sweep in the cache.
func sweepKey(spec sweep.Spec) string {
	return fmt.Sprintf("%s|%v|%s|%v|%v", spec.Preset.Name, spec.Base, spec.Param, spec.Values, spec.Seeds)
}

// sweepWork weighs a sweep's distinct runs against the budget: each as
// any run is (CheckRun: past the ceiling for one run, the setting that
// makes it heavy is named), then all together, whose field is step (or
// seeds, for one value), what the visitor changes.
func (s *Tools) sweepWork(sq sweepQuery, jobs []sweep.Job) error {
	var units, heaviest int64
	for _, j := range jobs {
		if err := s.budget.CheckRun(j.Scenario, j.Config); err != nil {
			return err
		}
		w := budget.RunWork(j.Scenario, j.Config)
		units, heaviest = units+w, max(heaviest, w)
	}
	field := "step"
	if len(sq.values) == 1 {
		field = "seeds"
	}
	return s.budget.CheckWork(field, units,
		fmt.Sprintf("%d values × %d seeds is %d distinct runs of up to %s units each", len(sq.values), len(sq.seeds), len(jobs), budget.Millions(heaviest)),
		"a larger step, a narrower range, fewer seeds, or a lighter run: fewer hosts, a lower rps, a longer interval")
}

// sweepPage handles GET /sweep: a sweep run before is shown at once;
// otherwise the sweep is planned (a bad value is a 400), weighed (past
// the budget, a 422), admitted (a 503 when the lab is busy), then run
// on a streamed page with its progress.
func (s *Tools) sweepPage(w http.ResponseWriter, r *http.Request) {
	if r.URL.RawQuery == "" {
		// A bare /sweep is where a person starts: the form (the cap of
		// the default preset chosen), not a 400 for the missing param.
		const param = "max_ejection_percent"
		s.pages.Render(w, r, http.StatusOK, templates.SweepStartPage(view.Sweep{
			Layout: s.pages.Layout("Sweep a setting", "lab", true), Preset: tabstate.DefaultPreset, Param: param, Seeds: "1-5",
			Presets: page.PresetLinks(tabstate.DefaultPreset), Params: SweepParamViews(param),
		}))
		return
	}
	sq, err := parseSweepQuery(r.URL.RawQuery)
	if err != nil {
		if k := httperr.KindOf(err, httperr.KindMalformed); k == httperr.KindURITooLong {
			httperr.Write(w, err, k)
			return
		}
		s.pages.BadRequest(w, r, httperr.Status[httperr.KindMalformed], "/sweep?preset="+tabstate.DefaultPreset+"&param=max_ejection_percent", httperr.Text(err))
		return
	}
	p, ok := scenario.Lookup(sq.preset)
	if !ok {
		s.pages.NotFound(w, r, fmt.Sprintf("There is no scenario preset called %q.", httperr.Truncate(sq.preset, 60)))
		return
	}
	spec := sq.spec(p)
	key := sweepKey(spec)
	layout := s.pages.Layout("Sweep: "+sq.ctl.Name, "lab", true)
	if e, ok := s.sweeps.Peek(key); ok {
		v := sweepView(sq, e)
		v.Layout = layout
		s.pages.Render(w, r, http.StatusOK, templates.SweepPage(v))
		return
	}
	plain := "/sweep?preset=" + p.Name + "&param=" + sq.ctl.Name
	jobs, err := sweep.Plan(spec)
	if err != nil {
		s.pages.BadRequest(w, r, httperr.Status[httperr.KindMalformed], plain, httperr.Text(err))
		return
	}
	if err := s.sweepWork(sq, jobs); err != nil {
		s.pages.BadRequest(w, r, httperr.Status[httperr.KindOf(err, httperr.KindOverBudget)], plain, httperr.Text(err))
		return
	}
	cores := min(len(jobs), int(s.budget.Workers))
	spec.Workers = cores
	s.heavy(w, r, cores, layout, fmt.Sprintf("Sweeping %s: %d runs", sq.ctl.Name, len(jobs)), func(pr *page.Progress) (templ.Component, error) {
		spec.Progress = func(done, total int) {
			tabstate.CountRun() // one call per distinct run
			pr.Step(done, total, "runs")
		}
		start := time.Now()
		sw, err := sweep.Run(r.Context(), spec)
		if err != nil {
			return nil, err
		}
		e := sweepEntry{key: key, sw: sw, took: time.Since(start)}
		s.sweeps.Put(key, e)
		pr.Phase("drawing the charts")
		v := sweepView(sq, e)
		v.Layout = layout
		return templates.SweepContent(v), nil
	})
}

// sweepView is the page of a sweep: the form, the charts and the table.
func sweepView(sq sweepQuery, e sweepEntry) view.Sweep {
	bands := e.sw.Bands()
	v := view.Sweep{
		Preset: sq.preset, Param: sq.ctl.Name, Label: sq.ctl.Label,
		From: sq.from, To: sq.to, Step: sq.step, Seeds: sq.seedSpec,
		Presets: page.PresetLinks(sq.preset), Params: SweepParamViews(sq.ctl.Name),
		Runs: e.sw.Runs, Points: len(sq.values), SeedCount: len(sq.seeds),
		Took:   strconv.FormatFloat(e.took.Seconds(), 'f', 2, 64) + " s",
		Charts: sweepCharts(sq, bands, e.sw),
	}
	for name, val := range sq.base.Values {
		v.Base = append(v.Base, name+" = "+tabstate.ControlByName[name].Display(val))
	}
	slices.Sort(v.Base)
	if sq.base.Inject != "" {
		v.Base = append(v.Base, "inject = "+sq.base.Inject)
	}
	for i, b := range bands {
		v.Rows = append(v.Rows, view.SweepRow{
			Value: b.Value, Display: sq.ctl.Display(sq.values[i]), URL: sq.pointURL(i),
			Failure: pct(b.FailurePct.Median), Ejections: httperr.FormatNumber(b.Ejections.Median),
			Overflows: httperr.FormatNumber(b.Overflows.Median), PanicS: httperr.FormatNumber(b.PanicS.Median) + " s",
		})
	}
	return v
}

// SweepParamViews are the sweep form's choices, each with its span.
func SweepParamViews(selected string) []view.SweepParam {
	var out []view.SweepParam
	for _, c := range sweepParams() {
		out = append(out, view.SweepParam{Name: c.Name, Label: c.Label, Min: httperr.FormatNumber(c.Min), Max: httperr.FormatNumber(c.Max), Step: httperr.FormatNumber(c.Step), Selected: c.Name == selected})
	}
	return out
}

// sweepMetric is one chart of the sweep: a metric of every point.
type sweepMetric struct {
	id, title, unit string
	stat            func(sweep.Band) sweep.Stat
	of              func(sweep.Point) float64
}

var sweepMetrics = []sweepMetric{
	{"sweep-failure", "Client failures", "%", func(b sweep.Band) sweep.Stat { return b.FailurePct }, func(p sweep.Point) float64 { return p.FailurePct }},
	{"sweep-ejections", "Ejections", "", func(b sweep.Band) sweep.Stat { return b.Ejections }, func(p sweep.Point) float64 { return float64(p.Ejections) }},
	{"sweep-overflows", "Ejections refused by the cap (overflows)", "", func(b sweep.Band) sweep.Stat { return b.Overflows }, func(p sweep.Point) float64 { return float64(p.Overflows) }},
	{"sweep-panic", "Time in panic", " s", func(b sweep.Band) sweep.Stat { return b.PanicS }, func(p sweep.Point) float64 { return p.PanicS }},
}

// sweepCharts are a chart per metric against the swept value: the median
// over the seeds as a line in the band from the lowest to the highest
// seed, and seed 1 (the lab's run) as points; a click on a point opens the
// lab at that value.
func sweepCharts(sq sweepQuery, bands []sweep.Band, sw *sweep.Sweep) view.StaticCharts {
	labels := make([]string, len(sq.values))
	for i, v := range sq.values {
		labels[i] = sq.ctl.Display(v)
	}
	seed1 := slices.Index(sw.Seeds, 1)
	out := map[string]json.RawMessage{}
	var boxes []view.Chart
	for _, m := range sweepMetrics {
		boxes = append(boxes, view.Chart{ID: m.id, Size: "half", Title: m.title,
			Caption: fmt.Sprintf("against %s · line: median of seeds %s · band: lowest to highest seed · dots: seed 1, the lab's run · click a point to open it in the lab", sq.ctl.Name, sq.seedSpec)})
		out[m.id] = chart.OptionJSON(sweepChart(sq, labels, bands, sw, seed1, m))
	}
	o, _ := json.Marshal(out)
	return view.StaticCharts{Boxes: boxes, Options: string(o), Heights: "{}"}
}

// sweepChart is one metric's chart. The band is two stacked series (the
// lowest seed, then highest − lowest, filled), silent so the tooltip is the
// median's and seed 1's, which say the band in words.
func sweepChart(sq sweepQuery, labels []string, bands []sweep.Band, sw *sweep.Sweep, seed1 int, m sweepMetric) chart.JSONOption {
	c := charts.NewLine()
	c.SetXAxis(labels)
	c.SetGlobalOptions(chart.Common(&tabstate.Run{Times: labels}, m.unit)...)
	c.SetGlobalOptions(charts.WithYAxisOpts(chart.YAxis(m.unit, 0, nil)),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Left: "center", TextStyle: &opts.TextStyle{FontSize: chart.FontSize - 2, Color: chart.ColorText}}),
		chart.Grid(16, 40))
	low, width, median := make([]any, len(bands)), make([]any, len(bands)), make([]any, len(bands))
	for i, b := range bands {
		st := m.stat(b)
		low[i], width[i] = round4(st.Min), round4(st.Max-st.Min)
		median[i] = map[string]any{"value": chart.Round2(st.Median), "url": sq.pointURL(i),
			"name": fmt.Sprintf("%s = %s: median %s%s (seeds: %s–%s%s) · click to open in the lab", sq.ctl.Name, labels[i], httperr.FormatNumber(chart.Round2(st.Median)), m.unit, httperr.FormatNumber(chart.Round2(st.Min)), httperr.FormatNumber(chart.Round2(st.Max)), m.unit)}
	}
	silent := func(s *charts.SingleSeries) { s.Stack = "band"; s.ShowSymbol = opts.Bool(false) }
	edge := charts.WithLineStyleOpts(opts.LineStyle{Opacity: opts.Float(0.01)})
	c.AddSeries("lowest seed", nil, chart.RawData(low), edge, charts.WithSeriesOpts(silent))
	c.AddSeries("seeds "+sq.seedSpec, nil, chart.RawData(width), chart.SeriesColor(chart.ColorA), edge,
		charts.WithAreaStyleOpts(opts.AreaStyle{Color: chart.ColorA, Opacity: opts.Float(0.18)}), charts.WithSeriesOpts(silent))
	c.AddSeries("median", nil, chart.RawData(median), chart.SeriesColor(chart.ColorA), chart.LineStyle(chart.ColorA, 3, ""),
		charts.WithSeriesTooltipOpts(opts.SeriesTooltip{Formatter: types.FuncStr("{b}")}),
		charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.SymbolSize = 8 }))
	if seed1 >= 0 {
		dots := make([]any, len(bands))
		for i := range bands {
			p := sw.Points[i*len(sw.Seeds)+seed1]
			dots[i] = map[string]any{"value": []any{i, chart.Round2(m.of(p))}, "url": sq.pointURL(i),
				"name": fmt.Sprintf("seed 1 at %s = %s: %s%s · click to open in the lab", sq.ctl.Name, labels[i], httperr.FormatNumber(chart.Round2(m.of(p))), m.unit)}
		}
		sc := charts.NewScatter()
		sc.AddSeries("seed 1 (the lab's)", nil, chart.RawData(dots), chart.SeriesColor(chart.ColorB),
			charts.WithSeriesTooltipOpts(opts.SeriesTooltip{Formatter: types.FuncStr("{b}")}),
			charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.SymbolSize = 6 }))
		c.Overlap(sc)
	}
	return chart.Patched{JSONOption: c, Patch: func(o map[string]any) {
		// The band's two series are silent (no tooltip, no hover): the
		// median's and seed 1's tooltips say the band in words. The
		// legend leaves out its lower edge, which no reader needs named.
		series, _ := plain(o["series"]).([]any)
		for _, s := range series[:2] {
			s.(map[string]any)["silent"] = true
		}
		if len(series) > 3 { // seed 1's dots above the median's symbols
			series[3].(map[string]any)["z"] = 5
		}
		o["series"] = series
		legend, _ := plain(o["legend"]).(map[string]any)
		legend["data"] = []string{"median", "seeds " + sq.seedSpec, "seed 1 (the lab's)"}
		o["legend"] = legend
	}}
}

// round4 keeps a band's edges apart where seeds differ in the third
// decimal (5.0019% and 4.9980%).
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// plain is v as plain JSON values (maps, slices), for a patch to change
// what go-echarts has no field for.
func plain(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic("web: chart option: " + err.Error())
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
