package web

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserProgressImport: the home page's progress box (progress.js)
// shows once its module runs, under the page's CSP; a progress file from
// another browser merges into this one's (a step done in either is done,
// an answer this browser has stands), and a file that is not progress is
// refused, naming what is wrong, with nothing stored.
func TestBrowserProgressImport(t *testing.T) {
	b := startBrowser(t, 1280, 800)
	step, eval, poll := b.Step, b.Eval, b.Poll
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(`{"cap":{"steps":{"cap-34":true},"quiz":{"0":2},"right":{"0":false}},"consecutive":{"steps":{"dead-host":true},"quiz":{},"right":{},"predict":1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"cap":3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	step("open /", chromedp.Navigate(b.URL+"/"))
	poll("the progress box, shown by its module", `!document.getElementById('progress-io').hidden`)
	eval(`(() => { localStorage.setItem('outlierlab.progress', JSON.stringify({cap: {steps: {overflow: true}, quiz: {"0": 1}, right: {"0": true}}})); return 'ok' })()`)

	step("import a file that is not progress", chromedp.SetUploadFiles(chromedp.CSS("[data-progress-import]"), []string{bad}))
	poll("the refusal", `document.querySelector('[data-progress-status]').textContent === 'Not imported: lesson cap is not a record.'`)
	if got := eval(`localStorage.getItem('outlierlab.progress')`); got != `{"cap":{"steps":{"overflow":true},"quiz":{"0":1},"right":{"0":true}}}` {
		t.Errorf("a refused file changed the progress: %s", got)
	}

	step("import another browser's progress", chromedp.SetUploadFiles(chromedp.CSS("[data-progress-import]"), []string{good}))
	poll("imported", `document.querySelector('[data-progress-status]').textContent.startsWith('Imported 2 lessons')`)
	got := eval(`(() => { const p = JSON.parse(localStorage.getItem('outlierlab.progress'));
		return [Object.keys(p.cap.steps).sort().join(','), p.cap.quiz[0], p.cap.right[0], p.consecutive.steps['dead-host'], p.consecutive.predict].join('|') })()`)
	if got != "cap-34,overflow|1|true|true|1" {
		t.Errorf("merged progress %q, want both cap steps, this browser's quiz answer kept, consecutive taken", got)
	}
	b.CheckOffline()
}
