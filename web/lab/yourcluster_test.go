package lab

import (
	"bytes"
	"context"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"outlierlab/engine/course"
	"outlierlab/engine/settings"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
)

// formQuery is what a browser sends for the GET form whose opening tag
// holds marker, untouched: its hidden fields, every field's value and
// every menu's selected option, in page order.
func formQuery(t *testing.T, page, marker string) url.Values {
	t.Helper()
	i := strings.Index(page, marker)
	if i < 0 {
		t.Fatalf("no form %q", marker)
	}
	form := page[i:]
	form = form[:strings.Index(form, "</form>")]
	q := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="[a-z]+"(?: id="[^"]*")? name="([^"]+)" value="([^"]*)"`).FindAllStringSubmatch(form, -1) {
		q.Add(m[1], html.UnescapeString(m[2]))
	}
	for _, m := range regexp.MustCompile(`(?s)<select id="[^"]*" name="([^"]+)">(.*?)</select>`).FindAllStringSubmatch(form, -1) {
		sel := regexp.MustCompile(`<option selected>([^<]*)</option>`).FindStringSubmatch(m[2])
		if sel == nil {
			t.Fatalf("menu %s has no option selected", m[1])
		}
		q.Add(m[1], html.UnescapeString(sel[1]))
	}
	return q
}

// Every lesson ends, under its quiz, with the settings it taught and
// Envoy's defaults, the stats as Envoy names them, the rule, and a form
// that opens the free lab on the lesson's scenario: sent as it stands it
// opens, and with the learner's hosts and traffic the lab runs them. The
// ending waits for the prediction, as the prose after it does.
func TestLessonEndings(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	h := s.Handler()
	for _, l := range courseLessons(t) {
		t.Run(l.ID, func(t *testing.T) {
			body := webtest.Body(t, webtest.Do(t, h, "GET", "/lessons/"+l.ID, ""))
			i := strings.Index(body, `<section class="ending after-prediction" id="ending" hidden data-show="$predicted"`)
			if i < 0 || i < strings.Index(body, `id="quiz"`) {
				t.Fatalf("no ending after the quiz, hidden until the prediction")
			}
			end := body[i:]
			for _, st := range l.Ending.Settings {
				set, _ := settings.Lookup(st.Name)
				want := `<th scope="row"><code>` + set.EnvoyName() + `</code></th><td>`
				if st.Default != "" {
					want += `<code>` + st.Default + `</code>`
				}
				if !strings.Contains(end, want) {
					t.Errorf("ending lacks %s", want)
				}
			}
			for _, st := range l.Ending.Stats {
				if !strings.Contains(end, "<li><code>"+course.StatPath(st)+"</code></li>") {
					t.Errorf("ending lacks the stat %s", course.StatPath(st))
				}
			}
			if !strings.Contains(end, `<p class="rule"><b>Rule of thumb:</b> `) {
				t.Error("ending lacks its rule")
			}
			q := formQuery(t, end, `<form class="cluster-form" method="get" action="/lab"`)
			if q.Get("preset") != l.PresetFor("") {
				t.Errorf("the form opens %q, want the lesson's %q", q.Get("preset"), l.PresetFor(""))
			}
			for _, name := range l.Ending.Exercise.ExerciseSettings() {
				if c := tabstate.LookupControl(name); !q.Has(c.Name) {
					t.Errorf("the form lacks %s", c.Name)
				}
			}
			if res := webtest.Do(t, h, "GET", "/lab?"+q.Encode(), ""); res.StatusCode != 200 {
				t.Fatalf("the form as it stands: %d\n%s", res.StatusCode, webtest.Head(webtest.Body(t, res), 600))
			}
			q.Set("hosts", "12")
			q.Set("rps", "2000")
			lab := webtest.Body(t, webtest.Do(t, h, "GET", "/lab?"+q.Encode(), ""))
			for _, want := range []string{`&#34;hosts&#34;:12`, `&#34;rps&#34;:2000`} {
				if !strings.Contains(lab, want) {
					t.Errorf("the lab opened from the form lacks %s", want)
				}
			}
		})
	}
}

// /lab opens with "Model your cluster": a form on the scenario it models,
// filled with the page's numbers, whose answer is the lab's permalink; a
// bad value is the lab's 400 naming the field and its range; the fault's
// share never starts invalid (issue 38: the box began red). A room's
// view of the lab (LabViewFor, LabBody) and the projector view have no
// box.
func TestModelYourCluster(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	h := s.Handler()
	body := webtest.Body(t, webtest.Do(t, h, "GET", "/lab?hosts=12&fault_rate=0.25", ""))
	i := strings.Index(body, `<details class="model-box" id="model">`)
	if i < 0 || i < strings.Index(body, `id="timeline"`) || i > strings.Index(body, `class="board"`) {
		t.Fatal("no Model your cluster box above the lab's charts")
	}
	box := body[i:]
	box = box[:strings.Index(box, "</details>")]
	if !strings.Contains(box, `href="#paste-title"`) || !strings.Contains(body, `id="paste-title"`) {
		t.Error("the box does not link to the paste panel")
	}
	q := formQuery(t, box, `<form class="cluster-form"`)
	want := url.Values{"preset": {"search-cache"}, "hosts": {"12"}, "rps": {"600"}, "fault_host": {"11"}, "fault_kind": {"503"},
		"fault_rate": {"0.25"}, "fault_pattern": {"interleaved"}, "fault_start": {"30"}, "fault_duration": {"0"}, "inject": {""}}
	if q.Encode() != want.Encode() {
		t.Errorf("the box sends\n %s\nwant\n %s", q.Encode(), want.Encode())
	}
	// A step that does not divide the value marks it invalid.
	if !regexp.MustCompile(`name="fault_rate" value="0.25" min="0" max="1" step="any"`).MatchString(box) {
		t.Errorf("the fault share's field may start invalid:\n%s", box)
	}
	// Another scenario's page: the box models its own, with its numbers.
	other := webtest.Body(t, webtest.Do(t, h, "GET", "/lab?preset=dead-host", ""))
	if q := formQuery(t, other, `<form class="cluster-form"`); q.Get("preset") != "search-cache" || q.Get("hosts") != "6" {
		t.Errorf("on dead-host the box sends %s", q.Encode())
	}

	q.Set("inject", "h2@60s")
	q.Set("fault_duration", "120")
	if res := webtest.Do(t, h, "GET", "/lab?"+q.Encode(), ""); res.StatusCode != 200 {
		t.Fatalf("the box's answer: %d", res.StatusCode)
	}
	for _, c := range []struct{ name, value, wantIn string }{
		{"fault_rate", "2", "fault_rate: 2 is out of range (allowed 0–1 (a fraction))"},
		{"hosts", "0", "hosts: 0 is out of range (allowed 1–50 hosts)"},
		{"inject", "h12@60s", "inject: h12@60s: h12 is not a host of this cluster (allowed h0–h11)"},
		{"fault_kind", "418", "fault_kind"},
		{"fault_host", "12", "fault_host: 12 is out of range (allowed 0–11: the cluster's hosts h0…h11)"},
		{"fault_host", "50", "fault_host: 50 is out of range (allowed 0–49 host)"},
		{"fault_host", "-1", "fault_host: -1 is out of range (allowed 0–49 host)"},
		{"fault_host", "NaN", "fault_host"},
		{"fault_host", "", "fault_host"},
		{"fault_host", "h2", "fault_host"},
		{"fault_host", "2.5", "fault_host"},
		{"fault_start", "-5", "fault_start: -5 is out of range (allowed 0–600 s)"},
		{"fault_start", "1e300", "fault_start"},
		{"fault_start", "NaN", "fault_start"},
		{"fault_start", "", "fault_start"},
		{"fault_start", "soon", "fault_start"},
	} {
		bad := url.Values{}
		for k, v := range q {
			bad[k] = v
		}
		bad.Set(c.name, c.value)
		res := webtest.Do(t, h, "GET", "/lab?"+bad.Encode(), "")
		page := html.UnescapeString(webtest.Body(t, res))
		if res.StatusCode != 400 || !strings.Contains(page, c.wantIn) {
			t.Errorf("%s=%s: %d, want 400 naming %q", c.name, c.value, res.StatusCode, c.wantIn)
		}
	}

	// fault_host and fault_start are the box's and the address's: no
	// slider on /lab, and the page's signals carry them only once set, so
	// the stream's session runs what the page shows.
	for _, name := range []string{"fault_host", "fault_start"} {
		if strings.Contains(body, `data-bind="cfg.`+name+`"`) || strings.Contains(body, `&#34;`+name+`&#34;`) {
			t.Errorf("/lab draws a control or a signal for %s", name)
		}
	}
	moved := webtest.Body(t, webtest.Do(t, h, "GET", "/lab?fault_host=2&fault_start=60", ""))
	for _, want := range []string{`&#34;fault_host&#34;:2`, `&#34;fault_start&#34;:60`} {
		if !strings.Contains(moved, want) {
			t.Errorf("/lab?fault_host=2&fault_start=60: the signals lack %s", want)
		}
	}

	if strings.Contains(webtest.Body(t, webtest.Do(t, h, "GET", "/lab?view=projector", "")), "model-box") {
		t.Error("the projector view, all charts, has the box")
	}
	lv, err := s.LabViewFor(tabstate.LabLink{Preset: "search-cache"}, "tab")
	if err != nil {
		t.Fatal(err)
	}
	var room bytes.Buffer
	if err := templates.LabBody(lv).Render(context.Background(), &room); err != nil {
		t.Fatal(err)
	}
	if lv.Model != nil || strings.Contains(room.String(), "model-box") {
		t.Error("a room's lab renders the Model your cluster box")
	}
}
