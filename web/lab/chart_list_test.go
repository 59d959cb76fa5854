package lab

import (
	"encoding/json"
	"html"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"outlierlab/engine/course"
	"outlierlab/web/chart"
	"outlierlab/web/internal/webtest"
)

// The chart list is the one place a chart is named: every entry is drawn
// on the lab and lesson pages, in its order, with its title, caption and
// size, and every stream redraw sends an option for each entry and for no
// other chart, with a height for each entry whose height follows the run.
func TestChartListIsWhatPageAndStreamShow(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	halves := 0
	for _, c := range chart.List {
		if c.ID == "" || seen[c.ID] || c.Title == "" || c.Caption == "" || c.Build == nil || c.Alt == nil {
			t.Errorf("chart %q: an id (unique), a title, a caption, a builder and a text alternative are required", c.ID)
		}
		seen[c.ID] = true
		switch c.Size {
		case "half":
			halves++
		case "wide":
			if halves%2 != 0 {
				t.Errorf("chart %q: a wide chart after an odd number of halves leaves a hole in the grid", c.ID)
			}
		default:
			t.Errorf("chart %q: size %q (allowed wide, half: the stylesheet's classes)", c.ID, c.Size)
		}
	}

	lab := newTestServer(t)
	h := lab.Handler()
	// A lesson's box may have its step classes too (off-step, key).
	box := regexp.MustCompile(`<figure class="chart-box ([a-z]+)[a-z -]*" id="fig-[^"]+"[^>]*><figcaption><b class="chart-title">([^<]*)</b> .*?</figcaption><olab-chart class="chart" id="([^"]+)"[^>]*></olab-chart><div class="chart-table"[^>]*></div><p class="caption">([^<]*)</p>`)
	for _, page := range []string{"/lab", "/lab?preset=bad-deploy", "/lessons/" + lab.Lessons.List[0].ID} {
		res := webtest.Do(t, h, "GET", page, "")
		body := webtest.Body(t, res)
		if res.StatusCode != 200 {
			t.Fatalf("%s: status %d", page, res.StatusCode)
		}
		// Every box is there; a lesson that does not read the
		// Envoy-and-gRPC strip holds its box hidden (compare_strip).
		if hidden := regexp.MustCompile(`id="fig-` + chart.ChartCompare + `" hidden[ >]`).MatchString(body); hidden != strings.HasPrefix(page, "/lessons/") {
			t.Errorf("%s: the compare strip hidden %v", page, hidden)
		}
		got := box.FindAllStringSubmatch(body, -1)
		if len(got) != len(chart.List) || strings.Count(body, `class="chart"`) != len(chart.List) {
			t.Fatalf("%s: %d chart boxes, want %d", page, len(got), len(chart.List))
		}
		for i, c := range chart.List {
			if g := got[i]; g[3] != c.ID || g[1] != c.Size || html.UnescapeString(g[2]) != c.Title || html.UnescapeString(g[4]) != c.Caption {
				t.Errorf("%s: box %d is %q (%s) %q: %q, want %q (%s) %q: %q", page, i, g[3], g[1], g[2], g[4], c.ID, c.Size, c.Title, c.Caption)
			}
		}
	}

	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(lab.Shutdown)
	events := webtest.OpenStream(t, ts.URL, `{"tab":"`+webtest.Tab+`","preset":"two-bad-hosts","cursor":7}`)
	var call webtest.ApplyChartsCall
	for ok := false; !ok; {
		select {
		case ev, open := <-events:
			if !open {
				t.Fatal("stream ended before its first chart update")
			}
			call, ok = webtest.ParseApplyCharts(t, ev.Data)
		case <-time.After(10 * time.Second):
			t.Fatal("no chart update within 10 s")
		}
	}
	if !call.Replace {
		t.Error("the first update does not replace the charts' options")
	}
	run := lab.Sessions.Get(webtest.Tab).runOf()
	wantHeights := 0
	for _, c := range chart.List {
		if _, ok := call.Options[c.ID]; !ok {
			t.Errorf("the stream sends no option for %s", c.ID)
		}
		if got, ok := call.Heights[c.ID]; c.Height != nil && (!ok || got != c.Height(run)) {
			t.Errorf("%s: height %d sent, want %d", c.ID, got, c.Height(run))
		} else if c.Height == nil && ok {
			t.Errorf("%s: a height is sent for a box the stylesheet sizes", c.ID)
		}
		if c.Height != nil {
			wantHeights++
		}
	}
	if len(call.Options) != len(chart.List) || len(call.Heights) != wantHeights {
		t.Errorf("the stream sends %d options and %d heights, want %d and %d", len(call.Options), len(call.Heights), len(chart.List), wantHeights)
	}
}

// A box only some runs need (chart.Only: the mesh's two, for more than one
// client proxy) says its rule twice, on the server and as a Datastar
// expression over the page's signals; on the lab and on the mesh lesson
// both must agree for the page's run, and the box is drawn hidden exactly
// when the rule says no, so a run of one client looks as it did before.
func TestOnlyAgrees(t *testing.T) {
	t.Parallel()
	lab := newTestServer(t)
	h := lab.Handler()
	t.Cleanup(lab.Shutdown)
	// The rule's form: one signal of cfg against a number; anything else
	// would need a richer reading here.
	rule := regexp.MustCompile(`^\$cfg\.([a-z_]+) > (\d+)$`)
	figure := regexp.MustCompile(`<figure [^>]*id="fig-([^"]+)"[^>]*>`)
	signals := regexp.MustCompile(`<div id="lab" [^>]*data-signals="([^"]*)"`)
	only := 0
	for _, tt := range []struct {
		page  string
		shown bool
	}{
		{"/lab", false},
		{"/lab?preset=search-cache&clients=1", false},
		{"/lab?preset=search-cache&clients=2", true},
		{"/lab?preset=search-cache&clients=20", true},
		{"/lessons/mesh", true},
		{"/lessons/" + lab.Lessons.List[0].ID, false},
	} {
		res := webtest.Do(t, h, "GET", tt.page, "")
		body := webtest.Body(t, res)
		if res.StatusCode != 200 {
			t.Fatalf("%s: status %d", tt.page, res.StatusCode)
		}
		m := signals.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s: no data-signals on #lab", tt.page)
		}
		var sig struct{ Cfg map[string]any }
		if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &sig); err != nil {
			t.Fatalf("%s: the page's signals: %v", tt.page, err)
		}
		boxes := map[string]string{}
		for _, f := range figure.FindAllStringSubmatch(body, -1) {
			boxes[f[1]] = html.UnescapeString(f[0])
		}
		for _, c := range chart.List {
			if c.Only == nil {
				continue
			}
			only++
			box, ok := boxes[c.ID]
			if !ok {
				t.Fatalf("%s: no box for %s", tt.page, c.ID)
			}
			// A page without the control has no signal to read: reading it
			// would create it, and every setting the page posts would carry
			// it empty (lessonBoxes); the server's state stands there.
			_, hasControl := sig.Cfg[c.Only.Control]
			if shows := strings.Contains(box, `data-show="`+c.Only.Signal+`"`); shows != hasControl {
				t.Errorf("%s: %s's box has data-show %q: %v, want %v (the page has the %s control: %v): %s", tt.page, c.ID, c.Only.Signal, shows, hasControl, c.Only.Control, hasControl, box)
			}
			r := rule.FindStringSubmatch(c.Only.Signal)
			if r == nil {
				t.Fatalf("%s: rule %q is not of the form $cfg.NAME > N", c.ID, c.Only.Signal)
			}
			v, has := sig.Cfg[r[1]].(float64)
			bound, _ := strconv.ParseFloat(r[2], 64)
			bySignal := has && v > bound
			off := strings.Contains(box, `style="display: none"`)
			if bySignal != tt.shown || off == tt.shown {
				t.Errorf("%s: %s shown by the signal %v (cfg.%s=%v), drawn hidden %v; want shown %v", tt.page, c.ID, bySignal, r[1], sig.Cfg[r[1]], off, tt.shown)
			}
		}
	}
	if only == 0 {
		t.Fatal("no chart has a rule for showing it; the mesh's two should")
	}
}

// A lesson's step names its charts by the ids the course knows
// (course.Charts, validated without the web): they are the chart list's,
// in its order, so every name a lesson may use draws a box on its page.
func TestCourseChartsAreTheList(t *testing.T) {
	t.Parallel()
	var ids []string
	for _, c := range chart.List {
		ids = append(ids, c.ID)
	}
	if got, want := strings.Join(course.Charts, " "), strings.Join(ids, " "); got != want {
		t.Errorf("course.Charts = %s\nchart.List ids = %s", got, want)
	}
	if course.ChartCompare != chart.ChartCompare {
		t.Errorf("course.ChartCompare = %q, chart.ChartCompare = %q", course.ChartCompare, chart.ChartCompare)
	}
}
