package web

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserLessonKeys is a keyboard user's three aids in a lesson
// (issue 38 item 7): when playback stops for the prediction, the focus
// moves from Play to the prediction's first choice; c focuses the current
// step (the first not done); the link before the settings skips them.
func TestBrowserLessonKeys(t *testing.T) {
	b := startBrowser(t, 1280, 800)
	step, eval, poll := b.Step, b.Eval, b.Poll
	step("open /lessons/cap", chromedp.Navigate(b.URL+"/lessons/cap"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))

	// The skip link is the tab stop just before the settings, and goes
	// past them.
	if got := eval(`(() => { const a = document.querySelector('.skip-settings'), c = document.getElementById('controls');
		return String(!!a && !!c && a.nextElementSibling === c && c.nextElementSibling.id === 'after-settings') })()`); got != "true" {
		t.Errorf("the skip link is not just before the settings, with its target just after them")
	}
	step("focus the skip link", chromedp.Focus(chromedp.CSS(".skip-settings")))
	step("follow it", chromedp.KeyEvent(kb.Enter))
	poll("past the settings", `document.activeElement.id === 'after-settings'`)

	// Play from the keyboard: the run stops at 30 s for the prediction,
	// and the focus is on its first choice, no longer on Play.
	step("focus Play", chromedp.Focus(chromedp.CSS("#btn-play")))
	step("16×", chromedp.KeyEvent("6"))
	step("play", chromedp.KeyEvent(" "))
	poll("held at the prediction, its first choice focused", `document.querySelector('#status .state.held') !== null &&
		document.activeElement.matches('#predict .choice[data-choice="0"]')`)

	// c: the current step, the first of the lesson's steps not done.
	step("c", chromedp.KeyEvent("c"))
	want := eval(`[...document.querySelectorAll('.steps > .step')].find(li => !li.classList.contains('was-done') && !li.querySelector('.step-status.done')).id`)
	if want == "" {
		t.Fatal("no step left to do at the pause")
	}
	poll("the current step focused", `document.activeElement.id === '`+want+`'`)
	if got := eval(`String(/<kbd>c<\/kbd>/.test(document.getElementById('keys').innerHTML))`); got != "true" {
		t.Errorf("the keys dialog does not list c")
	}

	// Answered, c then space plays on from the step c focuses: space is
	// not the step's (it has tabindex -1 only so c can focus it), and the
	// learner needs no Tabs back to Play.
	// (Answered, playback goes on by itself: wait for its end, then go
	// back to t = 0 with Home.)
	step("answer", chromedp.Click(chromedp.CSS(`#predict .choice[data-choice="0"]`)))
	poll("playback to the end", scrub+` === Number(document.getElementById('scrub').max) && document.getElementById('btn-play').getAttribute('aria-pressed') === 'false'`)
	step("c", chromedp.KeyEvent("c"))
	poll("the current step focused", `document.activeElement.matches('.steps > .step')`)
	step("Home", chromedp.KeyEvent(kb.Home))
	poll("the cursor at 0", scrub+` === 0`)
	step("space", chromedp.KeyEvent(" "))
	poll("playback from the step c focused", scrub+` > 0`)
	b.CheckOffline()
}
