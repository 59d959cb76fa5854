package lab

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"outlierlab/web/chart"
	"outlierlab/web/internal/webtest"
)

// TestStreamFollowsSlider proves the CQRS loop end to end: a slider command
// (a POST) changes what the tab's open stream sends.
func TestStreamFollowsSlider(t *testing.T) {
	lab, ts := startTestServer(t)

	sig := `{"tab":"` + webtest.Tab + `","preset":"search-cache","cursor":0}`
	events := webtest.OpenStream(t, ts.URL, sig)
	opts, first := webtest.NextCharts(t, events)
	if n := webtest.SeriesLen(t, opts[chart.ChartSuccessRate], "h5"); n != 0 {
		t.Fatalf("at t = 0 the success-rate chart has %d points", n)
	}
	if !strings.Contains(webtest.JoinData(first), `"frames":30`) {
		t.Errorf("first redraw lacks the frame count:\n%s", webtest.Head(webtest.JoinData(first), 500))
	}

	post := func(verb, rest string) { t.Helper(); webtest.PostCommand(t, ts.URL, verb, rest) }

	// Defaults, to the end: overflows, no ejection.
	post("scrub", `,"cursor":30`)
	opts, evs := webtest.NextCharts(t, events)
	if n := webtest.SeriesLen(t, opts[chart.ChartLanes], "ejected"); n != 0 {
		t.Errorf("default cap: %d ejected cells, want 0", n)
	}
	if n := webtest.SeriesLen(t, opts[chart.ChartLanes], "overflow"); n == 0 {
		t.Error("default cap: no overflow marks")
	}
	text := webtest.JoinData(evs)
	if !strings.Contains(text, "refused (overflow)") || strings.Contains(text, "EJECTED") {
		t.Errorf("default cap: the log should show overflows and no ejection")
	}

	// The cap slider to 34: the same stream now shows ejections.
	post("set", `,"seq":1,"cfg":{"max_ejection_percent":34}`)
	opts, evs = webtest.NextCharts(t, events)
	if n := webtest.SeriesLen(t, opts[chart.ChartLanes], "ejected"); n == 0 {
		t.Error("cap 34: no ejected cells")
	}
	if n := webtest.SeriesLen(t, opts[chart.ChartSuccessRate], "h5"); n != 30 {
		t.Errorf("cap 34: redraw up to the cursor has %d points, want 30", n)
	}
	text = webtest.JoinData(evs)
	for _, want := range []string{"EJECTED", "≤ <strong>34%</strong>", "max_ejection_percent: 34"} {
		if !strings.Contains(text, want) {
			t.Errorf("cap 34: the redraw lacks %q", want)
		}
	}

	// A late, older slider value does not win over the newer one.
	post("set", `,"seq":1,"cfg":{"max_ejection_percent":34}`) // same seq: applied (idempotent)
	webtest.NextCharts(t, events)
	post("set", `,"seq":0,"cfg":{"max_ejection_percent":10}`) // seq 0 is "unnumbered": applied
	webtest.NextCharts(t, events)
	post("set", `,"seq":5,"cfg":{"max_ejection_percent":34}`)
	webtest.NextCharts(t, events)
	post("set", `,"seq":4,"cfg":{"max_ejection_percent":10}`) // stale
	if c := lab.Sessions.Get(webtest.Tab).snapshot(lab.Now()).run.Config.MaxEjectionPercent; c != 34 {
		t.Errorf("a stale slider post won: cap %d", c)
	}
}

// Playing sends frames one at a time, each adding to the charts and
// prepending its decisions to the log.
func TestStreamPlays(t *testing.T) {
	_, ts := startTestServer(t)
	events := webtest.OpenStream(t, ts.URL, `{"tab":"`+webtest.Tab+`","preset":"search-cache","cursor":2,"speed":"16"}`)
	opts, _ := webtest.NextCharts(t, events)
	if n := webtest.SeriesLen(t, opts[chart.ChartClients], "failed %"); n != 2 {
		t.Fatalf("resumed at cursor 2 with %d points", n)
	}
	res, err := webtest.Post(ts.URL+"/lab/cmd/play", `{"tab":"`+webtest.Tab+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	webtest.NextCharts(t, events) // the redraw for the command
	opts, evs := webtest.NextCharts(t, events)
	if n := webtest.SeriesLen(t, opts[chart.ChartClients], "failed %"); n != 3 {
		t.Errorf("first frame of play: %d points, want 3", n)
	}
	text := webtest.JoinData(evs)
	if !strings.Contains(text, "mode prepend") || !strings.Contains(text, "selector #log-list") {
		t.Errorf("a played frame should prepend to the log:\n%s", webtest.Head(text, 800))
	}
}

// A stream for an unknown tab rebuilds the session from its signals and
// resumes at their cursor; bad signals are a 4xx before any streaming.
func TestStreamSignals(t *testing.T) {
	lab := newTestServer(t)
	h := lab.Handler()
	for _, tt := range []struct {
		signals string
		status  int
	}{
		{`{"tab":"short"}`, 400},
		{`not json`, 400},
		{`{"tab":"` + webtest.Tab + `","preset":"nope"}`, 404},
		{`{"tab":"` + webtest.Tab + `","cfg":{"interval":0}}`, 422},
	} {
		res := webtest.Do(t, h, "POST", "/lab/stream", tt.signals)
		if res.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.signals, res.StatusCode, tt.status)
		}
	}
}

// A tab whose stream drops (a hidden tab, a flaky network) resumes at its
// session's cursor, whatever its reconnecting request still says.
func TestStreamReconnectResumes(t *testing.T) {
	_, ts := startTestServer(t)
	sig := `{"tab":"` + webtest.Tab + `","preset":"search-cache","cursor":0}`

	ctx, cancel := context.WithCancel(context.Background())
	res, err := http.DefaultClient.Do(webtest.StreamRequest(ctx, ts.URL, "/lab/stream", sig))
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan webtest.Event, 256)
	go webtest.ReadEvents(res.Body, first)
	webtest.NextCharts(t, first)
	r, err := webtest.Post(ts.URL+"/lab/cmd/scrub", `{"tab":"`+webtest.Tab+`","cursor":7}`)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	webtest.NextCharts(t, first)
	cancel() // the stream drops

	events := webtest.OpenStream(t, ts.URL, sig) // same stale signals: cursor 0
	opts, evs := webtest.NextCharts(t, events)
	if n := webtest.SeriesLen(t, opts[chart.ChartClients], "failed %"); n != 7 {
		t.Errorf("reconnected at %d frames, want the session's 7", n)
	}
	if !strings.Contains(webtest.JoinData(evs), `"cursor":7`) {
		t.Error("the reconnect does not put the page's cursor back to 7")
	}
}

// A page is drawn whole before its stream connects: the stream's first
// redraw leaves out the settings panel and the panels below the charts
// when the page says it drew them as they are, clears the page's "drawn"
// signal, and sends them when the page's drawing is not the session's
// (no signal, a forged one, or settings changed before the stream came).
func TestStreamSkipsWhatThePageDrew(t *testing.T) {
	_, ts := startTestServer(t)
	pageSig := func(t *testing.T) string {
		t.Helper()
		res, err := webtest.Get(ts.URL + "/lab?preset=search-cache&t=60")
		if err != nil {
			t.Fatal(err)
		}
		return pageSignalsOf(t, webtest.Body(t, res))
	}
	firstRedraw := func(t *testing.T, sig string) string {
		t.Helper()
		_, evs := webtest.NextCharts(t, webtest.OpenStream(t, ts.URL, sig))
		return webtest.JoinData(evs)
	}
	sent := func(text string) (controls, panels bool) {
		return strings.Contains(text, `id="controls"`), strings.Contains(text, `id="envoy-stats"`)
	}
	drawnRE := regexp.MustCompile(`"drawn":"[^"]*"`)
	for _, tt := range []struct {
		name                      string
		sig                       func(t *testing.T) string
		controls, panels, cleared bool
	}{
		{"as the page drew it", pageSig, false, false, true},
		{"no drawn signal", func(t *testing.T) string { return drawnRE.ReplaceAllString(pageSig(t), `"drawn":""`) }, true, true, false},
		{"a forged one", func(t *testing.T) string {
			return drawnRE.ReplaceAllString(pageSig(t), `"drawn":"0123456789abcdef.0123456789abcdef"`)
		}, true, true, true},
		{"settings changed first", func(t *testing.T) string {
			sig := pageSig(t)
			tab := regexp.MustCompile(`"tab":"([^"]+)"`).FindStringSubmatch(sig)[1]
			body := strings.Replace(sig, `"max_ejection_percent":10`, `"max_ejection_percent":34`, 1)
			res, err := webtest.Post(ts.URL+"/lab/cmd/set", body)
			if err != nil || res.StatusCode != http.StatusNoContent {
				t.Fatalf("set for %s: %v %v", tab, err, res.Status)
			}
			res.Body.Close()
			return sig
		}, true, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := firstRedraw(t, tt.sig(t))
			if c, p := sent(text); c != tt.controls || p != tt.panels {
				t.Errorf("settings panel sent %v, panels sent %v; want %v, %v", c, p, tt.controls, tt.panels)
			}
			if got := strings.Contains(text, `"drawn":""`); got != tt.cleared {
				t.Errorf("drawn cleared %v, want %v", got, tt.cleared)
			}
			if !strings.Contains(text, `"cursor":6`) {
				t.Errorf("first redraw is not at 60 s: %s", webtest.Head(text, 300))
			}
		})
	}
}
