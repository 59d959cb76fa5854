package lessonbook

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"outlierlab/engine/course"
	"outlierlab/lessons"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// loadBook is the lessons of fsys, compiled.
func loadBook(t *testing.T, fsys fs.FS) *Book {
	t.Helper()
	b, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A step's check is evaluated with the learner's own settings: with the
// cap at 34, h5 is ejected at 40 s as the cap-17 step wants, yet cap-17
// is not done until the cap is 17. The fixture keeps the course's rule.
func TestLessonCheckNeedsItsAction(t *testing.T) {
	d := loadBook(t, os.DirFS("../testdata/lessons")).ByID["fixture"]
	if lines := course.Report([]course.Lesson{d.Lesson}, []uint64{1, 2, 3}); len(lines) != 15 {
		t.Errorf("%d report lines, want 15", len(lines))
	} else {
		for _, l := range lines {
			if !l.OK() {
				t.Error(l)
			}
		}
	}
	done := func(cap float64) (bool, bool) {
		t.Helper()
		run := webtest.BuildRun(t, d.Inputs("").With(map[string]float64{"max_ejection_percent": cap}))
		st := d.Statuses(run, 0, len(run.Frames))
		return st[0].Done, st[1].Done
	}
	for _, tc := range []struct {
		cap          float64
		cap34, cap17 bool
	}{{10, false, false}, {34, true, false}, {17, true, true}} {
		if a, b := done(tc.cap); a != tc.cap34 || b != tc.cap17 {
			t.Errorf("cap %v: cap-34 done %v, cap-17 done %v; want %v, %v", tc.cap, a, b, tc.cap34, tc.cap17)
		}
	}
	// The setting part is decided at once: at t = 0 with the cap at 34,
	// cap-17 says it is not these settings, not "play on".
	run := webtest.BuildRun(t, d.Inputs("").With(map[string]float64{"max_ejection_percent": 34}))
	if st := d.Statuses(run, 0, 0)[1]; st.Done || st.Hint != "not with these settings" || st.Detail != "setting max_ejection_percent: 34 (wanted 17)" {
		t.Errorf("cap-17 at t = 0: %+v", st)
	}
}

// A status never throws: every step's check against every lesson's runs,
// at every cursor, on scenarios it was not written for.
func TestLessonStatusesOnAnyRun(t *testing.T) {
	var runs []*tabstate.Run
	for _, other := range []string{"search-cache", "burst", "small-fleet"} {
		runs = append(runs, webtest.BuildRun(t, tabstate.Inputs{Preset: other}))
	}
	for _, d := range loadBook(t, lessons.FS).List {
		for _, run := range runs {
			for c := 0; c <= len(run.Frames); c += 7 {
				sts := d.Statuses(run, 0, c)
				vals := d.Values(run, c)
				if len(sts) != len(d.Steps) || len(vals) != len(d.Slots) {
					t.Fatalf("%s on %s: %d statuses, %d values", d.ID, run.Preset, len(sts), len(vals))
				}
			}
		}
	}
}

// A lesson's steps as its page's buttons and commands ask for them: the
// start ("") and its own steps exist, others do not; a step of the
// lesson's own scenario loads the lesson's start (the cap at 10: the
// learner makes the step's change, course.StartSettings); the page shows
// the lesson's controls, no others.
func TestDocSteps(t *testing.T) {
	d := loadBook(t, os.DirFS("../testdata/lessons")).ByID["fixture"]
	for _, tt := range []struct {
		step   string
		has    bool
		preset string
		capPct float64
	}{
		{"", true, "search-cache", 10},
		{"cap-34", true, "search-cache", 10},
		{"cap-17", true, "search-cache", 10},
		{"nope", false, "", 0},
	} {
		if got := d.HasStep(tt.step); got != tt.has {
			t.Errorf("HasStep(%q) = %v, want %v", tt.step, got, tt.has)
		}
		if !tt.has {
			continue
		}
		in := d.Inputs(tt.step)
		if in.Preset != tt.preset {
			t.Errorf("Inputs(%q).Preset = %q, want %q", tt.step, in.Preset, tt.preset)
		}
		if got := webtest.BuildRun(t, in).Values["max_ejection_percent"]; got != tt.capPct {
			t.Errorf("Inputs(%q): the cap is %v, want %v", tt.step, got, tt.capPct)
		}
	}
	for _, tt := range []struct {
		control string
		shown   bool
	}{{"max_ejection_percent", true}, {"hosts", false}, {"interval", false}} {
		if got := d.Shows(tabstate.LookupControl(tt.control)); got != tt.shown {
			t.Errorf("Shows(%s) = %v, want %v", tt.control, got, tt.shown)
		}
	}
	// A slot with no value yet shows the course's dash.
	if got := d.StepTexts[0].HTML(nil); strings.Contains(got, "live") {
		t.Errorf("the fixture's first step has no slot, yet: %s", got)
	}
	if got := (richText{{slot: 0}}).HTML(nil); got != `<span class="live" data-text="$_ph.p0">`+course.Dash+`</span>` {
		t.Errorf("an empty slot = %s", got)
	}
}

// Markdown is rendered without passing raw HTML through, and a
// placeholder becomes a span bound to its signal, wherever it stands.
func TestLessonMarkdown(t *testing.T) {
	const file = `---
id: demo
title: "Demo"
summary: "A demo."
order: 1
minutes: 1
goals: ["Know {{hosts}}."]
preset: search-cache
controls: [max_ejection_percent]
steps:
  - id: look
    text: "Step to {{threshold@40s}} **now**."
    charts: [chart-sr]
    check: {kind: panic, at: 40s}
    passes_before: "a test of rendering"
predict:
  before_step: look
  question: "Q?"
  choices: ["a", "b"]
  answer: 0
  reveal: "The cap is {{cap_pct}}%."
quiz:
  - {question: "Q1", choices: ["x", "y"], answer: 1, explain: "Because."}
  - {question: "Q2", choices: ["x", "y"], answer: 0, explain: "Because."}
---
# Heading

<script>alert(1)</script>

Hosts: {{hosts}}, cap {{cap_pct}}%, in code ` + "`{{hosts}}`" + `, <b onclick="x()">bold</b>.

::: after-prediction
The answer: **{{cap_pct}}**.
:::
`
	b, err := Load(fstest.MapFS{"demo.md": {Data: []byte(file)}})
	if err != nil {
		t.Fatal(err)
	}
	d := b.ByID["demo"]
	if got := len(d.Slots); got != 3 {
		t.Errorf("%d slots, want 3 (hosts, cap_pct, threshold@40s)", got)
	}
	vals := make([]string, len(d.Slots))
	for i := range vals {
		vals[i] = "V" + tabstate.Itoa(i) + "<&>"
	}
	html := d.Body.HTML(vals)
	for _, bad := range []string{"<script", "onclick", "<b "} {
		if strings.Contains(html, bad) {
			t.Errorf("raw HTML passed through (%s):\n%s", bad, html)
		}
	}
	for _, want := range []string{"<h1>Heading</h1>", `<span class="live" data-text="$_ph.p0">V0&lt;&amp;&gt;</span>`, `<code><span class="live" data-text="$_ph.p0">`, `data-text="$_ph.p1"`} {
		if !strings.Contains(html, want) {
			t.Errorf("body lacks %s:\n%s", want, html)
		}
	}
	// The prose after the prediction: hidden in its own block, its live
	// numbers still bound.
	if want := `<div class="after-prediction" hidden data-show="$predicted"><p>The answer: <strong><span class="live" data-text="$_ph.p1">V1&lt;&amp;&gt;</span></strong>.</p></div>`; !strings.HasSuffix(html, want) {
		t.Errorf("body does not end with the hidden block %s:\n%s", want, html)
	}
	if got := d.StepTexts[0].HTML(vals); got != `Step to <span class="live" data-text="$_ph.p2">V2&lt;&amp;&gt;</span> <strong>now</strong>.` {
		t.Errorf("step text = %s", got)
	}
	if got := d.Reveal.HTML(vals); !strings.Contains(got, `data-text="$_ph.p1"`) {
		t.Errorf("reveal = %s", got)
	}
}
