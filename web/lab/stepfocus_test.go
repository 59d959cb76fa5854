package lab

import (
	"encoding/json"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"

	"outlierlab/web/chart"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// Every lesson page is served with its first step current (issue 38, one
// idea per step): the page declares the signals its step expressions
// read (_now on the first step, both toggles off: a signal read but not
// declared would be made by Datastar, commit 47c83d2), the first step's
// charts and controls in view and every other one folded (off-step), its
// key chart marked key, and every step's key chart named on its step.
func TestLessonPagesOpenOnTheFirstStep(t *testing.T) {
	t.Parallel()
	lab := newTestServer(t)
	h := lab.Handler()
	signals := regexp.MustCompile(`<div id="lab"[^>]* data-signals="([^"]*)"`)
	for _, d := range lab.Lessons.List {
		body := webtest.Body(t, webtest.Do(t, h, "GET", "/lessons/"+d.ID, ""))
		first := d.Steps[0]
		m := signals.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s: no data-signals on #lab", d.ID)
		}
		var sig map[string]any
		if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &sig); err != nil {
			t.Fatalf("%s: the page's signals: %v", d.ID, err)
		}
		if sig["_now"] != first.ID || sig["_allset"] != false || sig["_allcharts"] != false {
			t.Errorf("%s: _now %v, _allset %v, _allcharts %v; want %s, false, false", d.ID, sig["_now"], sig["_allset"], sig["_allcharts"], first.ID)
		}
		for _, c := range chart.List {
			f := regexp.MustCompile(`<figure class="([^"]*)" id="fig-` + c.ID + `"( hidden)?`).FindStringSubmatch(body)
			if f == nil {
				t.Fatalf("%s: no box for %s", d.ID, c.ID)
			}
			classes := strings.Fields(f[1])
			if f[2] != "" {
				continue // the compare strip of a lesson that does not read it
			}
			if off, want := slices.Contains(classes, "off-step"), !slices.Contains(first.Charts, c.ID); off != want {
				t.Errorf("%s: %s off-step %v, want %v (step %s's charts: %v)", d.ID, c.ID, off, want, first.ID, first.Charts)
			}
			if key, want := slices.Contains(classes, "key"), c.ID == first.Charts[0]; key != want {
				t.Errorf("%s: %s key %v, want %v", d.ID, c.ID, key, want)
			}
		}
		for _, c := range d.ControlsShown {
			at := strings.Index(body, `id="c-`+c.Name+`"`)
			open := strings.LastIndex(body[:max(at, 0)], `<div class="control`)
			if at < 0 || open < 0 {
				t.Fatalf("%s: no control %s", d.ID, c.Name)
			}
			tag := body[open : open+strings.Index(body[open:], ">")]
			class, _, _ := strings.Cut(strings.TrimPrefix(tag, `<div class="`), `"`)
			// The step may name the control by another of its setting's
			// names (retries for num_retries).
			about := slices.ContainsFunc(first.Controls, func(n string) bool { return tabstate.LookupControl(n).Name == c.Name })
			if off, want := slices.Contains(strings.Fields(class), "off-step"), !about; off != want {
				t.Errorf("%s: control %s off-step %v, want %v (step %s's controls: %v): %s", d.ID, c.Name, off, want, first.ID, first.Controls, tag)
			}
		}
		for _, st := range d.Steps {
			if !strings.Contains(body, `id="step-`+st.ID+`" data-step="`+st.ID+`" data-key="`+st.Charts[0]+`"`) {
				t.Errorf("%s: step %s does not name its key chart %s", d.ID, st.ID, st.Charts[0])
			}
		}
	}
}
