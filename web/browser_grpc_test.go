package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/webtest"
)

// TestBrowserGRPC drives the gRPC dialect in headless Chromium (issue 13):
// in the free lab, search-cache at the default 10% cap, the compare strip
// shows Envoy refusing h5 and gRPC ejecting it; the "Whose detector"
// select reruns the run under gRFC A50, so the ejection lanes fill, the log
// says what gRPC ignores, the address carries dialect=grpc and the strip
// stays the same (it always draws both); the permalink opens on gRPC; and
// the gRPC lesson loads, its prediction answered, and its grpc-ejects step
// ticks once the select is on grpc and the run has been played.
func TestBrowserGRPC(t *testing.T) {
	b := startBrowser(t, 1440, 1100)
	step, eval, poll := b.Step, b.Eval, b.Poll
	const helpers = `
window.t_opt = id => echarts.getInstanceByDom(document.getElementById(id)).getOption();
window.t_count = (id, i) => (t_opt(id).series[i].data || []).length;
window.t_lanes = name => (t_opt('chart-lanes').series.find(s => s.name === name).data || []).length;
window.t_strip = () => JSON.stringify(t_opt('chart-compare').series.map(s => s.data || []));
window.t_log = () => document.getElementById('log-list').innerText;
window.t_texts = id => echarts.getInstanceByDom(document.getElementById(id)).getZr().storage.getDisplayList().map(e => (e.style && e.style.text) || '').join('|');
window.t_choose = v => { const el = document.getElementById('c-dialect'); el.value = v;
	el.dispatchEvent(new Event('change', {bubbles: true})); return 'ok'; };
true`
	load := func(what, path string) {
		t.Helper()
		step(what, chromedp.Navigate(b.URL+path), chromedp.WaitVisible(chromedp.CSS("#chart-compare canvas")))
		if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](helpers)); err != nil {
			t.Fatalf("helpers: %v", err)
		}
	}

	// Envoy, to the end: overflows, no ejection, in the lanes and in the
	// strip's upper half; the lower half (gRPC) ejects h5.
	load("open /lab", "/lab?preset=search-cache")
	if got := eval(`document.getElementById('c-dialect').value`); got != "envoy" {
		t.Fatalf("the dialect select starts at %q, want envoy", got)
	}
	step("speed instant", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
	step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	poll("the run to end", `document.getElementById('scrub').value === document.getElementById('scrub').max && document.getElementById('scrub').max !== '0'`)
	poll("the overflow marks", `t_lanes('overflow') > 0`)
	if n := eval(`String(t_lanes('ejected'))`); n != "0" {
		t.Errorf("Envoy at the default cap: %s ejected cells, want none", n)
	}
	// The strip's series: Envoy ejected, gRPC ejected, Envoy overflow,
	// gRPC overflow (web/chart/compare_charts.go).
	poll("both dialects in the strip", `t_count('chart-compare', 0) === 0 && t_count('chart-compare', 1) > 0 && t_count('chart-compare', 2) > 0 && t_count('chart-compare', 3) === 0`)
	if got := eval(`t_opt('chart-compare').title.map(x => x.text).join(' | ')`); got != "Envoy (outlier_detection_impl.cc) | gRPC (gRFC A50, grpc-go)" {
		t.Errorf("strip titles: %q", got)
	}
	strip := eval(`t_strip()`)

	// The select: gRPC's run, same traffic.
	eval(`t_choose('grpc')`)
	poll("gRPC's ejections in the lanes", `t_lanes('ejected') > 0 && t_lanes('overflow') === 0`)
	poll("the dialect in the address", `location.search.includes('dialect=grpc')`)
	poll("the gRPC note in the log", `t_log().includes('gRPC dialect')`)
	log := eval(`t_log()`)
	if !containsEjectionAt(log, "40 s") || !strings.Contains(log, "gRPC counts only the hosts already ejected") {
		t.Errorf("the log under gRPC has no ejection at 40 s with gRPC's cap:\n%s", webtest.Head(log, 1500))
	}
	if got := eval(`t_strip()`); got != strip {
		t.Errorf("the strip changed with the dialect:\n envoy run: %s\n grpc run:  %s", webtest.Head(strip, 300), webtest.Head(got, 300))
	}
	// The lanes and the strip, for people to look at after the run.
	png, err := chromedp.Run(b.Ctx, chromedp.Screenshot(chromedp.CSS(`figure:has(#chart-compare)`)))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(os.TempDir(), "outlierlab-grpc-strip.png")
	_ = os.WriteFile(shot, png, 0o644)
	t.Logf("screenshot of the strip: %s", shot)

	// The fault's label is the fault as it is now: another kind of
	// failure, and the shading drawn on the chart says so (issue 38: it
	// kept the preset's "cache lost").
	if got := eval(`t_texts('chart-sr')`); !strings.Contains(got, "fault: h5: 503, 1 in 3 from 30 s") {
		t.Errorf("the fault's label before the change: %s", webtest.Head(got, 300))
	}
	eval(`(() => { const el = document.getElementById('c-fault_kind'); el.value = 'connect_failure';
		el.dispatchEvent(new Event('change', {bubbles: true})); return 'ok' })()`)
	poll("the fault's label after the change", `t_texts('chart-sr').includes('fault: h5: connect_failure, 1 in 3 from 30 s') && !t_texts('chart-sr').includes('fault: h5: 503')`)

	// The permalink: a fresh page under gRPC, paused at 50 s.
	load("open the gRPC permalink", "/lab?preset=search-cache&dialect=grpc&t=50")
	if got := eval(`document.getElementById('c-dialect').value`); got != "grpc" {
		t.Errorf("the permalink's dialect select reads %q, want grpc", got)
	}
	poll("h5 ejected at the link's cursor", `document.getElementById('scrub').value === '5' && t_lanes('ejected') > 0`)

	// The lesson: its controls, the prediction, then the step.
	load("open /lessons/grpc", "/lessons/grpc")
	if got := eval(`document.getElementById('scenario-name').textContent`); got != "search-cache" {
		t.Fatalf("scenario = %q, want search-cache", got)
	}
	if got := eval(`[...document.querySelectorAll('#controls [name]')].map(e => e.name).join(',')`); !strings.HasPrefix(got, "dialect,max_ejection_percent") {
		t.Errorf("lesson controls = %s", got)
	}
	// A step says to watch the counters' active gauge: its legend entry
	// is drawn, on a legend never paged (it was on the second page).
	poll("the counters' legend whole, active in it", `t_opt('chart-counters').legend[0].type === 'plain' && t_texts('chart-counters').split('|').includes('active')`)
	step("answer the prediction", chromedp.Click(chromedp.CSS(`#predict .choice[data-file="1"]`)))
	poll("the reveal", `!document.querySelector('#predict .reveal').hidden && document.querySelector('#predict .verdict').textContent === 'Right.'`)
	if got := eval(`document.querySelector('#st-grpc-ejects').dataset.done`); got != "false" {
		t.Errorf("grpc-ejects is %q before the learner switches", got)
	}
	eval(`t_choose('grpc')`)
	poll("the lesson's run under gRPC", `document.getElementById('c-dialect').value === 'grpc'`)
	step("speed instant", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
	step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	poll("grpc-ejects done", `document.querySelector('#st-grpc-ejects').dataset.done === 'true'`)
	if got := eval(`document.querySelector('#st-cap-one').dataset.done`); got != "false" {
		t.Errorf("cap-one is %q with the cap at 10", got)
	}
	b.CheckOffline()
}
