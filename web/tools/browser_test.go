package tools_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"outlierlab/web"
	"outlierlab/web/internal/browsertest"
)

// startBrowser is Chromium on the whole lab (the tools' pages are reached
// from the lab's), or a skipped test.
func startBrowser(t *testing.T, width, height int) *browsertest.Browser {
	t.Helper()
	browsertest.SkipWithoutChromium(t)
	s, err := web.New(web.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return browsertest.Start(t, s.Handler(), s.Shutdown, width, height)
}

// compareFile is a file of the generated day the what-if tests compare.
func compareFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "whatif", "compare", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// TestBrowserCompareSweep drives issue 14's pages in headless Chromium:
// in the lab, lint speaks about the default cap; "Compare with…" pins the
// defaults as A, the cap slider goes to 34 and "Compare" opens /compare,
// whose summary says B ejects h5 four times and A never, with the lanes
// interleaved (h5 A above h5 B); /sweep draws the cap's 11 values with a
// band over seeds 1–5, and a click on a point opens that run in the lab.
func TestBrowserCompareSweep(t *testing.T) {
	b := startBrowser(t, 1440, 1000)
	step, eval, poll := b.Step, b.Eval, b.Poll
	const helpers = `
window.t_opt = id => echarts.getInstanceByDom(document.getElementById(id)).getOption();
window.t_series = (id, name) => t_opt(id).series.find(s => s.name === name);
window.t_len = (id, name) => (t_series(id, name).data || []).length;
true`
	load := func(what, path, wait string) {
		t.Helper()
		step(what, chromedp.Navigate(b.URL+path), chromedp.WaitVisible(chromedp.CSS(wait)))
		if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](helpers)); err != nil {
			t.Fatalf("helpers: %v", err)
		}
	}

	// The lab: lint reads the defaults on search-cache's six hosts.
	load("open /lab", "/lab?preset=search-cache", "#chart-lanes canvas")
	poll("lint's findings", `document.getElementById('lint-body').innerText.includes('On 6 hosts, 600 requests/s')`)
	if got := eval(`document.getElementById('lint-body').innerText`); !strings.Contains(got, "max_ejection_percent") {
		t.Errorf("lint says nothing of the cap at 10%% on 6 hosts:\n%s", head(got, 800))
	}
	lintDefaults := eval(`document.getElementById('lint-body').innerText`)

	// Pin A, move the cap, compare.
	step("pin A", chromedp.Click(chromedp.CSS("#btn-compare-pin")))
	poll("the compare button", `getComputedStyle(document.getElementById('btn-compare-go')).display !== 'none'`)
	eval(`(() => { const el = document.getElementById('c-max_ejection_percent');
		el.value = '34'; el.dispatchEvent(new Event('input', {bubbles: true})); return 'ok' })()`)
	poll("the cap in the address", `location.search.includes('max_ejection_percent=34')`)
	poll("lint to follow the cap", `document.getElementById('lint-body').innerText !== `+strconv.Quote(lintDefaults))
	step("compare", chromedp.Click(chromedp.CSS("#btn-compare-go")), chromedp.WaitVisible(chromedp.CSS("#cmp-lanes canvas")))
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](helpers)); err != nil {
		t.Fatalf("helpers: %v", err)
	}
	summary := eval(`document.getElementById('compare-summary').innerText`)
	for _, want := range []string{"B sets max_ejection_percent to 34 (A: 10).", "B ejects h5 4 times, A never.", "Clients: 5.00% → 0.74% failures."} {
		if !strings.Contains(summary, want) {
			t.Errorf("compare summary lacks %q:\n%s", want, summary)
		}
	}
	if got := eval(`t_opt('cmp-lanes').yAxis[0].data.slice(10, 12).join(',')`); got != "h5 A,h5 B" {
		t.Errorf("lanes 10–11 = %q, want h5 A,h5 B (interleaved)", got)
	}
	poll("B's ejections on h5's B lane only", `t_len('cmp-lanes', 'A ejected') === 0 && t_len('cmp-lanes', 'B ejected') > 0 &&
		t_series('cmp-lanes', 'B ejected').data.every(d => d.value[1] === 11)`)
	if got := eval(`String(t_len('cmp-lanes', 'A overflow') > 0 && t_opt('cmp-clients').xAxis[0].data.length === t_opt('cmp-lanes').xAxis[0].data.length)`); got != "true" {
		t.Errorf("A's overflows or the shared axis missing")
	}
	if got := eval(`document.getElementById('compare-b').value`); got != "preset=search-cache&max_ejection_percent=34" {
		t.Errorf("B's query = %q", got)
	}

	// The sweep: 11 values, a band, a click opens the lab.
	load("open /sweep", "/sweep?preset=search-cache&param=max_ejection_percent&from=0&to=100&step=10", "#sweep-failure canvas")
	if got := eval(`String(t_len('sweep-failure', 'median'))`); got != "11" {
		t.Errorf("median points = %s, want 11", got)
	}
	poll("a band over the seeds", `t_series('sweep-failure', 'seeds 1-5').data.some(w => w > 0)`)
	if got := eval(`String(document.querySelectorAll('#sweep-table tbody tr').length)`); got != "11" {
		t.Errorf("table rows = %s, want 11", got)
	}
	// The sweep ran for this page: its progress came first and is hidden
	// now that the result follows it.
	if got := eval(`(() => { const w = document.querySelector('.work'); return w ? String(w.checkVisibility()) : 'no progress' })()`); got != "false" {
		t.Errorf("the sweep's progress bar: visible %s, want false (hidden under the result)", got)
	}
	xy := eval(`(() => { const el = document.getElementById('sweep-failure');
		const c = echarts.getInstanceByDom(el), d = t_series('sweep-failure', 'median').data[4];
		el.scrollIntoView(); const p = c.convertToPixel({seriesName: 'median'}, [4, d.value]), r = el.getBoundingClientRect();
		return (r.left + p[0]) + ',' + (r.top + p[1]) })()`)
	x, y, _ := strings.Cut(xy, ",")
	fx, _ := strconv.ParseFloat(x, 64)
	fy, _ := strconv.ParseFloat(y, 64)
	step("click the point at 40%", chromedp.MouseClickXY(fx, fy), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	if got := eval(`location.pathname + location.search`); got != "/lab?preset=search-cache&max_ejection_percent=40" {
		t.Errorf("the click opened %s, want the lab at 40%%", got)
	}
	b.CheckOffline()
}

// TestBrowserWhatifEvents uploads the override day's access log and
// Envoy's event log on /whatif in headless Chromium: the matched table
// says 5 agree, 1 disagree, 4 only Envoy; Envoy's first ejection is a row
// of its own, marked with the field, whose reason gives the count the log
// shows; the finding names consecutive_5xx; the lab's charts draw.
func TestBrowserWhatifEvents(t *testing.T) {
	b := startBrowser(t, 1280, 900)
	step, eval, poll := b.Step, b.Eval, b.Poll
	dir, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "whatif", "compare"))
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
