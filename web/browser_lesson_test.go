package web

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// TestBrowserLesson drives the cap lesson in headless Chromium: the page
// opens on the lesson's scenario with only its controls; stepping and
// playback stop at 30 s for the prediction and go on once it is answered; with the cap at
// 34 the cap-34 step turns done when the run gets there; the live numbers
// in the prose follow; progress lands in localStorage; and nothing is asked
// of any other host.
func TestBrowserLesson(t *testing.T) {
	b := startBrowser(t, 1600, 1000)
	overflows := lessonHoldAndPredict(t, b)
	lessonCap34(t, b, overflows)
	lessonProgress(t, b)
	b.CheckOffline()
}

// scrub is the cursor the page shows, as a number.
const scrub = `Number(document.getElementById('scrub').value)`

// lessonHoldAndPredict opens the cap lesson, steps and plays to the pause
// for the prediction, answers it and plays to the end; it returns the
// live overflow count the prose shows then.
func lessonHoldAndPredict(t *testing.T, b *browser) string {
	step, eval, poll := b.Step, b.Eval, b.Poll
	step("open /lessons/cap", chromedp.Navigate(b.URL+"/lessons/cap"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	if got := eval(`document.getElementById('scenario-name').textContent`); got != "search-cache" {
		t.Fatalf("scenario = %q, want search-cache", got)
	}
	if got := eval(`[...document.querySelectorAll('#controls [name]')].map(e => e.name).join(',')`); got != "max_ejection_percent,always_eject_one_host,hosts" {
		t.Errorf("controls = %s, want the lesson's three", got)
	}
	if got := eval(`document.getElementById('c-max_ejection_percent').value`); got != "10" {
		t.Errorf("cap slider starts at %s, want the lesson's 10", got)
	}

	// Step before answering: the cursor stops at 30 s for the prediction,
	// however often the learner steps, and the log stops there too.
	for i := range 5 {
		step("step "+tabstate.Itoa(i+1), chromedp.Click(chromedp.CSS("#btn-step")))
		if i < 3 {
			poll("the step to "+tabstate.Itoa((i+1)*10)+" s", scrub+` === `+tabstate.Itoa(i+1))
		}
	}
	poll("the pause at 30 s on step", `document.querySelector('#status .state.held') !== null && `+scrub+` === 3`)
	// The newest line: the run of "no outlier" up to the pause, 10–30 s.
	if got := eval(`document.querySelector('#log-list .entry time').textContent`); !strings.HasSuffix(got, "30 s") {
		t.Errorf("the newest log entry while held is at %q, want it to end at 30 s", got)
	}
	step("back", chromedp.Click(chromedp.CSS("#btn-back")))
	poll("one step back", scrub+` === 2 && document.querySelector('#status .state.held') === null`)

	// Play before answering: the run pauses at 30 s for the prediction.
	step("speed 16×", chromedp.Click(chromedp.CSS(`button.speed[title="16 intervals/s"]`)))
	step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	poll("the pause at 30 s", `document.querySelector('#status .state.held') !== null && `+scrub+` === 3`)
	if cls := eval(`document.getElementById('predict').className`); !strings.Contains(cls, "asking") {
		t.Errorf("the prediction is not highlighted while playback waits: class %q", cls)
	}
	if eval(`String(document.querySelector('#predict .reveal').hidden)`) != "true" {
		t.Error("the reveal shows before the learner answers")
	}

	// Answer: the reveal appears, and playback goes on to the end.
	step("answer the prediction", chromedp.Click(chromedp.CSS(`#predict .choice[data-file="0"]`)))
	poll("the reveal", `!document.querySelector('#predict .reveal').hidden && document.querySelector('#predict .verdict').textContent === 'Right.'`)
	poll("playback to the end", scrub+` === 30`)
	poll("the overflow step done", `document.querySelector('#st-overflow').dataset.done === 'true'`)
	if eval(`document.querySelector('#st-cap-34').dataset.done`) != "false" {
		t.Error("cap-34 is done with the cap at 10")
	}
	return eval(`document.querySelector('[data-text="$_ph.p7"]').textContent`)
}

// lessonCap34 plays the lesson again with the cap at 34: the cap-34 step
// turns done at the end, the live numbers follow, progress is stored.
func lessonCap34(t *testing.T, b *browser, overflows string) {
	step, eval, poll := b.Step, b.Eval, b.Poll
	// Back to t = 0, the cap to 34, play: cap-34 is not yet until the run
	// has been played to its end, then done.
	eval(`(() => { const el = document.getElementById('scrub');
		el.value = '0'; el.dispatchEvent(new Event('input', {bubbles: true})); return 'ok' })()`)
	poll("the cursor at 0", scrub+` === 0 && document.querySelector('#st-overflow').dataset.done === 'false'`)
	eval(`(() => { const el = document.getElementById('c-max_ejection_percent');
		el.value = '34'; el.dispatchEvent(new Event('input', {bubbles: true})); return 'ok' })()`)
	poll("the cap display", `document.querySelector('output[for=c-max_ejection_percent]').textContent === '34%'`)
	poll("the cap arithmetic in the prose", `[...document.querySelectorAll('.prose .live')].some(e => e.textContent === '34')`)
	if eval(`document.querySelector('#st-cap-34').dataset.done`) != "false" {
		t.Error("cap-34 is done at t = 0")
	}
	step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	poll("playback", scrub+` > 0`)
	poll("cap-34 done", `document.querySelector('#st-cap-34').dataset.done === 'true'`)
	if got := eval(`String(` + scrub + `)`); got != "30" {
		t.Errorf("cap-34 done at interval %s; its check reads the whole run (30 intervals)", got)
	}
	if got := eval(`document.querySelector('#st-cap-34 .word').textContent`); got != "done" {
		t.Errorf("cap-34 status says %q", got)
	}
	if got := eval(`document.querySelector('[data-text="$_ph.p7"]').textContent`); got == overflows {
		t.Errorf("the live overflow count in the prose did not change with the cap: %s", got)
	}
	// The prediction is stored as the place the learner saw the answer
	// at (the choices are shuffled for this browser).
	picked := eval(`document.querySelector('#predict .choice[data-file="0"]').dataset.choice`)
	stored := eval(`localStorage.getItem('outlierlab.progress') || ''`)
	if !strings.Contains(stored, `"cap-34":true`) || !strings.Contains(stored, `"predict":`+picked) {
		t.Errorf("progress in localStorage = %s", stored)
	}

}

// lessonProgress answers the quiz, takes the screenshot, and checks the
// progress on the course list and on a second visit.
func lessonProgress(t *testing.T, b *browser) {
	step, eval, poll := b.Step, b.Eval, b.Poll
	// A quiz answer shows its explanation.
	step("answer a quiz question", chromedp.Click(chromedp.CSS(`.quiz .question[data-index="2"] .choice[data-file="0"]`)))
	poll("the explanation", `!document.querySelector('.quiz .question[data-index="2"] .reveal').hidden`)

	// The screenshot: the lab at the top, the prose at its "Try this".
	step("scroll", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0);
		const prose = document.querySelector('.prose');
		prose.scrollTop = document.getElementById('try').offsetTop - prose.offsetTop - 8`))
	png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(t.TempDir(), "lesson.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(os.TempDir(), "outlierlab-lesson.png"), png, 0o644)
	t.Logf("screenshot: %s (and %s)", shot, filepath.Join(os.TempDir(), "outlierlab-lesson.png"))

	// Keyboard as in the lab: ← steps back.
	step("focus the page", chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	step("press ←", chromedp.KeyEvent(kb.ArrowLeft))
	poll("the cursor to move back", scrub+` === 29`)

	// The course list shows the progress.
	step("open /", chromedp.Navigate(b.URL+"/"), chromedp.WaitVisible(chromedp.CSS(".course-list")))
	poll("the cap lesson's progress", `document.querySelector('.lesson-card[data-lesson="cap"] [data-progress]').textContent.includes('steps')`)
	if got := eval(`document.querySelector('.lesson-card[data-lesson="consecutive"] [data-progress]').textContent`); got != "not started" {
		t.Errorf("an untouched lesson says %q", got)
	}

	// A second visit: the answered prediction is restored from storage and
	// playback no longer pauses for it; cap-34 shows it was done before.
	step("reopen /lessons/cap", chromedp.Navigate(b.URL+"/lessons/cap"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	poll("the restored answer", `document.getElementById('predict').classList.contains('answered') && !document.querySelector('#predict .reveal').hidden`)
	poll("the step done before", `document.getElementById('step-cap-34').classList.contains('was-done')`)
	step("speed instant", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
	step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	poll("playback past 30 s", scrub+` === 30`)
	if eval(`String(document.querySelector('#status .state.held') !== null)`) != "false" {
		t.Error("playback paused for a prediction answered on an earlier visit")
	}

	// The lesson's end, the prediction answered: what was learned shows,
	// and its "your cluster" form opens the free lab with the learner's
	// hosts and traffic (a GET to /lab: the browser writes the permalink).
	poll("the ending", `!document.getElementById('ending').hidden && document.getElementById('ending').offsetParent !== null`)
	eval(`(() => { document.getElementById('yours-hosts').value = '12'; document.getElementById('yours-rps').value = '2000'; return 'ok' })()`)
	step("open the lab with my numbers", chromedp.Click(chromedp.CSS("#yours-open")), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	poll("the lab with my numbers", `location.pathname === '/lab' && new URLSearchParams(location.search).get('hosts') === '12' &&
		document.getElementById('c-hosts').value === '12' && document.getElementById('c-rps').value === '2000'`)
}

// TestBrowserLessonChecks drives the test lesson in testdata/lessons (its
// own server, so the course's prose can change without touching it): the
// prose kept back for the prediction is hidden until it is answered; a
// step's check does not tick before its own action (the cap at 34 ejects
// h5 as the cap-17 step wants, but cap-17 waits for the cap at 17); and a
// lesson is done when its steps are, the quiz a score beside it, never
// "done" for answering it.
func TestBrowserLessonChecks(t *testing.T) {
	b := startBrowser(t, 1400, 1000)
	lab := fixtureServer(t)
	ts := webtest.Serve(t, lab)
	step, eval, poll := b.Step, b.Eval, b.Poll
	note := `document.querySelector('[data-lesson-progress]').textContent`
	done := func(id string) string { return `document.querySelector('#st-` + id + `').dataset.done` }
	setCap := func(v string) {
		t.Helper()
		eval(`(() => { const el = document.getElementById('c-max_ejection_percent');
			el.value = '` + v + `'; el.dispatchEvent(new Event('input', {bubbles: true})); return 'ok' })()`)
		poll("the cap at "+v, `document.querySelector('output[for=c-max_ejection_percent]').textContent === '`+v+`%'`)
	}

	step("open the test lesson", chromedp.Navigate(ts.URL+"/lessons/fixture"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	if eval(`String(document.querySelector('.after-prediction').hidden && document.querySelector('.after-prediction').offsetParent === null)`) != "true" {
		t.Error("the prose after the prediction shows before it is answered")
	}
	if got := eval(`document.querySelector('.prose .body').innerText`); strings.Contains(got, "this sentence is the answer") {
		t.Errorf("the answer is in the page's text before the prediction:\n%s", got)
	}

	// The quiz answered, one right and one wrong, no step done: not done.
	step("quiz 1, right", chromedp.Click(chromedp.CSS(`.quiz .question[data-index="0"] .choice[data-file="0"]`)))
	step("quiz 2, wrong", chromedp.Click(chromedp.CSS(`.quiz .question[data-index="1"] .choice[data-file="1"]`)))
	poll("the progress with the quiz score", note+` === '0 of 2 steps done · quiz 1/2'`)

	// The prediction answered: the prose kept back shows.
	step("answer the prediction", chromedp.Click(chromedp.CSS(`#predict .choice[data-file="1"]`)))
	poll("the prose after the prediction", `!document.querySelector('.after-prediction').hidden && document.querySelector('.after-prediction').offsetParent !== null`)

	// The cap at 34, played to the end: cap-34 is done; cap-17's outcome
	// is there too (h5 ejected at 40 s), but not its action.
	setCap("34")
	step("speed instant", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
	step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	poll("cap-34 done", done("cap-34")+` === 'true'`)
	if got := eval(done("cap-17")); got != "false" {
		t.Error("cap-17 is done with the cap at 34: the check ticked before its action")
	}
	if got := eval(`document.querySelector('#st-cap-17 .hint').textContent`); got != "not with these settings" {
		t.Errorf("cap-17's hint with the cap at 34: %q", got)
	}
	poll("one step done", note+` === '1 of 2 steps done · quiz 1/2'`)

	// The cap at 17, the cursor at the end: cap-17 waits to be watched;
	// played, it is done, and so is the lesson, quiz 1/2.
	setCap("17")
	poll("cap-17 waits to be played", `(document.querySelector('#st-cap-17 .hint') || {}).textContent.startsWith('play it')`)
	if got := eval(done("cap-17")); got != "false" {
		t.Error("cap-17 is done on the setting change alone")
	}
	step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	poll("cap-17 done", done("cap-17")+` === 'true'`)
	poll("the lesson done", note+` === '✓ done · quiz 1/2'`)

	// Reopened: the answer is remembered, the prose shows at once.
	step("reopen", chromedp.Navigate(ts.URL+"/lessons/fixture"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	poll("the prose after the prediction, remembered", `!document.querySelector('.after-prediction').hidden`)
	poll("the progress, remembered", note+` === '✓ done · quiz 1/2'`)

	// The course list says the same.
	step("open /", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(".course-list")))
	poll("the card's progress", `document.querySelector('.lesson-card[data-lesson="fixture"] [data-progress]').textContent === '✓ done · quiz 1/2'`)
	step("leave", chromedp.Navigate("about:blank"))
}

// fixtureServer serves the test lesson in testdata/lessons: two cap
// steps, the second checking the learner's own setting.
func fixtureServer(t testing.TB) *Server {
	t.Helper()
	s, err := New(Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Lessons: os.DirFS("testdata/lessons")})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}
