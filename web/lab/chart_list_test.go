package lab

import (
	"html"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"outlierlab/web/chart"
	"outlierlab/web/internal/webtest"
)

// The chart list is the one place a chart is named: every entry is drawn
// on the lab and lesson pages, in its order, with its title, caption and
// size, and every stream redraw sends an option for each entry and for no
// other chart, with a height for each entry whose height follows the run.
func TestChartListIsWhatPageAndStreamShow(t *testing.T) {
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
	box := regexp.MustCompile(`<figure class="chart-box ([a-z]+)" id="fig-[^"]+"[^>]*><figcaption><b class="chart-title">([^<]*)</b> .*?</figcaption><olab-chart class="chart" id="([^"]+)"[^>]*></olab-chart><div class="chart-table"[^>]*></div><p class="caption">([^<]*)</p>`)
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
