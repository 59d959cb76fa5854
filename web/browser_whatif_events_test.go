package web

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserWhatifEvents uploads the override day's access log and
// Envoy's event log on /whatif in headless Chromium: the matched table
// says 5 agree, 1 disagree, 4 only Envoy; Envoy's first ejection is a row
// of its own, marked with the field, whose reason gives the count the log
// shows; the finding names consecutive_5xx; the lab's charts draw.
func TestBrowserWhatifEvents(t *testing.T) {
	b := startBrowser(t, 1280, 900)
	step, eval, poll := b.Step, b.Eval, b.Poll
	dir, _ := filepath.Abs(filepath.Join("..", "testdata", "whatif", "compare"))
	cfg := string(compareFile(t, "cluster.yaml"))

	step("open /whatif", chromedp.Navigate(b.URL+"/whatif"), chromedp.WaitVisible(chromedp.CSS("#whatif-eventlog")))
	step("choose the access log", chromedp.SetUploadFiles(chromedp.CSS("#whatif-log"), []string{filepath.Join(dir, "override.log")}))
	step("choose Envoy's event log", chromedp.SetUploadFiles(chromedp.CSS("#whatif-eventlog"), []string{filepath.Join(dir, "override-events.jsonl")}))
	eval(`(() => { document.getElementById('whatif-config').value = ` + strconv.Quote(cfg) + `; return 'ok' })()`)
	step("replay and compare", chromedp.Click(chromedp.CSS("#whatif-run")), chromedp.WaitVisible(chromedp.CSS("#whatif-matches")))
	poll("the lanes", `!!document.querySelector('#chart-lanes canvas')`)

	if got := eval(`document.getElementById('whatif-compare-counts').innerText`); got != "Envoy 10 events, the lab 6: agree 5, disagree 1, only Envoy 4, only the lab 0." {
		t.Errorf("counts %q", got)
	}
	rows := eval(`JSON.stringify([...document.querySelectorAll('#whatif-matches tbody tr')].map(r => r.className + '|' + r.dataset.field))`)
	want := `["match-only_envoy|consecutive_5xx","match-only_envoy|consecutive_5xx","match-only_envoy|","match-agree|","match-only_envoy|","match-agree|","match-agree|","match-disagree|consecutive_5xx","match-agree|","match-agree|"]`
	if rows != want {
		t.Errorf("rows %s\nwant %s", rows, want)
	}
	first := eval(`document.querySelector('#whatif-matches tbody tr').innerText`)
	for _, w := range []string{"02:00:20.963", "only Envoy", "10.0.0.5:8080", "eject consecutive_5xx (line 1)", "The log shows 3 5xx responses in a row on 10.0.0.5:8080 up to 02:00:20.963; consecutive_5xx is 5 here."} {
		if !strings.Contains(first, w) {
			t.Errorf("the first row lacks %q:\n%s", w, first)
		}
	}
	// An only-Envoy row is told apart by more than its colour: its words.
	if bg := eval(`getComputedStyle(document.querySelector('#whatif-matches tr.match-only_envoy td')).backgroundColor`); bg != "rgb(255, 246, 224)" {
		t.Errorf("only-Envoy row background %s", bg)
	}
	if got := eval(`document.getElementById('whatif-findings').innerText`); !strings.Contains(got, "Envoy ran with consecutive_5xx = 3") {
		t.Errorf("findings:\n%s", got)
	}
	b.CheckOffline()
}
