// Package lessonwalk_test is the walk through the course in a browser:
// every lesson played as a learner plays it, with the mouse, and the first
// one with the keyboard alone (issue 38's acceptance). A package of tests
// only, so that its minute or two of Chromium runs beside the web
// package's tests, not inside them (CI runs packages two at a time).
package lessonwalk_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"outlierlab/engine/course"
	"outlierlab/lessons"
	"outlierlab/web"
	"outlierlab/web/internal/browsertest"
	"outlierlab/web/tabstate"
)

// TestBrowserLessonWalk plays every lesson of the course as a learner
// does, with the mouse, and the first lesson (consecutive) again with the
// keyboard alone, counting its key presses (issue 38's acceptance). Each
// step's actions come from the lesson file, not from a script per lesson:
// the step's button makes it current; a step with its own scenario has
// its Load pressed (one about the lesson's scenario, after such a step,
// its status's "Load …" button); every shown setting that differs from
// what the step leads to (course.Settings) is moved there; then the
// learner plays or steps into the step's window, whose end is the last
// moment its check reads (course.EvaluateWatched's NeedsCursorMs on the
// lesson's own run), from t = 0 if the cursor was already past it. Per
// step it asserts:
//   - made current, the transport and the step's key chart are both in the
//     window (at 1280×800 only: TestBrowserLessonFocus checks every step
//     at 390×844 too, without playing);
//   - after the setting changes, before the cursor moves, the step is not
//     done: its status says what is left ("step to …", "play it …"); a
//     step marked passes_before, whose check may hold on a run already
//     watched, is the one exception, and only when nothing changed;
//   - after the learner's action it is done, and its step button says so;
//   - the prediction's reveal, and the prose kept back for it, are not in
//     the page's text until the learner answers (and are after: the probe
//     is the right text).
//
// The mouse sets a slider or a menu the way a drag ends, by its value and
// an input or change event (the path TestBrowserLesson uses); the
// keyboard walk moves them with arrow keys. Playback runs at instant
// speed; every wait is on a condition; one Chromium for all of it. The
// test is skipped in -short (browsertest.SkipWithoutChromium).
func TestBrowserLessonWalk(t *testing.T) {
	ls, err := course.Load(lessons.FS)
	if err != nil {
		t.Fatal(err)
	}
	s, err := web.New(web.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.StartWithin(t, s.Handler(), s.Shutdown, 1280, 800, 10*time.Minute)
	start := time.Now()
	for _, l := range ls {
		t.Run("mouse/"+l.ID, func(t *testing.T) {
			w := newWalker(t, b.On(t), l, false)
			w.walk()
		})
	}
	mouse := time.Since(start)
	t.Run("keyboard/"+ls[0].ID, func(t *testing.T) {
		// A browser profile of its own would be a new Chromium; instead the
		// keyboard learner starts with this browser's progress cleared.
		w := newWalker(t, b.On(t), ls[0], true)
		w.b.Step("leave", chromedp.Navigate(b.URL+"/"))
		w.b.Eval(`(() => { localStorage.clear(); return '' })()`)
		w.walk()
		// A second visit: every step's button shows it was done, from this
		// browser's storage (the run on screen is the lesson's start again).
		w.b.Step("reopen", chromedp.Navigate(b.URL+"/lessons/"+ls[0].ID))
		w.b.Poll("every step's button done", `[...document.querySelectorAll('.stepper [data-now]')].every((b, i) => b.classList.contains('done') && b.getAttribute('aria-label') === 'Step ' + (i + 1) + ', done')`)
		if got := w.b.Eval(`String([...document.querySelectorAll('#st-' + ` + jsString(ls[0].Steps[2].ID) + `)].map(s => s.dataset.done))`); got != "false" {
			t.Errorf("reopened, step %s's live status is done %s, want false (the lesson's start is on screen): the ✓ is from the earlier visit", ls[0].Steps[2].ID, got)
		}
		t.Logf("lesson %s by keyboard: %d key presses, %d of them Tab (or Shift+Tab), %d other keys", ls[0].ID, w.tabs+w.others, w.tabs, w.others)
	})
	t.Logf("%d lessons by mouse in %s, one by keyboard in %s", len(ls), mouse.Round(time.Second), (time.Since(start) - mouse).Round(time.Second))
	b.CheckOffline()
}

// walker plays one lesson.
type walker struct {
	t    *testing.T
	b    *browsertest.Browser
	l    course.Lesson
	keys bool
	// tabs and others count the keyboard walk's key presses.
	tabs, others int
	// probes are bits of the prediction's reveal and of the prose kept
	// back for it, as the page's text shows them.
	probes   []string
	answered bool
}

func newWalker(t *testing.T, b *browsertest.Browser, l course.Lesson, keys bool) *walker {
	w := &walker{t: t, b: b, l: l, keys: keys}
	w.probes = revealProbes(l)
	return w
}

const scrub = `Number(document.getElementById('scrub').value)`

func (w *walker) walk() {
	t, b, l := w.t, w.b, w.l
	b.Step("open the lesson", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(b.URL+"/lessons/"+l.ID))
	b.Poll("the stream", `document.getElementById('stream').dataset.conn === 'live' && document.getElementById('step-`+l.Steps[0].ID+`').classList.contains('now') && !!document.querySelector('#chart-lanes canvas')`)
	b.Eval(watchPosts)
	w.unanswered("the lesson opened")
	if w.keys {
		w.press("i") // instant: the page's own key
	} else {
		w.click(`button.speed[data-speed="instant"]`)
	}
	b.Poll("instant speed", `document.querySelector('button.speed[data-speed="instant"]').getAttribute('aria-pressed') === 'true'`)
	for i, st := range l.Steps {
		if t.Failed() {
			return
		}
		w.step(i, st)
	}
	if t.Failed() {
		return
	}
	if !w.answered {
		t.Errorf("the walk never met the prediction (before %s)", l.Predict.BeforeStep)
	}
	b.Poll("the lesson done", `document.querySelector('[data-lesson-progress]').textContent.startsWith('✓ done')`)
}

// step does step i as its text says, and asserts it ticks then, not before.
func (w *walker) step(i int, st course.Step) {
	t, b, l := w.t, w.b, w.l
	id := jsString(st.ID)
	status := `document.getElementById('st-' + ` + id + `)`
	need, frames := w.window(st)

	// Current, by its button, or by the keyboard's c when it is the step
	// to do now (js/keys.js: the first not done; it takes the focus).
	if w.keys && b.Eval(firstToDo) == st.ID {
		w.offField()
		w.currentStep()
	} else {
		w.activate(`.stepper [data-now=` + id + `]`)
	}
	b.Poll("step "+st.ID+" current", `document.getElementById('step-' + `+id+`).classList.contains('now')`)
	inView := pollFor(b, browsertest.StepInView+`(`+id+`)`, 10*time.Second)
	w.unanswered("step " + st.ID + " current")

	// Its scenario: its own button, or back to the lesson's.
	preset := l.PresetFor(st.ID)
	changed := false
	if st.Preset != "" && b.Eval(`document.getElementById('scenario-name').textContent`) != preset {
		w.activate(`#step-` + st.ID + ` button.load`)
		b.Poll("the step's scenario loaded, at t = 0", `document.getElementById('scenario-name').textContent === `+jsString(preset)+` && `+scrub+` === 0 && window.__walk.inflight === 0`)
		changed = true
		// Load sits below the key chart on a step with a prediction: the
		// page brings the chart back under the transport (js/lesson.js).
		if inView && !pollFor(b, browsertest.StepInView+`(`+id+`)`, 10*time.Second) {
			t.Errorf("step %s: after its Load, the transport and the key chart %s are not both in view: %s", st.ID, st.Charts[0], b.Eval(browsertest.StepWhere+`(`+id+`)`))
		}
	} else if b.Eval(`document.getElementById('scenario-name').textContent`) != preset {
		w.activate(`#st-` + st.ID + ` button.load.back`)
		b.Poll("back to the lesson's scenario", `document.getElementById('scenario-name').textContent === `+jsString(preset)+` && `+scrub+` === 0 && window.__walk.inflight === 0`)
		changed = true
	}

	// Its settings: each one the page shows that differs from the step's.
	want, err := course.Settings(l, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range l.ControlNames() {
		v, ok := want[name]
		if !ok {
			continue
		}
		if w.setControl(st.ID, name, v) {
			changed = true
		}
	}
	w.unanswered("step " + st.ID + "'s settings made")

	// Made current, the step's key chart and the transport are in view;
	// or, failing that, once its settings are made (a chart the run has
	// no use for shows when the step's settings make one: the mesh
	// lesson's volume chart wants 20 proxies, and its step's button brings
	// it into view, not its Load, which is further down the step).
	if !inView {
		w.activate(`.stepper [data-now=` + id + `]`)
		inView = pollFor(b, browsertest.StepInView+`(`+id+`)`, 10*time.Second)
	}
	if !inView {
		t.Errorf("step %s current: the transport and the key chart %s are not both in view: %s", st.ID, st.Charts[0], b.Eval(browsertest.StepWhere+`(`+id+`)`))
	}

	// The setting change alone does not tick it: once the status has
	// taken the new run, it says what is left to do.
	cursor := atoi(b.Eval(`String(` + scrub + `)`))
	wantHint := `h.startsWith('step to') || h === 'play to the end'`
	if cursor >= need {
		wantHint = `h.startsWith('play it')`
	}
	if changed || st.MustFailBefore() {
		ok := pollFor(b, `(() => { const s = `+status+`, h = (s.querySelector('.hint') || {}).textContent || '';
			return s.dataset.done === 'true' || `+wantHint+`; })()`, 15*time.Second)
		if b.Eval(status+`.dataset.done`) == "true" {
			t.Errorf("step %s ticked on the setting change alone (cursor %d, its window ends at %d)", st.ID, cursor, need)
			return
		}
		if !ok {
			t.Errorf("step %s after its settings: status %q (%s), want a hint matching %s", st.ID, b.Eval(status+`.textContent`), b.Eval(status+`.title`), wantHint)
			return
		}
	} else if b.Eval(status+`.dataset.done`) == "true" {
		// passes_before, nothing changed: the run already watched holds.
		t.Logf("step %s: already done on the run watched (passes_before: %s)", st.ID, *st.PassesBefore)
		w.doneButton(i, st)
		return
	}

	// A prediction asked without a pause is answered before playing.
	if l.Predict.BeforeStep == st.ID && l.Predict.PauseAt == 0 && !w.answered {
		w.answer()
	}

	// The learner's action: into the window, from t = 0 if past it.
	if cursor >= need {
		w.toStart()
	}
	if need-atoi(b.Eval(`String(`+scrub+`)`)) > 4 || need >= frames {
		w.play(need)
	} else {
		for atoi(b.Eval(`String(`+scrub+`)`)) < need {
			w.stepOnce()
		}
	}
	if !pollFor(b, status+`.dataset.done === 'true'`, 15*time.Second) {
		t.Errorf("step %s not done after the learner played into its window (to tick %d): %q, %s", st.ID, need, b.Eval(status+`.textContent`), b.Eval(status+`.title`))
		return
	}
	w.doneButton(i, st)
}

// window is the tick (the scrubber's value) by which step st's check has
// read all it reads on the lesson's own run, and the run's ticks.
func (w *walker) window(st course.Step) (need, frames int) {
	run, err := course.RunLesson(w.l, st.ID, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	res := course.EvaluateWatched(st.Check, &run, course.Watch{FromMs: -1, ToMs: course.WholeRun})
	if !res.Pass {
		w.t.Fatalf("step %s does not pass on its own run: %s", st.ID, res.Detail)
	}
	frames = len(run.Frames)
	for k := 1; k <= frames; k++ {
		if run.Frames[k-1].TMs >= res.NeedsCursorMs {
			return k, frames
		}
	}
	return frames, frames
}

// doneButton: the step's button says it is done, in its look and its name
// (what the stepper shows of a done step).
func (w *walker) doneButton(i int, st course.Step) {
	sel := `document.querySelector('.stepper [data-now=' + ` + jsString(st.ID) + ` + ']')`
	want := "Step " + strconv.Itoa(i+1) + ", done"
	if !pollFor(w.b, sel+`.classList.contains('done') && `+sel+`.getAttribute('aria-label') === `+jsString(want), 5*time.Second) {
		w.t.Errorf("step %s done: its button is %q, class %q; want %q and class done", st.ID, w.b.Eval(sel+`.getAttribute('aria-label')`), w.b.Eval(sel+`.className`), want)
	}
}

// play presses Play and waits for the cursor to reach need or stop at the
// prediction's pause; there the learner answers and playback goes on.
func (w *walker) play(need int) {
	b := w.b
	if w.keys {
		// Space plays unless the focus is on something space presses (a
		// button, a link, a menu): a slider, the page, a step will do; c
		// puts the focus on the step.
		if b.Eval(`String(document.activeElement.matches('a[href], button, summary, select, input:not([type=range]), textarea, [tabindex="0"]'))`) == "true" {
			w.offField()
			w.currentStep()
		}
		w.press(" ")
	} else {
		w.click(`#btn-play`)
	}
	b.Poll("playback to tick "+strconv.Itoa(need)+" or a pause", scrub+` >= `+strconv.Itoa(need)+` || !!document.querySelector('#status .state.held')`)
	if b.Eval(`String(!!document.querySelector('#status .state.held'))`) == "true" {
		w.answer()
		b.Poll("playback on to tick "+strconv.Itoa(need), scrub+` >= `+strconv.Itoa(need))
	}
}

// stepOnce steps one tick (or answers the prediction the cursor waits at).
func (w *walker) stepOnce() {
	b := w.b
	before := atoi(b.Eval(`String(` + scrub + `)`))
	if w.keys {
		w.offField()
		w.press(kb.ArrowRight)
	} else {
		w.click(`#btn-step`)
	}
	if !pollFor(b, scrub+` > `+strconv.Itoa(before)+` || !!document.querySelector('#status .state.held')`, 20*time.Second) {
		w.t.Fatalf("a step from tick %d: the page did not move in 20 s: %s", before, b.Eval(pageState))
	}
	if atoi(b.Eval(`String(`+scrub+`)`)) == before {
		w.answer()
	}
}

// toStart moves the cursor to t = 0: the scrubber dragged to its start, or
// the Home key.
func (w *walker) toStart() {
	if w.keys {
		w.offField()
		w.press(kb.Home)
	} else {
		w.b.Eval(`(() => { const el = document.getElementById('scrub'); el.value = '0'; el.dispatchEvent(new Event('input', {bubbles: true})); return '' })()`)
	}
	// The server's word, not the scrubber's: a redraw of an earlier
	// command still on its way puts the scrubber back where that command
	// left it, and a step read from there is a step from the wrong tick
	// (a page at 4 after the scrub to 0, seen at load 7).
	w.b.Poll("the cursor at 0", scrub+` === 0 && window.__walk.inflight === 0 && /^t = 0 s/.test(document.querySelector('#status .clock').textContent.trim())`)
}

// answer answers the prediction, asserting first that nothing on the
// page gives it away, and after that the reveal shows.
func (w *walker) answer() {
	t, b := w.t, w.b
	if w.answered {
		t.Fatal("the page waits for a prediction already answered")
	}
	b.Poll("the prediction's choices", `!!document.querySelector('#predict .choice') && document.querySelector('#predict .choice').checkVisibility()`)
	w.unanswered("the prediction asked")
	if w.keys {
		w.focus(`#predict .choice[data-choice="0"]`)
		w.press(kb.Enter)
	} else {
		w.click(`#predict .choice[data-choice="0"]`)
	}
	b.Poll("the reveal", `!document.querySelector('#predict .reveal').hidden`)
	w.answered = true
	text := pageText(b)
	for _, p := range w.probes {
		if !strings.Contains(text, p) {
			t.Errorf("answered, the page still does not show %q (a probe of the reveal or the prose kept back)", p)
		}
	}
}

// unanswered asserts, while the prediction is not answered, that no bit
// of its reveal or of the prose kept back for it is in the page's text.
func (w *walker) unanswered(when string) {
	if w.answered {
		return
	}
	text := pageText(w.b)
	for _, p := range w.probes {
		if strings.Contains(text, p) {
			w.t.Errorf("%s: the page shows %q before the prediction is answered", when, p)
		}
	}
}

// setControl moves the control of setting name to v, reporting whether it
// had to move; a control the step folded away is first shown with "All
// settings", as the learner would.
func (w *walker) setControl(step, name, v string) bool {
	t, b := w.t, w.b
	c := tabstate.LookupControl(name)
	if c == nil {
		t.Fatalf("no control %q", name)
	}
	n, ok := c.Number(v)
	if !ok {
		t.Fatalf("control %s cannot show %q", name, v)
	}
	// The page names a control by the catalog's name (lessons may use
	// another: retries is num_retries).
	name = c.Name
	el := `document.getElementById('c-` + name + `')`
	if b.Eval(`String(!!`+el+`)`) != "true" {
		return false // not a control of this page (Settings names more)
	}
	kind := b.Eval(el + `.type`)
	cur := func() string {
		if kind == "checkbox" {
			return b.Eval(`String(` + el + `.checked ? 1 : 0)`)
		}
		return b.Eval(el + `.value`)
	}
	target := strconv.FormatFloat(n, 'f', -1, 64)
	if kind == "select-one" {
		target = c.Choice(n)
	}
	same := func(s string) bool {
		if kind == "select-one" {
			return s == target
		}
		f, err := strconv.ParseFloat(s, 64)
		return err == nil && f == n
	}
	if same(cur()) {
		return false
	}
	if b.Eval(`String(`+el+`.checkVisibility())`) != "true" {
		t.Errorf("step %s: setting %s is not shown, and the step needs it at %s (it is %s)", step, name, target, cur())
		w.activate(`#controls .all-toggle`)
	}
	switch {
	case !w.keys && kind == "select-one":
		b.Eval(`(() => { const el = ` + el + `; el.value = ` + jsString(target) + `; el.dispatchEvent(new Event('change', {bubbles: true})); return '' })()`)
	case !w.keys && kind == "checkbox":
		w.click(`#c-` + name)
	case !w.keys:
		// A slider posts on input, a number field on change.
		b.Eval(`(() => { const el = ` + el + `; el.value = ` + jsString(target) + `; el.dispatchEvent(new Event(el.type === 'range' ? 'input' : 'change', {bubbles: true})); return '' })()`)
	case kind == "checkbox":
		w.focus(`#c-` + name)
		w.press(" ")
	case kind == "select-one":
		w.focus(`#c-` + name)
		to := atoi(b.Eval(`String([...` + el + `.options].findIndex(o => o.value === ` + jsString(target) + `))`))
		for i := 0; i < 20 && !same(cur()); i++ {
			if to > atoi(b.Eval(`String(`+el+`.selectedIndex)`)) {
				w.press(kb.ArrowDown)
			} else {
				w.press(kb.ArrowUp)
			}
		}
	default:
		// As a keyboard user moves a slider: Home or End for its ends,
		// Page Up or Down while a tenth of its range is still to go, then
		// the arrows.
		w.focus(`#c-` + name)
		lo, _ := strconv.ParseFloat(b.Eval(el+`.min`), 64)
		hi, _ := strconv.ParseFloat(b.Eval(el+`.max`), 64)
		switch n {
		case lo:
			w.press(kb.Home)
		case hi:
			w.press(kb.End)
		}
		for i := 0; i < 400 && !same(cur()); i++ {
			f, _ := strconv.ParseFloat(cur(), 64)
			switch {
			case n-f >= (hi-lo)/10:
				w.press(kb.PageUp)
			case f-n >= (hi-lo)/10:
				w.press(kb.PageDown)
			case f < n:
				w.press(kb.ArrowRight)
			default:
				w.press(kb.ArrowLeft)
			}
		}
	}
	if !same(cur()) {
		t.Fatalf("setting %s: %s, want %s", name, cur(), target)
	}
	// The server has it once the last settings post carried it and no
	// command is on its way (a slider posts at most every 120 ms: the
	// value may come in a trailing post).
	sent := jsString(target)
	switch kind {
	case "checkbox":
		sent = strconv.FormatBool(n != 0)
	case "select-one":
	default:
		sent = `Number(` + sent + `)`
	}
	b.Poll("the server to have "+name+" = "+target, `window.__walk.inflight === 0 && !!window.__walk.set && window.__walk.set.cfg[`+jsString(name)+`] === `+sent)
	return true
}

// activate presses a button: a click, or the focus moved to it and Enter.
func (w *walker) activate(sel string) {
	if w.keys {
		w.focus(sel)
		w.press(kb.Enter)
		return
	}
	w.click(sel)
}

// click scrolls sel to the middle of the window, where no sticky bar
// covers it (chromedp's own scrolling brings it just into the window,
// under the transport, which then takes the click), and clicks it.
func (w *walker) click(sel string) {
	w.b.Step("click "+sel, chromedp.ScrollIntoView(chromedp.CSS(sel)), chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(sel)+`).scrollIntoView({block: 'center'})`), chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// focus moves the keyboard's focus to sel with Tab, or Shift+Tab when it
// comes before the focus in the page (as a learner who sees it would).
func (w *walker) focus(sel string) {
	t, b := w.t, w.b
	q := `document.querySelector(` + jsString(sel) + `)`
	if b.Eval(`String(!!`+q+`)`) != "true" {
		t.Fatalf("nothing on the page matches %s", sel)
	}
	for i := 0; ; i++ {
		if b.Eval(`String(document.activeElement === `+q+`)`) == "true" {
			return
		}
		if i == 300 {
			t.Fatalf("300 Tabs did not reach %s (the focus is on %s)", sel, b.Eval(`document.activeElement.outerHTML.slice(0, 120)`))
		}
		back := b.Eval(`String(!!(` + q + `.compareDocumentPosition(document.activeElement) & Node.DOCUMENT_POSITION_FOLLOWING) && document.activeElement !== document.body)`)
		if back == "true" {
			w.press(kb.Tab, chromedp.KeyModifiers(kb.ModifierShift))
		} else {
			w.press(kb.Tab)
		}
	}
}

// offField moves the focus off a slider or a menu, which keep the arrow
// keys and Home (js/keys.js): from a slider c, which focuses the current
// step; from a menu or a field, which keep every key, a Tab on.
func (w *walker) offField() {
	if w.b.Eval(`String(document.activeElement.matches('input[type=range]'))`) == "true" {
		w.currentStep()
		return
	}
	for i := 0; i < 10 && w.b.Eval(`String(document.activeElement.matches('input, select'))`) == "true"; i++ {
		w.press(kb.Tab)
	}
}

// currentStep presses c, the page's key to the step to do now, and waits
// for the focus to get there (js/lesson.js moves it on the next frame:
// a key pressed before lands on what had the focus, a slider's Home on
// the slider).
func (w *walker) currentStep() {
	w.press("c")
	w.b.Poll("the focus on the current step", `document.activeElement.matches('.steps > .step')`)
}

// press sends one key press and counts it.
func (w *walker) press(key string, opts ...chromedp.KeyOption) {
	if key == kb.Tab {
		w.tabs++
	} else {
		w.others++
	}
	w.b.Step("press "+strconv.Quote(key), chromedp.KeyEvent(key, opts...))
}

// watchPosts wraps the page's fetch to know when the lab's commands have
// been answered: the count of those on their way, and the body of the
// last settings post (its cfg, the controls' values by name).
const watchPosts = `(() => {
	if (window.__walk) return '';
	const w = window.__walk = {inflight: 0, set: null}, f = window.fetch;
	window.fetch = function (input, init) {
		if (!init || String(init.method).toUpperCase() !== 'POST') return f.apply(this, arguments);
		if (String(input && input.url || input).includes('/lab/cmd/set')) { try { w.set = JSON.parse(init.body); } catch (_) {} }
		w.inflight++;
		return f.apply(this, arguments).finally(() => { w.inflight--; });
	};
	return '';
})()`

// firstToDo is the step js/lesson.js makes current on the c key: the
// first neither done nor done before.
const firstToDo = `(() => { const li = [...document.querySelectorAll('.lesson-page .steps > .step')].find((li) => !li.classList.contains('was-done') && !li.querySelector('.step-status.done')); return li ? li.dataset.step : ''; })()`

// pageText is what the page shows as text, white space collapsed.
func pageText(b *browsertest.Browser) string {
	return b.Eval(`document.body.innerText.replace(/\s+/g, ' ')`)
}

var (
	commentRE     = regexp.MustCompile(`(?s)<!--.*?-->`)
	placeholderRE = regexp.MustCompile(`\{\{[^}]*\}\}`)
	linkRE        = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	markupRE      = regexp.MustCompile("[*`]|^\\s*(#+|[-0-9.]+)\\s")
)

// revealProbes are bits of what the prediction gives away, one per
// paragraph of its reveal and of the prose kept back for it: the longest
// run of plain text in each (no live number, no markup), as the page's
// text shows it.
func revealProbes(l course.Lesson) []string {
	texts := []string{l.Predict.Reveal}
	for _, p := range l.BodyParts() {
		if p.AfterPrediction {
			texts = append(texts, strings.Split(p.Markdown, "\n\n")...)
		}
	}
	var out []string
	for _, t := range texts {
		t = linkRE.ReplaceAllString(commentRE.ReplaceAllString(t, ""), "$1")
		best := ""
		for _, line := range strings.Split(t, "\n") {
			for _, seg := range strings.Split(placeholderRE.ReplaceAllString(line, "\x00"), "\x00") {
				seg = strings.Join(strings.Fields(markupRE.ReplaceAllString(seg, "")), " ")
				if len(seg) > len(best) {
					best = seg
				}
			}
		}
		if len(best) > 60 {
			cut := strings.LastIndex(best[:60], " ")
			best = best[:cut]
		}
		if len(best) >= 20 {
			out = append(out, best)
		}
	}
	return out
}

func pollFor(b *browsertest.Browser, js string, limit time.Duration) bool {
	_, err := chromedp.Run(b.Ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(limit)))
	return err == nil
}

// pageState is what the page shows of its run and stream, for a failure's
// message: the cursor and its end, the status line, the notice and the
// stream's connection.
const pageState = `(() => { const s = document.getElementById('scrub'), st = document.getElementById('stream');
	return 'cursor ' + s.value + ' of ' + s.max + '; status "' + document.getElementById('status').textContent.replace(/\s+/g, ' ').trim() +
		'"; notice "' + ((document.getElementById('notice') || {}).textContent || '').trim() + '"; stream ' + (st ? st.dataset.conn : '?'); })()`

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(fmt.Sprintf("not a number: %q", s))
	}
	return n
}
