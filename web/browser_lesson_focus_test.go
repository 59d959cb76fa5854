package web

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outlierlab/engine/course"
	"outlierlab/lessons"
	"outlierlab/web/internal/browsertest"
)

// TestBrowserLessonFocus makes every step of every lesson current, as a
// learner does with the step's button, at 1280×800 and at 390×844, and
// asserts what issue 38 asks of one idea per step: the transport (Play,
// Step) and the step's key chart (its charts' first, course.Step.Charts)
// are both wholly in the window, the chart not under the transport, and
// the step's own charts shown, the others folded behind "All charts"
// until it is pressed. Where a step has the prediction, its box starts
// just under the key chart. One Chromium, one tab, each lesson
// opened once per size; every wait is on a condition.
func TestBrowserLessonFocus(t *testing.T) {
	ls, err := course.Load(lessons.FS)
	if err != nil {
		t.Fatal(err)
	}
	b := startBrowserWithin(t, 1280, 800, 8*time.Minute)
	start := time.Now()
	for _, size := range [][2]int{{1280, 800}, {390, 844}} {
		for _, l := range ls {
			t.Run(fmt.Sprintf("%dx%d/%s", size[0], size[1], l.ID), func(t *testing.T) {
				b := b.On(t)
				b.Step("viewport", chromedp.EmulateViewport(int64(size[0]), int64(size[1])))
				b.Step("open the lesson", chromedp.Navigate(b.URL+"/lessons/"+l.ID))
				b.Poll("the stream", `document.getElementById('stream').dataset.conn === 'live' && document.getElementById('step-`+l.Steps[0].ID+`').classList.contains('now')`)
				for _, st := range l.Steps {
					id := jsString(st.ID)
					b.Eval(`(() => { document.querySelector('.stepper [data-now=' + JSON.stringify(` + id + `) + ']').click(); return '' })()`)
					if !pollFor(b, browsertest.StepInView+`(`+id+`)`, 10*time.Second) {
						t.Errorf("step %s: the transport and the key chart %s are not both in view: %s", st.ID, st.Charts[0], b.Eval(browsertest.StepWhere+`(`+id+`)`))
						continue
					}
					// The step's charts show, no other (the compare strip, a
					// mesh chart the run has no use for: never).
					shown := b.Eval(`[...document.querySelectorAll('.lesson-lab .chart-box')].filter(f => f.checkVisibility()).map(f => f.id.slice(4)).sort().join(' ')`)
					if want := sortedJoin(st.Charts); shown != want {
						t.Errorf("step %s: charts shown %q, want the step's %q", st.ID, shown, want)
					}
					if l.Predict.BeforeStep == st.ID {
						gap := b.Eval(`String(Math.round(document.getElementById('predict').getBoundingClientRect().top - document.getElementById('fig-` + st.Charts[0] + `').getBoundingClientRect().bottom))`)
						if n := atoiOr(gap, -1); n < 0 || n > 160 {
							t.Errorf("step %s: the prediction starts %s px under its key chart, want 0–160 (the step box's head between them)", st.ID, gap)
						}
					}
				}
				// All charts: every chart the run has is one click away.
				b.Eval(`(() => { document.querySelector('.stepper .all-toggle').click(); return '' })()`)
				b.Poll("every chart shown", `![...document.querySelectorAll('.lesson-lab .chart-box')].some(f => f.classList.contains('off-step'))`)
			})
		}
	}
	t.Logf("%d lessons at two sizes in %s", len(ls), time.Since(start).Round(time.Second))
	b.CheckOffline()
}

// pollFor waits up to limit for js to be true on b's page.
func pollFor(b *browsertest.Browser, js string, limit time.Duration) bool {
	_, err := chromedp.Run(b.Ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(limit)))
	return err == nil
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

func sortedJoin(ss []string) string { return strings.Join(slices.Sorted(slices.Values(ss)), " ") }

func atoiOr(s string, or int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return or
}
