package chart_test

import (
	"encoding/json"
	"strings"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/web/chart"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/labview"
	"outlierlab/web/tabstate"
)

type option struct {
	XAxis []struct {
		Type string   `json:"type"`
		Data []string `json:"data"`
	} `json:"xAxis"`
	Series []struct {
		Name     string            `json:"name"`
		Type     string            `json:"type"`
		Data     []json.RawMessage `json:"data"`
		MarkArea *struct {
			Data []json.RawMessage `json:"data"`
		} `json:"markArea"`
	} `json:"series"`
	Animation *bool `json:"animation"`
}

func decodeOption(t *testing.T, raw json.RawMessage) option {
	t.Helper()
	var o option
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// Every chart: a category x axis with every tick of the run (the timeline
// never rescales while playing), animation off, data up to the cursor.
func TestChartOptionsShape(t *testing.T) {
	r := webtest.DefaultRun(t, -1)
	opts := chart.Options(r, 12)
	if len(opts) != len(chart.List) {
		t.Fatalf("%d charts, want %d", len(opts), len(chart.List))
	}
	for _, c := range chart.List {
		id := c.ID
		o := decodeOption(t, opts[id])
		if len(o.XAxis) == 0 || o.XAxis[0].Type != "category" || len(o.XAxis[0].Data) != len(r.Frames) || o.XAxis[0].Data[3] != "40 s" {
			t.Errorf("%s: x axis %+v", id, o.XAxis)
		}
		if o.Animation == nil || *o.Animation {
			t.Errorf("%s: animation not off", id)
		}
		if strings.Contains(string(opts[id]), "</") {
			t.Errorf("%s: option JSON could close a script element", id)
		}
	}
	sr := decodeOption(t, opts[chart.ChartSuccessRate])
	if len(sr.Series) != len(r.Hosts)+5 || sr.Series[6].Name != "mean" || sr.Series[7].Name != "threshold" || sr.Series[8].Name != chart.EventsSeries {
		t.Fatalf("success-rate series: %d", len(sr.Series))
	}
	for _, s := range sr.Series[:8] {
		if len(s.Data) != 12 {
			t.Errorf("series %s has %d points at cursor 12", s.Name, len(s.Data))
		}
	}
	// h5 fails from 30 s: at 40 s (frame 3) it is below the threshold.
	var h5, thr float64
	json.Unmarshal(sr.Series[5].Data[3], &h5)
	json.Unmarshal(sr.Series[7].Data[3], &thr)
	if !(h5 < thr) || h5 < 60 || h5 > 70 {
		t.Errorf("h5 at 40 s: %v, threshold %v", h5, thr)
	}
}

// The swimlanes say what the detector did: overflow marks with the default
// cap, ejected cells with cap 34.
func TestLanesChart(t *testing.T) {
	lanes := func(cap float64) option {
		in := tabstate.Inputs{Preset: tabstate.DefaultPreset}
		if cap > 0 {
			in = in.With(map[string]float64{"max_ejection_percent": cap})
		}
		r, err := tabstate.BuildRun(in)
		if err != nil {
			t.Fatal(err)
		}
		return decodeOption(t, chart.Options(r, len(r.Frames))[chart.ChartLanes])
	}
	count := func(o option, name string) int {
		for _, s := range o.Series {
			if s.Name == name {
				return len(s.Data)
			}
		}
		t.Fatalf("no series %q", name)
		return 0
	}
	def := lanes(0)
	if count(def, "ejected") != 0 || count(def, "overflow") == 0 {
		t.Errorf("defaults: %d ejected, %d overflow", count(def, "ejected"), count(def, "overflow"))
	}
	c34 := lanes(34)
	if count(c34, "ejected") == 0 || count(c34, "overflow") != 0 {
		t.Errorf("cap 34: %d ejected, %d overflow", count(c34, "ejected"), count(c34, "overflow"))
	}
}

func TestPanicShading(t *testing.T) {
	r := &tabstate.Run{Times: []string{"10 s", "20 s", "30 s", "40 s", "50 s"}}
	frames := []scenario.Frame{{}, {Panic: true}, {Panic: true}, {}, {Panic: true}}
	got, _ := json.Marshal(chart.PanicAreas(r, frames))
	want := `[[{"name":"panic","xAxis":"20 s"},{"xAxis":"30 s"}],[{"name":"panic","xAxis":"50 s"},{"xAxis":"50 s"}]]`
	if string(got) != want {
		t.Errorf("panic areas\n got %s\nwant %s", got, want)
	}
}

// The acceptance story, without a browser: cap 34 ejects h5 at 40, 80,
// 150 and 250 s and clients see fewer failures than with the default cap.
func TestSearchCacheStory(t *testing.T) {
	def, err := tabstate.BuildRun(tabstate.Inputs{Preset: tabstate.DefaultPreset})
	if err != nil {
		t.Fatal(err)
	}
	c34, err := tabstate.BuildRun(tabstate.Inputs{Preset: tabstate.DefaultPreset}.With(map[string]float64{"max_ejection_percent": 34}))
	if err != nil {
		t.Fatal(err)
	}
	var at []int64
	for _, f := range c34.Frames {
		for _, e := range f.Events {
			if e.Kind == engine.EventEject {
				at = append(at, e.AtMs/1000)
			}
		}
	}
	if got := jsonString(at); got != "[40,80,150,250]" {
		t.Errorf("ejections at %v s, want 40, 80, 150, 250", at)
	}
	fail := func(r *tabstate.Run) (req, failed uint64) {
		for _, f := range r.Frames[3:] { // from the fault on
			req += f.Clients.Requests
			failed += f.Clients.Failures
		}
		return
	}
	dr, df := fail(def)
	cr, cf := fail(c34)
	if float64(cf)/float64(cr) >= float64(df)/float64(dr)/2 {
		t.Errorf("client failures: defaults %d/%d, cap 34 %d/%d: want far fewer", df, dr, cf, cr)
	}
	if !strings.Contains(tabstate.SummaryLine(c34, len(c34.Frames)), "4 ejections") {
		t.Errorf("summary: %s", tabstate.SummaryLine(c34, len(c34.Frames)))
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The clients chart shows the retries refused (upstream_rq_retry_overflow)
// beside the retries sent, interval by interval, and the stats table has
// the same count under the cluster's own prefix: bad-deploy under Envoy's
// default breaker (3) refuses retries from the fault on.
func TestRetryOverflowShown(t *testing.T) {
	r, err := tabstate.BuildRun(tabstate.Inputs{Preset: "bad-deploy"})
	if err != nil {
		t.Fatal(err)
	}
	o := decodeOption(t, chart.Options(r, len(r.Frames))[chart.ChartClients])
	var overflow []uint64
	for _, s := range o.Series {
		if s.Name == "retry overflow" {
			for _, d := range s.Data {
				var v uint64
				if err := json.Unmarshal(d, &v); err != nil {
					t.Fatal(err)
				}
				overflow = append(overflow, v)
			}
		}
	}
	if len(overflow) != len(r.Frames) {
		t.Fatalf("retry overflow series: %d points for %d frames (series %+v)", len(overflow), len(r.Frames), o.Series)
	}
	var sum uint64
	for i, f := range r.Frames {
		if overflow[i] != f.Clients.BudgetRefusals {
			t.Errorf("%d ms: chart %d, frame %d", f.TMs, overflow[i], f.Clients.BudgetRefusals)
		}
		sum += overflow[i]
	}
	if sum == 0 || sum != r.Result.Summary.Cluster.RetryOverflow {
		t.Errorf("overflows charted %d, upstream_rq_retry_overflow %d", sum, r.Result.Summary.Cluster.RetryOverflow)
	}

	p := labview.Panels(r, len(r.Frames))
	if len(p.Stats) != 2 || p.Stats[0].Prefix != "cluster.bad-deploy.outlier_detection." || p.Stats[1].Prefix != "cluster.bad-deploy." {
		t.Fatalf("stat sections: %+v", p.Stats)
	}
	var found bool
	for _, row := range p.Stats[1].Rows {
		if row.Name == "upstream_rq_retry_overflow" {
			found = true
			last, prev := r.Frames[len(r.Frames)-1].Cluster.RetryOverflow, r.Frames[len(r.Frames)-2].Cluster.RetryOverflow
			if row.Value != sum || row.Delta != last-prev || row.Gauge {
				t.Errorf("row %+v, want %d (+%d)", row, sum, last-prev)
			}
		}
	}
	if !found {
		t.Errorf("no upstream_rq_retry_overflow row: %+v", p.Stats[1].Rows)
	}
	for _, row := range p.Stats[0].Rows {
		if strings.HasPrefix(row.Name, "upstream_") || row.Name == "lb_healthy_panic" {
			t.Errorf("cluster stat %s under outlier_detection", row.Name)
		}
	}
}

// The status line says the window of every failure share it prints: the
// run so far, since the fault (the lessons' "from 30 s"), the last
// interval; each number is the frames' own.
func TestSummaryLineWindows(t *testing.T) {
	r, err := tabstate.BuildRun(tabstate.Inputs{Preset: tabstate.DefaultPreset})
	if err != nil {
		t.Fatal(err)
	}
	share := func(from, to int) string {
		var req, fail uint64
		for _, f := range r.Frames[from:to] {
			req += f.Clients.Requests
			fail += f.Clients.Failures
		}
		return tabstate.Pct2(fail, req)
	}
	for _, tc := range []struct {
		cursor int
		has    []string
		hasNot []string
	}{
		{0, []string{"Press play"}, []string{"%"}},
		// Before the fault (30 s): no fault window yet.
		{2, []string{share(0, 2) + "% of ", " requests since 0 s", share(1, 2) + "% in the last interval (10–20 s)", "0 ejections, 0 refused by the cap"}, []string{"the fault"}},
		{8, []string{share(0, 8) + "% of ", " requests since 0 s", share(3, 8) + "% since 30 s (the fault)", share(7, 8) + "% in the last interval (70–80 s)", "refused by the cap"}, nil},
	} {
		got := tabstate.SummaryLine(r, tc.cursor)
		for _, s := range tc.has {
			if !strings.Contains(got, s) {
				t.Errorf("cursor %d: %q lacks %q", tc.cursor, got, s)
			}
		}
		for _, s := range tc.hasNot {
			if strings.Contains(got, s) {
				t.Errorf("cursor %d: %q has %q", tc.cursor, got, s)
			}
		}
	}
	if share(3, 8) == share(0, 8) || share(3, 8) == share(7, 8) {
		t.Errorf("the windows give the same share (%s, %s, %s): the test cannot tell them apart", share(0, 8), share(3, 8), share(7, 8))
	}
}

// The multiplier and num_ejections are on the swimlanes, not only in the
// host table: the lane label carries the multiplier at the cursor, an
// ejected cell's tooltip both. search-cache with the cap at 34 ejects h5
// at 40 s (×1), 80 s (×2), 150 s (×3) and 250 s.
func TestLanesShowMultiplier(t *testing.T) {
	r, err := tabstate.BuildRun(tabstate.Inputs{Preset: tabstate.DefaultPreset}.With(map[string]float64{"max_ejection_percent": 34}))
	if err != nil {
		t.Fatal(err)
	}
	type lanes struct {
		YAxis []struct {
			Data []string `json:"data"`
		} `json:"yAxis"`
		Series []struct {
			Name    string            `json:"name"`
			Data    []json.RawMessage `json:"data"`
			Tooltip *struct {
				Formatter string `json:"formatter"`
			} `json:"tooltip"`
		} `json:"series"`
	}
	at := func(cursor int) lanes {
		var l lanes
		if err := json.Unmarshal(chart.Options(r, cursor)[chart.ChartLanes], &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, tc := range []struct {
		cursor int
		h5     string
	}{
		{0, "h5"},
		{3, "h5"},    // 30 s: not ejected yet
		{4, "h5 ×1"}, // 40 s: ejected for 30 s
		{8, "h5 ×2"}, // 80 s: again, for 60 s
		{15, "h5 ×3"},
	} {
		l := at(tc.cursor)
		if len(l.YAxis) == 0 || len(l.YAxis[0].Data) != 6 || l.YAxis[0].Data[5] != tc.h5 || l.YAxis[0].Data[0] != "h0" {
			t.Errorf("cursor %d: lane labels %+v, want h5 as %q", tc.cursor, l.YAxis, tc.h5)
		}
	}
	l := at(9)
	if l.Series[0].Name != "ejected" || l.Series[0].Tooltip == nil || l.Series[0].Tooltip.Formatter != "{b}" {
		t.Fatalf("ejected series: %+v", l.Series[0])
	}
	var cells []struct {
		Value []int  `json:"value"`
		Name  string `json:"name"`
	}
	for _, d := range l.Series[0].Data {
		var c struct {
			Value []int  `json:"value"`
			Name  string `json:"name"`
		}
		if err := json.Unmarshal(d, &c); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, c)
	}
	want := []string{
		"h5 ejected after 40 s · multiplier ×1 · num_ejections 1",
		"h5 ejected after 50 s · multiplier ×1 · num_ejections 1",
		"h5 ejected after 60 s · multiplier ×1 · num_ejections 1",
		"h5 ejected after 80 s · multiplier ×2 · num_ejections 2",
		"h5 ejected after 90 s · multiplier ×2 · num_ejections 2",
	}
	if len(cells) != len(want) {
		t.Fatalf("%d ejected cells at 90 s, want %d: %+v", len(cells), len(want), cells)
	}
	for i, c := range cells {
		if c.Name != want[i] || len(c.Value) != 3 || c.Value[1] != 5 {
			t.Errorf("cell %d: %+v, want %q on h5's lane", i, c, want[i])
		}
	}
}
