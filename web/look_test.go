package web

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"outlierlab/engine/explain"
	"outlierlab/web/chart"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// Tests of what issue 10 added below the page: the folded decision log,
// the chart markers, the charts' text alternatives, the host palette and
// the projector view's address. The browser side is browser_look_test.go.

// A run of like non-events in a row is one line at its newest, with how
// many intervals it stands for and their span; a decision breaks the run.
func TestLogFolds(t *testing.T) {
	t.Parallel()
	r := webtest.BuildRun(t, tabstate.Inputs{Preset: "search-cache", Values: map[string]float64{"max_ejection_percent": 34}})
	lines, replaced, omitted := tabstate.FoldedLog(r, 0, len(r.Frames), 0)
	if len(replaced) != 0 || omitted != 0 {
		t.Fatalf("a whole log replaces %v, omits %d", replaced, omitted)
	}
	var got []string
	for _, l := range lines {
		got = append(got, l.Time+" "+badge(l))
	}
	want := []string{
		"260–300 s NO OUTLIER ×5", "250 s EJECTED", "240 s NO OUTLIER", "240 s RETURNS",
		"160–230 s NO OUTLIER ×8", "150 s EJECTED", "140 s NO OUTLIER", "140 s RETURNS",
		"90–130 s NO OUTLIER ×5", "80 s EJECTED", "70 s NO OUTLIER", "70 s RETURNS",
		"50–60 s NO OUTLIER ×2", "40 s EJECTED", "10–30 s NO OUTLIER ×3",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("folded log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The folded line says the newest interval's sentence, under the id of
	// its first.
	if l := lines[4]; l.ID != "lg-15-0" || l.Count != 8 || !l.Quiet || l.Text() != r.Log[22][0].Text() {
		t.Errorf("the 160–230 s line: %+v", l)
	}
	if lines[1].Quiet || lines[3].Quiet || lines[1].Count != 0 {
		t.Errorf("decisions are not quiet, nor folded: %+v, %+v", lines[1], lines[3])
	}
	// The limit keeps the newest lines and counts the rest.
	if few, _, om := tabstate.FoldedLog(r, 0, len(r.Frames), 4); len(few) != 4 || om != len(lines)-4 || few[0].ID != lines[0].ID {
		t.Errorf("limit 4: %d lines, %d omitted", len(few), om)
	}
}

func badge(e view.LogEntry) string {
	if e.Count > 1 {
		return e.Badge + " ×" + tabstate.Itoa(e.Count)
	}
	return e.Badge
}

// What the stream sends as a run plays, one frame at a time (the lines to
// replace removed, the new ones prepended), is the log a redraw would
// send at every cursor.
func TestLogFoldsAsItPlays(t *testing.T) {
	t.Parallel()
	for _, in := range []tabstate.Inputs{
		{Preset: "search-cache", Values: map[string]float64{"max_ejection_percent": 34}},
		{Preset: "shared-dependency"}, {Preset: "flapping"},
		{Preset: "search-cache", Inject: "h2@60s"},
	} {
		r := webtest.BuildRun(t, in)
		var page []view.LogEntry
		for c := 1; c <= len(r.Frames); c++ {
			add, replaced, _ := tabstate.FoldedLog(r, c-1, c, 0)
			page = slices.DeleteFunc(page, func(e view.LogEntry) bool { return slices.Contains(replaced, e.ID) })
			page = append(slices.Clone(add), page...)
			want, _, _ := tabstate.FoldedLog(r, 0, c, 0)
			if !slices.EqualFunc(page, want, func(a, b view.LogEntry) bool { return a.ID == b.ID && a.Time == b.Time && a.Count == b.Count }) {
				t.Fatalf("%s at cursor %d: the played log differs from the redrawn one", in.Preset, c)
			}
			ids := map[string]bool{}
			for _, e := range page {
				if ids[e.ID] {
					t.Fatalf("%s at cursor %d: id %s twice", in.Preset, c, e.ID)
				}
				ids[e.ID] = true
			}
		}
	}
}

// The quiet outcomes are the ones that decide nothing; an injected fault
// is not one.
func TestQuietOutcomes(t *testing.T) {
	t.Parallel()
	for o := explain.Ejected; o <= explain.NoOutlier; o++ {
		want := o == explain.Skipped || o == explain.NotCounted || o == explain.NoOutlier
		if tabstate.Quiet[o] != want {
			t.Errorf("%s quiet = %v", o.Badge(), tabstate.Quiet[o])
		}
	}
	r := webtest.BuildRun(t, tabstate.Inputs{Preset: "search-cache", Inject: "h2@60s"})
	if e := r.Log[6][0]; e.Badge != "INJECTED" || e.Quiet {
		t.Errorf("the injection's line: %+v", e)
	}
}

// markData is the events series of a chart option: its lines as
// "name@tick" and its areas as "name@from–to".
func markData(t *testing.T, raw json.RawMessage) (lines, areas []string, legend []string) {
	t.Helper()
	var o struct {
		Series []struct {
			Name     string `json:"name"`
			MarkLine struct {
				Data []struct{ Name, XAxis string }
			} `json:"markLine"`
			MarkArea struct {
				Data [][]struct{ Name, XAxis string }
			} `json:"markArea"`
		} `json:"series"`
		Legend struct {
			Show *bool    `json:"show"`
			Data []string `json:"data"`
		} `json:"legend"`
		Aria struct {
			Enabled *bool `json:"enabled"`
			Label   struct{ Description string }
		} `json:"aria"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	if o.Aria.Enabled == nil || *o.Aria.Enabled {
		t.Errorf("ECharts' aria is on")
	}
	// The markers are the last three series, all named events: ejections
	// (and the fault areas), refusals, injections.
	n := len(o.Series)
	for k, ev := range o.Series[n-3:] {
		if ev.Name != chart.EventsSeries {
			t.Fatalf("series %d is %q, not the markers", n-3+k, ev.Name)
		}
		for _, l := range ev.MarkLine.Data {
			lines = append(lines, l.Name+"@"+l.XAxis)
		}
		for _, a := range ev.MarkArea.Data {
			areas = append(areas, a[0].Name+"@"+a[0].XAxis+"–"+a[1].XAxis)
		}
	}
	slices.SortStableFunc(lines, func(a, b string) int { return tickOf(a) - tickOf(b) })
	if o.Legend.Show != nil && !*o.Legend.Show {
		t.Errorf("the legend is hidden")
	}
	return lines, areas, o.Legend.Data
}

// tickOf is the seconds of a marker "name@40 s", to order them by time.
func tickOf(m string) int {
	n := 0
	for _, ch := range m[strings.LastIndex(m, "@")+1:] {
		if ch < '0' || ch > '9' {
			break
		}
		n = n*10 + int(ch-'0')
	}
	return n
}

// Every chart marks the fault, the injections, the ejections and the
// overflows on its time axis, as far as the cursor, and names them in its
// legend.
func TestChartMarkers(t *testing.T) {
	t.Parallel()
	r := webtest.BuildRun(t, tabstate.Inputs{Preset: "search-cache", Values: map[string]float64{"max_ejection_percent": 34}, Inject: "h2@60s"})
	// h5 at 40, 80, 150 and 250 s (the story without injection), h2 once
	// its injected fault has run an interval.
	wantLines := []string{"ejected: h5@40 s", "injected: h2@60 s", "ejected: h2@70 s", "ejected: h5@80 s", "ejected: h2@110 s",
		"ejected: h5@150 s", "ejected: h2@180 s", "ejected: h5@250 s", "ejected: h2@280 s"}
	for id, raw := range chart.Options(r, len(r.Frames)) {
		lines, areas, legend := markData(t, raw)
		if !slices.Equal(lines, wantLines) || !slices.Equal(areas, []string{"fault: h5: 503, 1 in 3 from 30 s@30 s–300 s"}) {
			t.Errorf("%s: lines %v, areas %v", id, lines, areas)
		}
		if legend != nil && !slices.Contains(legend, chart.EventsSeries) {
			t.Errorf("%s: the legend %v leaves out the markers", id, legend)
		}
	}
	// Before the fault, nothing; at 50 s the fault so far and one ejection.
	lines, areas, _ := markData(t, chart.Options(r, 2)[chart.ChartSuccessRate])
	if len(lines)+len(areas) != 0 {
		t.Errorf("markers at 20 s: %v %v", lines, areas)
	}
	lines, areas, _ = markData(t, chart.Options(r, 5)[chart.ChartLanes])
	if !slices.Equal(lines, []string{"ejected: h5@40 s"}) || !slices.Equal(areas, []string{"fault: h5: 503, 1 in 3 from 30 s@30 s–50 s"}) {
		t.Errorf("markers at 50 s: %v %v", lines, areas)
	}
	// The default cap: a refusal at every sweep from 40 s, one line at the
	// first naming the span so far; a single refusal is named alone.
	d := webtest.BuildRun(t, tabstate.Inputs{Preset: "search-cache"})
	for _, tc := range []struct {
		frames int
		want   string
	}{
		{4, "refused by the cap: h5@40 s"},
		{6, "refused by the cap: h5 at each of the 3 sweeps 40–60 s@40 s"},
		{len(d.Frames), "refused by the cap: h5 at each of the 27 sweeps 40–300 s@40 s"},
	} {
		lines, _, _ = markData(t, chart.Options(d, tc.frames)[chart.ChartClients])
		if !slices.Equal(lines, []string{tc.want}) {
			t.Errorf("overflow markers of %d frames: %v, want %s", tc.frames, lines, tc.want)
		}
	}
	// A window that ends is shaded to its end.
	f := webtest.BuildRun(t, tabstate.Inputs{Preset: "flapping"})
	_, areas, _ = markData(t, chart.Options(f, 10)[chart.ChartCounters])
	if !slices.Equal(areas, []string{"fault: h1: 503, every request from 30 s@30 s–50 s", "fault: h1: 503, every request from 60 s@60 s–80 s", "fault: h1: 503, every request from 90 s@90 s–100 s"}) {
		t.Errorf("flapping areas at 100 s: %v", areas)
	}
}

// Each chart's text alternative says what it shows at the cursor in one
// sentence, and the option carries it for the page.
func TestChartTextAlternatives(t *testing.T) {
	t.Parallel()
	d := webtest.BuildRun(t, tabstate.Inputs{Preset: "search-cache"})
	c34 := webtest.BuildRun(t, tabstate.Inputs{Preset: "search-cache", Values: map[string]float64{"max_ejection_percent": 34}})
	cases := []struct {
		r      *tabstate.Run
		cursor int
		id     string
		want   string
	}{
		{d, 0, chart.ChartSuccessRate, "no interval has run yet: press play or step."},
		{d, 4, chart.ChartSuccessRate, "At 40 s the mean success rate is 94.5% and the threshold 70.9%; the lowest, h5 at 66.7%, is below it: an outlier."},
		{d, 2, chart.ChartSuccessRate, "At 20 s the mean success rate is 100.0% and the threshold 100.0%; the lowest, h0 at 100.0%, is above it."},
		{d, 6, chart.ChartLanes, "At 60 s no host is ejected; so far 3 ejections refused by the cap and 0 detected without enforcing."},
		{c34, 4, chart.ChartLanes, "At 40 s 1 of 6 hosts is ejected: h5 (×1); so far 0 ejections refused by the cap and 0 detected without enforcing."},
		{c34, 4, chart.ChartCounters, "At 40 s the detector has counted 1 detected, 1 enforced and 0 refused by the cap (overflow); 1 host is ejected now."},
	}
	for _, tc := range cases {
		c := chart.List[slices.IndexFunc(chart.List, func(c chart.Chart) bool { return c.ID == tc.id })]
		got := c.Alt(tc.r, tc.r.Frames[:tc.cursor])
		if got != tc.want {
			t.Errorf("%s at %d: %q\nwant %q", tc.id, tc.cursor, got, tc.want)
		}
		var o struct {
			Aria struct{ Label struct{ Description string } }
		}
		_ = json.Unmarshal(chart.Options(tc.r, tc.cursor)[tc.id], &o)
		if o.Aria.Label.Description != got {
			t.Errorf("%s at %d: the option says %q", tc.id, tc.cursor, o.Aria.Label.Description)
		}
	}
	for _, c := range chart.List {
		for _, cur := range []int{1, 15, 30} {
			if s := c.Alt(c34, c34.Frames[:cur]); !strings.HasPrefix(s, "At ") && !strings.HasPrefix(s, "In the interval to ") || strings.Count(s, ". ") > 0 {
				t.Errorf("%s at %d: not one sentence about the cursor: %q", c.ID, cur, s)
			}
		}
	}
	if b := chart.BoxesAt(c34, 4); b[1].Alt != cases[4].want {
		t.Errorf("the page's lanes box says %q", b[1].Alt)
	}
}

// The host palette: hosts told apart from one another, and never near the
// colours that mean something (CIE76 ΔE in Lab, where about 2 is just
// noticeable and 25 unmistakable).
func TestHostPalette(t *testing.T) {
	t.Parallel()
	states := map[string]string{"threshold": chart.ColorThreshold, "ejected": chart.ColorEjected, "overflow": chart.ColorOverflow,
		"detect only": chart.ColorDetect, "mean": chart.ColorMean, "injected": chart.ColorInjected}
	for i, a := range chart.HostColors {
		for _, b := range chart.HostColors[i+1:] {
			if d := deltaE(a, b); d < 25 {
				t.Errorf("hosts %s and %s: ΔE %.1f", a, b, d)
			}
		}
		for name, s := range states {
			if d := deltaE(a, s); d < 28 {
				t.Errorf("host %s near %s %s: ΔE %.1f", a, name, s, d)
			}
		}
	}
}

// deltaE is the CIE76 colour difference of two sRGB colours "#rrggbb".
func deltaE(a, b string) float64 {
	la, lb := cieLab(a), cieLab(b)
	return math.Sqrt((la[0]-lb[0])*(la[0]-lb[0]) + (la[1]-lb[1])*(la[1]-lb[1]) + (la[2]-lb[2])*(la[2]-lb[2]))
}

func cieLab(hex string) [3]float64 {
	var c [3]float64
	for i := range c {
		var v int
		for _, ch := range strings.ToLower(hex[1+2*i : 3+2*i]) {
			v = v*16 + strings.IndexRune("0123456789abcdef", ch)
		}
		x := float64(v) / 255
		if x <= 0.04045 {
			c[i] = x / 12.92
		} else {
			c[i] = math.Pow((x+0.055)/1.055, 2.4)
		}
	}
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	x := f((0.4124*c[0] + 0.3576*c[1] + 0.1805*c[2]) / 0.95047)
	y := f(0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2])
	z := f((0.0193*c[0] + 0.1192*c[1] + 0.9505*c[2]) / 1.08883)
	return [3]float64{116*y - 16, 500 * (x - y), 200 * (y - z)}
}

// The projector view is a way to lay out the lab and the lessons, asked
// for in the address; any other view is refused, named.
func TestProjectorViewAddress(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	for _, tc := range []struct {
		target string
		status int
		want   string
	}{
		{"/lab?view=projector", 200, `class="lab projector"`},
		{"/lab?preset=bad-deploy&view=projector&max_ejection_percent=30&t=40", 200, `class="lab projector"`},
		{"/lab", 200, `class="lab"`},
		{"/lessons/cap?view=projector", 200, `class="lab lesson-lab projector"`},
		{"/lab?view=wall", 400, `view: &#34;wall&#34; is not a view (allowed projector)`},
		{"/lessons/cap?view=wall", 400, `view: &#34;wall&#34; is not a view (allowed projector)`},
		{"/lab?view=projector&view=projector", 400, "view: is given 2 times (allowed once)"},
	} {
		res := webtest.Do(t, h, "GET", tc.target, "")
		body := webtest.Body(t, res)
		if res.StatusCode != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d, want %d with %s", tc.target, res.StatusCode, tc.status, tc.want)
		}
		if tc.status == 200 && !strings.Contains(body, "<h1") {
			t.Errorf("%s: no <h1>", tc.target)
		}
	}
}
