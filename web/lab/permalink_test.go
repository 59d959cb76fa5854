package lab

import (
	"fmt"
	"html"
	"maps"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"outlierlab/web/chart"
	"outlierlab/web/httperr"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// pageSignalsOf is a lab page's data-signals object, as JSON.
func pageSignalsOf(t *testing.T, body string) string {
	t.Helper()
	m := regexp.MustCompile(`data-signals="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the page has no data-signals")
	}
	return html.UnescapeString(m[1])
}

// inputValue is the value attribute of the page's input with the given id.
func inputValue(t *testing.T, body, id string) string {
	t.Helper()
	m := regexp.MustCompile(`<input[^>]*id="` + regexp.QuoteMeta(id) + `"[^>]*>`).FindString(body)
	if m == "" {
		t.Fatalf("the page has no input #%s", id)
	}
	v := regexp.MustCompile(`value="([^"]*)"`).FindStringSubmatch(m)
	if v == nil {
		t.Fatalf("#%s has no value: %s", id, m)
	}
	return v[1]
}

// A permalink opens a fresh tab with its settings, paused at its cursor:
// the controls show the values, the page (before any stream) is at t, and
// the stream's first redraw is there too.
func TestPermalinkOpens(t *testing.T) {
	t.Parallel()
	lab, ts := startTestServer(t)

	res, err := webtest.Get(ts.URL + "/lab?preset=search-cache&max_ejection_percent=34&base_ejection_time=45s&hosts=8&retries=2&t=80")
	if err != nil {
		t.Fatal(err)
	}
	body := webtest.Body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("status %d\n%s", res.StatusCode, webtest.Head(body, 600))
	}
	for id, want := range map[string]string{
		"c-max_ejection_percent": "34", "c-base_ejection_time": "45", "c-hosts": "8", "c-num_retries": "2",
		"scrub": "8", // 10 s intervals: 8 frames shown at 80 s
	} {
		if got := inputValue(t, body, id); got != want {
			t.Errorf("#%s value = %q, want %q", id, got, want)
		}
	}
	for _, want := range []string{"t = 80 s", `id="btn-copy-link"`, `role="status"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	sig := pageSignalsOf(t, body)
	if !strings.Contains(sig, `"cursor":8`) || !strings.Contains(sig, `"max_ejection_percent":34`) {
		t.Fatalf("page signals lack the cursor or the cap: %s", webtest.Head(sig, 300))
	}
	// The tab's session is built from those signals by its stream.
	events := webtest.OpenStream(t, ts.URL, sig)
	opts, evs := webtest.NextCharts(t, events)
	if n := webtest.SeriesLen(t, opts[chart.ChartClients], "failed %"); n != 8 {
		t.Errorf("first redraw has %d points, want 8 (t = 80 s)", n)
	}
	text := webtest.JoinData(evs)
	if !strings.Contains(text, `"cursor":8`) {
		t.Errorf("first redraw is not at t = 80 s:\n%s", webtest.Head(text, 600))
	}
	if strings.Contains(text, "t = 80 s") {
		t.Errorf("first redraw sends the status line again, which the page drew at 80 s:\n%s", webtest.Head(text, 600))
	}
	var tab struct{ Tab string }
	tab.Tab = regexp.MustCompile(`"tab":"([^"]+)"`).FindStringSubmatch(sig)[1]
	snap := lab.Sessions.Get(tab.Tab).snapshot(lab.Now())
	if snap.run.Config.MaxEjectionPercent != 34 || snap.run.Config.BaseEjectionTimeMs != 45000 || len(snap.run.Hosts) != 8 || snap.playing {
		t.Errorf("session: cap %d, base %d ms, %d hosts, playing %v", snap.run.Config.MaxEjectionPercent,
			snap.run.Config.BaseEjectionTimeMs, len(snap.run.Hosts), snap.playing)
	}
}

// A bad address is a 400 page naming each field and what it allows, with
// the plain lab to open instead; never a lab with a setting dropped.
func TestPermalinkErrors(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	for _, tt := range []struct {
		query  string
		status int
		has    []string
	}{
		{"max_ejection_percent=101", 400, []string{"max_ejection_percent: 101 is out of range (allowed 0–100 %)"}},
		{"hosts=abc", 400, []string{"hosts: &#34;abc&#34; is not a number (allowed 1–50 hosts)"}},
		{"hosts=2.5", 400, []string{"hosts: 2.5 is not a whole number (allowed 1–50 hosts)"}},
		{"base_ejection_time=forever", 400, []string{"base_ejection_time:", "allowed 1–600 s"}},
		{"always_eject_one_host=maybe", 400, []string{"always_eject_one_host:", "true or false"}},
		{"lb_policy=maglev", 400, []string{"lb_policy:", "round_robin, least_request, random"}},
		{"base_ejection_time=60s&max_ejection_time=30s", 400, []string{"max_ejection_time"}},
		{"t=9999", 400, []string{"t: 9999 is out of range (allowed 0–300 s)"}},
		{"t=-5", 400, []string{"t: -5 is out of range"}},
		{"t=soon", 400, []string{"t: &#34;soon&#34; is not a time"}},
		{"nope=1&max_ejection_percent=200&zzz", 400, []string{"nope: is not a setting of the lab", "zzz: is not a setting", "max_ejection_percent: 200 is out of range"}},
		{"hosts=8&hosts=9", 400, []string{"hosts: is given 2 times"}},
		{"retries=2&num_retries=3", 400, []string{"num_retries: is given twice"}},
		{"x=%zz", 400, []string{"not valid"}},
		{"preset=no-such", 404, []string{"no scenario preset"}},
		{"hosts=8&" + strings.Repeat("a", 5000) + "=1", 414, []string{"allowed up to 4096"}},
		{manyUnknown(300), 400, []string{"u000: is not a setting", "and 290 more parameters"}},
	} {
		t.Run(webtest.Head(tt.query, 40), func(t *testing.T) {
			res := webtest.Do(t, h, "GET", "/lab?"+tt.query, "")
			body := webtest.Body(t, res)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d\n%s", res.StatusCode, tt.status, webtest.Head(body, 600))
			}
			for _, s := range tt.has {
				if !strings.Contains(body, s) {
					t.Errorf("body lacks %q\n%s", s, webtest.Head(body, 3000))
				}
			}
			if tt.status == 400 && !strings.Contains(body, `href="/lab"`) {
				t.Error("the 400 page does not link to the plain lab")
			}
		})
	}
}

// The address the stream pushes is the permalink of the tab's state: only
// the settings away from the preset's, and the cursor; parsed back it
// gives the same inputs and the same cursor.
func TestPermalinkRoundTrip(t *testing.T) {
	t.Parallel()
	lab, ts := startTestServer(t)
	events := webtest.OpenStream(t, ts.URL, `{"tab":"`+webtest.Tab+`","preset":"search-cache","cursor":0}`)
	_, first := webtest.NextCharts(t, events)
	if u := pushedURL(t, first); u != "/lab?preset=search-cache" {
		t.Errorf("first address = %q, want the bare preset", u)
	}

	post := func(verb, rest string) { t.Helper(); webtest.PostCommand(t, ts.URL, verb, rest) }
	// The stdev factor set to its default is not written.
	post("set", `,"seq":1,"cfg":{"max_ejection_percent":34,"hosts":8,"per_try_timeout":0.25,"retry_on":"connect-failure,reset","always_eject_one_host":true,"success_rate_stdev_factor":1900,"fault_rate":0.29,"fault_kind":"reset","interval":7}`)
	webtest.NextCharts(t, events)
	post("scrub", `,"cursor":12`)
	_, evs := webtest.NextCharts(t, events)
	u := pushedURL(t, evs)
	// Controls in page order, values as Envoy YAML writes them, t last.
	if !strings.HasPrefix(u, "/lab?preset=search-cache&max_ejection_percent=34&interval=7s&always_eject_one_host=true&") ||
		!strings.Contains(u, "&per_try_timeout=0.25s") || !strings.Contains(u, "&retry_on=connect-failure%2Creset") ||
		!strings.Contains(u, "&hosts=8") || !strings.Contains(u, "&fault_rate=0.29&fault_kind=reset") || !strings.Contains(u, "&interval=7s") || !strings.HasSuffix(u, "&t=84") || strings.Contains(u, "stdev") || strings.Contains(u, "tab") {
		t.Errorf("pushed address = %q", u)
	}

	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	link, err := tabstate.ParseLabQuery(pu.RawQuery)
	if err != nil {
		t.Fatalf("the pushed address does not parse: %v", err)
	}
	run, err := lab.Runs.Get(link.Inputs())
	if err != nil {
		t.Fatal(err)
	}
	cursor, err := link.Cursor(run)
	if err != nil {
		t.Fatal(err)
	}
	snap := lab.Sessions.Get(webtest.Tab).snapshot(lab.Now())
	if cursor != snap.cursor {
		t.Errorf("cursor %d, the tab's %d", cursor, snap.cursor)
	}
	if !maps.Equal(run.Values, snap.run.Values) {
		t.Errorf("values differ:\n link %v\n tab  %v", run.Values, snap.run.Values)
	}
	if tabstate.LabURL(run, cursor) != u {
		t.Errorf("the link's own address %q, pushed %q", tabstate.LabURL(run, cursor), u)
	}
}

// pushedURL is the address the last olabAddress script among evs sets.
func pushedURL(t *testing.T, evs []webtest.Event) string {
	t.Helper()
	re := regexp.MustCompile(`olabAddress\("([^"]*)"\)`)
	var u string
	for _, ev := range evs {
		if m := re.FindStringSubmatch(ev.Data); m != nil {
			u = m[1]
		}
	}
	if u == "" {
		t.Fatalf("no address pushed:\n%s", webtest.Head(webtest.JoinData(evs), 800))
	}
	return strings.ReplaceAll(u, `\u0026`, "&")
}

// manyUnknown is a query of n distinct unknown parameters.
func manyUnknown(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "u%03d=1&", i)
	}
	return b.String()
}

// No address makes the lab panic: whatever the query, the answer is a
// page or a field-named error.
func FuzzLabQuery(f *testing.F) {
	for _, q := range []string{"", "preset=burst&t=40", "max_ejection_percent=34&base_ejection_time=30s&hosts=8&t=80",
		"t=1e308", "t=NaN", "hosts=Inf", "retries=1&retries=2", "%", "a=%zz&t=-0", "interval=0.5s&t=0.25"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		link, err := tabstate.ParseLabQuery(q)
		if err != nil {
			if httperr.Text(err) == "" {
				t.Errorf("%q: an error with no text", q)
			}
			return
		}
		for name, v := range link.Values {
			if c := tabstate.ControlByName[name]; c == nil || c.Check(v) != nil {
				t.Errorf("%q: %s = %v passed unchecked", q, name, v)
			}
		}
	})
}
