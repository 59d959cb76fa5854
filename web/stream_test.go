package web

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"outlierlab/web/chart"
)

// sseEvent is one server-sent event: its type and its data lines joined.
type sseEvent struct {
	Type, Data string
}

// readEvents parses a stream into events until it ends.
func readEvents(r io.Reader, out chan<- sseEvent) {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var ev sseEvent
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Type != "" {
				ev.Data = strings.Join(data, "\n")
				out <- ev
			}
			ev, data = sseEvent{}, nil
		case strings.HasPrefix(line, "event: "):
			ev.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		}
	}
}

// openStream opens a tab's stream on a test server and returns its events.
func openStream(t *testing.T, base, signals string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/lab/stream?datastar="+url.QueryEscape(signals), nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultTransport.RoundTrip(req) // raw: no transparent gunzip, so we see what a browser gets
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: status %d, type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	body := io.Reader(res.Body)
	if res.Header.Get("Content-Encoding") == "gzip" {
		body = gunzipStream(t, res.Body)
	}
	events := make(chan sseEvent, 256)
	go readEvents(body, events)
	return events
}

// nextCharts waits for the next chart update and returns every chart's
// whole option after it: an applyCharts call's own, or an advanceCharts
// patch applied (as app.js does) to the options this stream sent before.
func nextCharts(t *testing.T, events <-chan sseEvent) (map[string]json.RawMessage, []sseEvent) {
	t.Helper()
	var seen []sseEvent
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			seen = append(seen, ev)
			if call, ok := parseApplyCharts(t, ev.Data); ok {
				held := map[string]json.RawMessage{}
				if !call.replace {
					held = chartsHeld(events)
				}
				for id, o := range call.options {
					held[id] = o
				}
				chartsSeen.Store(events, held)
				return held, seen
			}
			if patches, ok := parseAdvanceCharts(t, ev.Data); ok {
				held := chartsHeld(events)
				for id, p := range patches {
					held[id] = applyPatchJSON(t, held[id], p)
				}
				chartsSeen.Store(events, held)
				return held, seen
			}
		case <-timeout:
			t.Fatal("no chart update within 10 s")
		}
	}
}

// chartsSeen is, by stream, the options its page holds.
var chartsSeen sync.Map

func chartsHeld(events <-chan sseEvent) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	if v, ok := chartsSeen.Load(events); ok {
		for id, o := range v.(map[string]json.RawMessage) {
			out[id] = o
		}
	}
	return out
}

// parseAdvanceCharts reads the advanceCharts(patches) call in an event's
// data, if it holds one.
func parseAdvanceCharts(t *testing.T, data string) (map[string]json.RawMessage, bool) {
	t.Helper()
	i := strings.Index(data, "advanceCharts(")
	if i < 0 {
		return nil, false
	}
	js := data[i+len("advanceCharts("):]
	js = strings.TrimSuffix(js[:strings.LastIndex(js, "</script>")], ")")
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatalf("advanceCharts argument: %v\n%s", err, head(js, 300))
	}
	return out, true
}

// applyPatchJSON is app.js's patchValue in Go: the option held with a
// patch applied.
func applyPatchJSON(t *testing.T, held, patch json.RawMessage) json.RawMessage {
	t.Helper()
	var v, p any
	if len(held) > 0 {
		if err := json.Unmarshal(held, &v); err != nil {
			t.Fatal(err)
		}
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(patchValue(v, p.(map[string]any)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func patchValue(v any, p map[string]any) any {
	if set, ok := p["="]; ok {
		return set
	}
	if p["o"] != nil || p["d"] != nil {
		out := map[string]any{}
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				out[k] = x
			}
		}
		for k, q := range asMap(p["o"]) {
			out[k] = patchValue(out[k], q.(map[string]any))
		}
		for _, k := range asSlice(p["d"]) {
			delete(out, k.(string))
		}
		return out
	}
	out := append([]any(nil), asSlice(v)...)
	for k, q := range asMap(p["a"]) {
		i, _ := strconv.Atoi(k)
		out[i] = patchValue(out[i], q.(map[string]any))
	}
	return append(out, asSlice(p["p"])...)
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asSlice(v any) []any        { s, _ := v.([]any); return s }

// applyChartsCall is what one applyCharts call the stream sent says.
type applyChartsCall struct {
	options map[string]json.RawMessage
	replace bool
	heights map[string]int
}

// parseApplyCharts reads the applyCharts(options[, replace, heights]) call
// in an event's data, if it holds one.
func parseApplyCharts(t *testing.T, data string) (applyChartsCall, bool) {
	t.Helper()
	var call applyChartsCall
	i := strings.Index(data, "applyCharts(")
	if i < 0 {
		return call, false
	}
	js := data[i+len("applyCharts("):]
	js = strings.TrimSuffix(js[:strings.LastIndex(js, "</script>")], ")")
	if j := strings.LastIndex(js, ",true,"); j >= 0 {
		call.replace = true
		if err := json.Unmarshal([]byte(js[j+len(",true,"):]), &call.heights); err != nil {
			t.Fatalf("applyCharts heights: %v\n%s", err, head(js[j:], 300))
		}
		js = js[:j]
	}
	if err := json.Unmarshal([]byte(js), &call.options); err != nil {
		t.Fatalf("applyCharts argument: %v\n%s", err, head(js, 300))
	}
	return call, true
}

// seriesLen is the length of a named series' data in a chart option.
func seriesLen(t *testing.T, opt json.RawMessage, name string) int {
	t.Helper()
	var o struct {
		Series []struct {
			Name string            `json:"name"`
			Data []json.RawMessage `json:"data"`
		} `json:"series"`
	}
	if err := json.Unmarshal(opt, &o); err != nil {
		t.Fatal(err)
	}
	for _, s := range o.Series {
		if s.Name == name {
			return len(s.Data)
		}
	}
	t.Fatalf("no series %q", name)
	return 0
}

func joinData(evs []sseEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.Data)
		b.WriteString("\n")
	}
	return b.String()
}

// TestStreamFollowsSlider proves the CQRS loop end to end: a slider command
// (a POST) changes what the tab's open stream sends.
func TestStreamFollowsSlider(t *testing.T) {
	lab, ts := startTestServer(t)

	sig := `{"tab":"` + testTab + `","preset":"search-cache","cursor":0}`
	events := openStream(t, ts.URL, sig)
	opts, first := nextCharts(t, events)
	if n := seriesLen(t, opts[chart.ChartSuccessRate], "h5"); n != 0 {
		t.Fatalf("at t = 0 the success-rate chart has %d points", n)
	}
	if !strings.Contains(joinData(first), `"frames":30`) {
		t.Errorf("first redraw lacks the frame count:\n%s", head(joinData(first), 500))
	}

	post := func(verb, rest string) { t.Helper(); postCommand(t, ts.URL, verb, rest) }

	// Defaults, to the end: overflows, no ejection.
	post("scrub", `,"cursor":30`)
	opts, evs := nextCharts(t, events)
	if n := seriesLen(t, opts[chart.ChartLanes], "ejected"); n != 0 {
		t.Errorf("default cap: %d ejected cells, want 0", n)
	}
	if n := seriesLen(t, opts[chart.ChartLanes], "overflow"); n == 0 {
		t.Error("default cap: no overflow marks")
	}
	text := joinData(evs)
	if !strings.Contains(text, "refused (overflow)") || strings.Contains(text, "EJECTED") {
		t.Errorf("default cap: the log should show overflows and no ejection")
	}

	// The cap slider to 34: the same stream now shows ejections.
	post("set", `,"seq":1,"cfg":{"max_ejection_percent":34}`)
	opts, evs = nextCharts(t, events)
	if n := seriesLen(t, opts[chart.ChartLanes], "ejected"); n == 0 {
		t.Error("cap 34: no ejected cells")
	}
	if n := seriesLen(t, opts[chart.ChartSuccessRate], "h5"); n != 30 {
		t.Errorf("cap 34: redraw up to the cursor has %d points, want 30", n)
	}
	text = joinData(evs)
	for _, want := range []string{"EJECTED", "≤ <strong>34%</strong>", "max_ejection_percent: 34"} {
		if !strings.Contains(text, want) {
			t.Errorf("cap 34: the redraw lacks %q", want)
		}
	}

	// A late, older slider value does not win over the newer one.
	post("set", `,"seq":1,"cfg":{"max_ejection_percent":34}`) // same seq: applied (idempotent)
	nextCharts(t, events)
	post("set", `,"seq":0,"cfg":{"max_ejection_percent":10}`) // seq 0 is "unnumbered": applied
	nextCharts(t, events)
	post("set", `,"seq":5,"cfg":{"max_ejection_percent":34}`)
	nextCharts(t, events)
	post("set", `,"seq":4,"cfg":{"max_ejection_percent":10}`) // stale
	if c := lab.sessions.get(testTab).snapshot(lab.now()).run.Config.MaxEjectionPercent; c != 34 {
		t.Errorf("a stale slider post won: cap %d", c)
	}
}

// Playing sends frames one at a time, each adding to the charts and
// prepending its decisions to the log.
func TestStreamPlays(t *testing.T) {
	_, ts := startTestServer(t)
	events := openStream(t, ts.URL, `{"tab":"`+testTab+`","preset":"search-cache","cursor":2,"speed":"16"}`)
	opts, _ := nextCharts(t, events)
	if n := seriesLen(t, opts[chart.ChartClients], "failed %"); n != 2 {
		t.Fatalf("resumed at cursor 2 with %d points", n)
	}
	res, err := http.Post(ts.URL+"/lab/cmd/play", "application/json", strings.NewReader(`{"tab":"`+testTab+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	nextCharts(t, events) // the redraw for the command
	opts, evs := nextCharts(t, events)
	if n := seriesLen(t, opts[chart.ChartClients], "failed %"); n != 3 {
		t.Errorf("first frame of play: %d points, want 3", n)
	}
	text := joinData(evs)
	if !strings.Contains(text, "mode prepend") || !strings.Contains(text, "selector #log-list") {
		t.Errorf("a played frame should prepend to the log:\n%s", head(text, 800))
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
		{`{"tab":"` + testTab + `","preset":"nope"}`, 404},
		{`{"tab":"` + testTab + `","cfg":{"interval":0}}`, 422},
	} {
		res := do(t, h, "GET", "/lab/stream?datastar="+url.QueryEscape(tt.signals), "")
		if res.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.signals, res.StatusCode, tt.status)
		}
	}
}

// gunzipStream reads a gzip-compressed stream as it arrives (the server
// flushes the compressor after every event).
func gunzipStream(t *testing.T, r io.Reader) io.Reader {
	t.Helper()
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatalf("gzip stream: %v", err)
	}
	return zr
}

// A tab whose stream drops (a hidden tab, a flaky network) resumes at its
// session's cursor, whatever its reconnecting request still says.
func TestStreamReconnectResumes(t *testing.T) {
	_, ts := startTestServer(t)
	sig := `{"tab":"` + testTab + `","preset":"search-cache","cursor":0}`

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/lab/stream?datastar="+url.QueryEscape(sig), nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan sseEvent, 256)
	go readEvents(res.Body, first)
	nextCharts(t, first)
	r, err := http.Post(ts.URL+"/lab/cmd/scrub", "application/json", strings.NewReader(`{"tab":"`+testTab+`","cursor":7}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	nextCharts(t, first)
	cancel() // the stream drops

	events := openStream(t, ts.URL, sig) // same stale signals: cursor 0
	opts, evs := nextCharts(t, events)
	if n := seriesLen(t, opts[chart.ChartClients], "failed %"); n != 7 {
		t.Errorf("reconnected at %d frames, want the session's 7", n)
	}
	if !strings.Contains(joinData(evs), `"cursor":7`) {
		t.Error("the reconnect does not put the page's cursor back to 7")
	}
}
