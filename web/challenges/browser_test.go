package challenges_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"outlierlab/web"
	"outlierlab/web/internal/browsertest"
)

// startBrowser is the whole lab (web.Server) in headless Chromium, its
// hidden seeds from a fixed secret, submissions a millisecond apart (the
// limit is TestOneSubmissionPerFewSeconds's).
func startBrowser(t *testing.T) *browsertest.Browser {
	t.Helper()
	browsertest.SkipWithoutChromium(t)
	s, err := web.New(web.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ChallengeSecret: []byte("browser test"), ChallengeEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return browsertest.Start(t, s.Handler(), s.Shutdown, 1280, 900)
}

const (
	verdict  = `(document.querySelector('#grade-result h2') || {}).textContent || ''`
	resultOf = `document.getElementById('grade-result').dataset.pass`
)

// TestBrowserChallenge: a learner opens a challenge and submits the
// defaults: it fails, naming the goal, and its link opens the failing
// moment with the decision log; two settings changed, it passes; the
// course page shows the result this browser keeps.
func TestBrowserChallenge(t *testing.T) {
	b := startBrowser(t)
	b.Step("open search-cap", chromedp.Navigate(b.URL+"/challenges/search-cap"), chromedp.WaitVisible(chromedp.CSS("#grade-form")))
	if got := b.Eval(`[...document.querySelectorAll('#grade-form [name]')].map(e => e.name).join(',')`); got != "max_ejection_percent,success_rate_stdev_factor,base_ejection_time,consecutive_5xx" {
		t.Errorf("the form's settings: %s; want the challenge's four unlocked", got)
	}
	b.Step("grade the defaults", chromedp.Click(chromedp.CSS("#grade-button")))
	b.Poll("the verdict", resultOf+` === 'false'`)
	if got := b.Eval(`document.getElementById('grade-result').textContent`); !strings.Contains(got, "h5 ejected within 20 s of 30 s") || !strings.Contains(got, "passed in 0 of 5 runs") {
		t.Errorf("the result does not name the failed goal: %s", got)
	}
	b.Step("open the failing run", chromedp.Click(chromedp.CSS("#grade-result .fail-link")))
	b.Poll("the failing moment", `(document.getElementById('failure-at') || {}).textContent === '50 s'`)
	if got := b.Eval(`document.querySelectorAll('.log-list .entry.overflow').length > 0 && document.getElementById('failure-detail').textContent`); !strings.Contains(got, "h5 never ejected") {
		t.Errorf("the failing moment: %q; want h5 never ejected, with the cap's refusals in the log", got)
	}
	b.Step("back", chromedp.NavigateBack(), chromedp.WaitVisible(chromedp.CSS("#grade-form")))
	b.Step("two settings", chromedp.SetValue(chromedp.CSS("#set-max_ejection_percent"), "17"), chromedp.SetValue(chromedp.CSS("#set-consecutive_5xx"), "7"))
	b.Step("grade again", chromedp.Click(chromedp.CSS("#grade-button")))
	b.Poll("a pass", resultOf+` === 'true'`)
	if got := b.Eval(verdict); got != "Passed: every goal on every run" {
		t.Errorf("verdict %q", got)
	}
	b.Step("the course page", chromedp.Navigate(b.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#challenge-progress")))
	b.Poll("the course page's progress", `document.getElementById('challenge-progress').textContent.includes('The six-host search cluster and its cap (passed)')`)
	b.CheckOffline()
}

// TestBrowserChallengeKeyboard: the same by keyboard alone: Tab to the
// first setting, submit with Enter (the defaults fail, the verdict takes
// the focus), Tab to the failing run's link and follow it with Enter;
// back, type a new value into two settings and submit with Enter: a pass.
func TestBrowserChallengeKeyboard(t *testing.T) {
	b := startBrowser(t)
	b.Step("open search-cap", chromedp.Navigate(b.URL+"/challenges/search-cap"), chromedp.WaitVisible(chromedp.CSS("#grade-form")))
	tabTo := func(js string) {
		t.Helper()
		for range 60 {
			if b.Eval(js) == "true" {
				return
			}
			b.Step("tab", chromedp.KeyEvent(kb.Tab))
		}
		t.Fatalf("60 tabs never reached %s", js)
	}
	tabTo(`String(document.activeElement.name === 'max_ejection_percent')`)
	b.Step("submit the defaults with Enter", chromedp.KeyEvent(kb.Enter))
	b.Poll("the verdict, focused", resultOf+` === 'false' && document.activeElement.id === 'grade-verdict'`)
	tabTo(`String(document.activeElement.classList.contains('fail-link'))`)
	b.Step("follow the link with Enter", chromedp.KeyEvent(kb.Enter))
	b.Poll("the failing moment", `(document.getElementById('failure-at') || {}).textContent === '50 s'`)
	b.Step("back", chromedp.NavigateBack(), chromedp.WaitVisible(chromedp.CSS("#grade-form")))
	typeInto := func(name, value string) {
		t.Helper()
		tabTo(`String(document.activeElement.name === '` + name + `')`)
		b.Step("clear "+name, chromedp.KeyEvent(kb.End), chromedp.KeyEvent(strings.Repeat(kb.Backspace, 12)))
		b.Step("type "+value, chromedp.KeyEvent(value))
	}
	b.Eval(`(document.activeElement.blur(), "")`) // Tab from the top again
	typeInto("max_ejection_percent", "17")
	typeInto("consecutive_5xx", "7")
	b.Step("submit with Enter", chromedp.KeyEvent(kb.Enter))
	b.Poll("a pass", resultOf+` === 'true'`)
	if got := b.Eval(`document.getElementById('set-max_ejection_percent').value + ' ' + document.getElementById('set-consecutive_5xx').value`); got != "17 7" {
		t.Errorf("the values typed: %q", got)
	}
	b.CheckOffline()
}
