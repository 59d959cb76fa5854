package lab

import (
	"encoding/json"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// Inject adds hN@<cursor time> to the tab's inputs and redoes the run with
// the cursor kept: the frames up to the cursor are the old run's, h2 fails
// in the next one, and the log says so there. Remove and reset undo it;
// bad hosts are 4xx answers naming inject.
func TestInjectCommands(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	now := s.Now()
	s.Now = func() time.Time { return now }
	h := s.Handler()
	post := func(verb, rest string, status int, has ...string) {
		t.Helper()
		res := webtest.Do(t, h, "POST", "/lab/cmd/"+verb, `{"tab":"`+webtest.Tab+`","preset":"search-cache"`+rest+`}`)
		body := webtest.Body(t, res)
		if res.StatusCode != status {
			t.Fatalf("%s %s: status %d, want %d: %s", verb, rest, res.StatusCode, status, body)
		}
		for _, w := range has {
			if !strings.Contains(body, w) {
				t.Errorf("%s %s: body %q lacks %q", verb, rest, body, w)
			}
		}
	}
	snap := func() snapshot { return s.Sessions.Get(webtest.Tab).snapshot(now) }

	post("set", `,"cfg":{"max_ejection_percent":34}`, 204)
	post("scrub", `,"cursor":6`, 204) // t = 60 s
	before := snap().run
	post("inject", `,"injectHost":"h2"`, 204)
	after := snap()
	if after.in.Inject != "h2@60s" || after.cursor != 6 || after.run == before {
		t.Fatalf("after inject: inputs %q, cursor %d", after.in.Inject, after.cursor)
	}
	for i := range 6 {
		a, _ := json.Marshal(after.run.Frames[i])
		b, _ := json.Marshal(before.Frames[i])
		if string(a) != string(b) {
			t.Fatalf("frame %d changed by an injection at 60 s", i)
		}
	}
	if sr := after.run.Frames[6].Hosts[2].SuccessRate; math.Abs(sr-200.0/3) > 0.5 {
		t.Errorf("h2 at 70 s: %.1f%%, want about 66.7%%", sr)
	}
	if log := after.run.Log[6]; len(log) == 0 || log[0].Time != "60 s" || log[0].Text() != "fault injected on h2 (503, 1 in 3): it fails from now to the end of the run." {
		t.Errorf("log at 70 s: %+v", log)
	}
	if strings.Contains(joinLog(before.Log), "injected") {
		t.Error("the run without injection logs one")
	}

	post("inject", `,"injectHost":"h2"`, 422, "inject: h2@60s: h2 already fails from 60s")
	post("inject", `,"injectHost":"h9"`, 422, "inject: h9@60s: h9 is not a host of this cluster (allowed h0–h5)")
	post("inject", `,"injectHost":"h1,h2"`, 422, `inject: "h1,h2" is not a host (allowed h0–h5)`)
	post("inject", `,"injectHost":""`, 422, "inject")
	post("uninject", `,"injectDrop":"h4@60s"`, 422, `inject: "h4@60s" is not an injected fault (injected: h2@60s)`)
	if c := snap(); c.in.Inject != "h2@60s" || c.cursor != 6 {
		t.Fatalf("a refused command changed the tab: %q at %d", c.in.Inject, c.cursor)
	}

	post("step", ``, 204)
	post("inject", `,"injectHost":"h0"`, 204)
	if c := snap(); c.in.Inject != "h2@60s,h0@70s" || c.cursor != 7 {
		t.Fatalf("second injection: %q at %d", c.in.Inject, c.cursor)
	}
	post("uninject", `,"injectDrop":"h2@60s"`, 204)
	if c := snap(); c.in.Inject != "h0@70s" || c.cursor != 7 || c.run.Frames[6].Hosts[2].SuccessRate < 99 {
		t.Fatalf("after remove: %q at %d", c.in.Inject, c.cursor)
	}
	post("reset", ``, 204)
	if c := snap(); c.in.Inject != "" || len(c.run.Scenario.Injections) != 0 {
		t.Fatalf("reset keeps %q", c.in.Inject)
	}

	// A tab whose session is gone is rebuilt with its inject signal; a bad
	// one is refused naming the knob.
	s.Sessions = newSessionStore(10, time.Hour)
	post("step", `,"inject":"h3@20s"`, 204)
	if c := snap(); len(c.run.Scenario.Injections) != 1 || c.in.Inject != "h3@20s" {
		t.Fatalf("rebuilt tab: %q", c.in.Inject)
	}
	s.Sessions = newSessionStore(10, time.Hour)
	post("step", `,"inject":"h3@20s,h7@30s"`, 422, "inject: h7@30s: h7 is not a host")
}

func joinLog(log [][]view.LogEntry) string {
	var b strings.Builder
	for _, f := range log {
		for _, e := range f {
			b.WriteString(e.Text())
		}
	}
	return b.String()
}

// The stream follows an injection: the page's inject signal, the list with
// its remove button, the address, and after a step the log line.
func TestStreamInject(t *testing.T) {
	t.Parallel()
	_, ts := startTestServer(t)
	events := webtest.OpenStream(t, ts.URL, `{"tab":"`+webtest.Tab+`","preset":"search-cache","cursor":3}`)
	_, first := webtest.NextCharts(t, events)
	if text := webtest.JoinData(first); !strings.Contains(text, `id="inject-list"`) || !strings.Contains(text, `<option value="h5">`) {
		t.Fatalf("first redraw lacks the inject control:\n%s", webtest.Head(text, 600))
	}
	post := func(verb, rest string) { t.Helper(); webtest.PostCommand(t, ts.URL, verb, rest) }
	post("inject", `,"injectHost":"h1"`)
	_, evs := webtest.NextCharts(t, events)
	text := webtest.JoinData(evs)
	for _, want := range []string{`"inject":"h1@30s"`, `data-inject="h1@30s"`, "h1 fails from 30 s", "$injectDrop = &#39;h1@30s&#39;"} {
		if !strings.Contains(text, want) {
			t.Errorf("redraw after inject lacks %q", want)
		}
	}
	if strings.Contains(text, `id="inject-host"`) {
		t.Error("the host menu was re-rendered: it would lose the visitor's choice")
	}
	if u := pushedURL(t, evs); u != "/lab?preset=search-cache&inject=h1@30s&t=30" {
		t.Errorf("address %q", u)
	}
	post("step", ``)
	_, evs = webtest.NextCharts(t, events)
	if text := webtest.JoinData(evs); !strings.Contains(text, "fault injected on h1 (503, 1 in 3)") {
		t.Errorf("the step's log lacks the injection:\n%s", webtest.Head(text, 800))
	}
}

// A permalink carries the injections: opening it gives the same run, at
// the same cursor, and writes the same address back.
func TestPermalinkInject(t *testing.T) {
	t.Parallel()
	lab, ts := startTestServer(t)
	const u = "/lab?preset=search-cache&max_ejection_percent=34&inject=h3@60s,h1@120s&t=60"
	res, err := webtest.Get(ts.URL + u)
	if err != nil {
		t.Fatal(err)
	}
	body := webtest.Body(t, res)
	if res.StatusCode != 200 || !strings.Contains(body, `data-inject="h3@60s"`) || !strings.Contains(body, `data-inject="h1@120s"`) {
		t.Fatalf("status %d, page:\n%s", res.StatusCode, webtest.Head(body, 400))
	}
	sig := pageSignalsOf(t, body)
	if !strings.Contains(sig, `"inject":"h3@60s,h1@120s"`) {
		t.Fatalf("page signals: %s", webtest.Head(sig, 400))
	}
	events := webtest.OpenStream(t, ts.URL, sig)
	_, evs := webtest.NextCharts(t, events)
	if got := pushedURL(t, evs); got != u {
		t.Errorf("stream address %q, want %q", got, u)
	}
	pu, _ := url.Parse(u)
	link, err := tabstate.ParseLabQuery(pu.RawQuery)
	if err != nil {
		t.Fatal(err)
	}
	run, err := lab.Runs.Get(link.Inputs())
	if err != nil {
		t.Fatal(err)
	}
	if snap := lab.Sessions.Get(pageTab(t, sig)).snapshot(lab.Now()); snap.run != run {
		t.Error("the link and the tab do not share one run")
	}
	cursor, _ := link.Cursor(run)
	if tabstate.LabURL(run, cursor) != u {
		t.Errorf("labURL %q", tabstate.LabURL(run, cursor))
	}

	for q, want := range map[string]string{
		"inject=h9@60s":          "inject: h9@60s: h9 is not a host of this cluster (allowed h0–h5)",
		"inject=h2@400s":         "inject: h2@400s: 400s is out of range (allowed 0s–300s",
		"inject=h2":              "inject: &#34;h2&#34; is not HOST@TIME",
		"inject=h2@1s&inject=h3": "inject: is given 2 times",
	} {
		res := webtest.Do(t, lab.Handler(), "GET", "/lab?"+q, "")
		if b := webtest.Body(t, res); res.StatusCode != 400 || !strings.Contains(b, want) {
			t.Errorf("%s: status %d, body lacks %q:\n%s", q, res.StatusCode, want, webtest.Head(b, 600))
		}
	}
}

func pageTab(t *testing.T, sig string) string {
	t.Helper()
	var v struct{ Tab string }
	if err := json.Unmarshal([]byte(sig), &v); err != nil {
		t.Fatal(err)
	}
	return v.Tab
}
