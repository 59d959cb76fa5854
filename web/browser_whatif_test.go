package web

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outlierlab/engine/envoyconf"
)

// TestBrowserCompareSweep drives issue 14's pages in headless Chromium:
// in the lab, lint speaks about the default cap; "Compare with…" pins the
// defaults as A, the cap slider goes to 34 and "Compare" opens /compare,
// whose summary says B ejects h5 four times and A never, with the lanes
// interleaved (h5 A above h5 B); /sweep draws the cap's 11 values with a
// band over seeds 1–5, and a click on a point opens that run in the lab.
func TestBrowserCompareSweep(t *testing.T) {
	b := startBrowser(t, 1440, 1000)
	step, eval, poll := b.step, b.eval, b.poll
	const helpers = `
window.t_opt = id => echarts.getInstanceByDom(document.getElementById(id)).getOption();
window.t_series = (id, name) => t_opt(id).series.find(s => s.name === name);
window.t_len = (id, name) => (t_series(id, name).data || []).length;
true`
	load := func(what, path, wait string) {
		t.Helper()
		step(what, chromedp.Navigate(b.url+path), chromedp.WaitVisible(chromedp.CSS(wait)))
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](helpers)); err != nil {
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
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](helpers)); err != nil {
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
	b.checkOffline()
}

// importAdmin pastes Envoy's admin output into the lab's import: the
// config dump without a name is refused, naming name and the clusters to
// choose from; with name "search" and /clusters beside it, the lab runs
// the dump's settings on /clusters' ten hosts (the controls, the address,
// lint's cluster) and the result names the host Envoy had ejected and
// says the run starts fresh. The panel fits a phone's width and a
// laptop's; the shots go to $TMPDIR/outlierlab-import-*.png.
func importAdmin(t *testing.T, b *browser) {
	t.Helper()
	step, eval, poll := b.step, b.eval, b.poll
	read := func(file string) string {
		doc, err := os.ReadFile(filepath.Join("..", "testdata", "admin", file))
		if err != nil {
			t.Fatal(err)
		}
		return string(doc)
	}
	set := func(id, value string) {
		eval(`(() => { document.getElementById('` + id + `').value = ` + strconv.Quote(value) + `; return 'ok' })()`)
	}
	step("open /lab", chromedp.Navigate(b.url+"/lab?preset=search-cache"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	poll("lint on six hosts", `document.getElementById('lint-body').innerText.includes('On 6 hosts')`)
	set("import-doc", read("config_dump.json"))
	step("load the dump without a name", chromedp.Click(chromedp.CSS("#btn-import")))
	poll("name asked for", `document.getElementById('import-result').innerText.includes('name: the dump has 2 clusters; choose one by name (allowed "outbound|9080||reviews.default.svc.cluster.local", "search")')`)

	set("import-name", "search")
	set("import-clusters", read("clusters.json"))
	step("load the dump's search with /clusters", chromedp.Click(chromedp.CSS("#btn-import")))
	poll("the dump's settings on ten hosts in the address", `location.search.includes('hosts=10') && location.search.includes('max_ejection_percent=50') && location.search.includes('success_rate_request_volume=15')`)
	poll("the controls and lint follow", `document.getElementById('c-hosts').value === '10' && document.getElementById('c-max_ejection_percent').value === '50' &&
		document.getElementById('lint-body').innerText.includes('On 10 hosts')`)
	res := eval(`document.getElementById('import-result').innerText`)
	for _, want := range []string{"Loaded the /config_dump's cluster search: 3 settings differ", "hosts = 10", "max_ejection_percent = 50",
		`Envoy's /clusters lists 10 hosts in "search"; 1 was ejected (failed_outlier_check)`, "10.0.0.5:8080: no success rate", "starting fresh with every host in rotation", "read from the config dump's static_clusters"} {
		if !strings.Contains(res, want) {
			t.Errorf("the import's result lacks %q:\n%s", want, res)
		}
	}
	for _, size := range [][2]int64{{1280, 900}, {390, 844}} {
		w := strconv.FormatInt(size[0], 10)
		step("at "+w+" px", chromedp.EmulateViewport(size[0], size[1]), chromedp.ScrollIntoView(chromedp.CSS("#import-result")))
		// Nothing of the panel is wider than the page: a long cluster
		// name or address breaks instead.
		if got := eval(`(() => { const r = document.getElementById('lab-tools').getBoundingClientRect(); return String(document.documentElement.scrollWidth <= innerWidth && r.right <= innerWidth + 1) })()`); got != "true" {
			t.Errorf("at %s px the import panel is wider than the page", w)
		}
		png, err := chromedp.Run(b.ctx, chromedp.Screenshot(chromedp.CSS("#lab-tools section")))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		_ = os.WriteFile(filepath.Join(os.TempDir(), "outlierlab-import-"+w+".png"), png, 0o644)
	}
	step("back to the test's size", chromedp.EmulateViewport(1440, 1000))
}

// TestBrowserImportWhatif pastes the three sample clusters into the lab's
// "Paste your cluster": each loads in place (the address becomes its
// permalink, the notes show, lint redraws) and the lab's cluster YAML reads
// back to the pasted config; a bad field is named on the page; Envoy's
// admin output loads too (importAdmin). Then /whatif replays the sample
// Envoy log: its ejection of 10.0.0.5, the unparsed lines with their
// numbers, and the lab's charts.
func TestBrowserImportWhatif(t *testing.T) {
	b := startBrowser(t, 1440, 1000)
	step, eval, poll := b.step, b.eval, b.poll
	step("open /lab", chromedp.Navigate(b.url+"/lab?preset=search-cache"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	poll("lint's findings", `document.getElementById('lint-body').innerText.includes('On 6 hosts')`)

	paste := func(doc string) {
		t.Helper()
		eval(`(() => { document.getElementById('import-doc').value = ` + strconv.Quote(doc) + `; return 'ok' })()`)
		step("load", chromedp.Click(chromedp.CSS("#btn-import")))
	}
	paste("name: a\noutlier_detection:\n  max_ejection_percent: 101\n")
	poll("the bad field named", `document.getElementById('import-result').innerText.includes('max_ejection_percent: 101 is out of range (allowed 0–100)')`)

	for _, tc := range []struct{ file, link, note string }{
		{"envoy-defaults.yaml", "?preset=search-cache", ""},
		{"aggressive-cluster.yaml", "consecutive_5xx=3", "circuit_breakers.thresholds[0]: not read"},
		{"destination-rule.yaml", "enforcing_success_rate=0", "minHealthPercent"},
	} {
		doc, err := os.ReadFile(filepath.Join("..", "testdata", "import", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		want, err := envoyconf.ParseCluster(doc)
		if err != nil {
			t.Fatal(err)
		}
		paste(string(doc))
		poll(tc.file+" loaded", `document.getElementById('import-result').innerText.includes('Loaded') && location.search.includes(`+strconv.Quote(tc.link)+`)`)
		if got := eval(`document.getElementById('import-result').innerText`); !strings.Contains(got, tc.note) {
			t.Errorf("%s: notes lack %q:\n%s", tc.file, tc.note, got)
		}
		link := eval(`location.pathname + location.search`)
		// The stream redraws the YAML panel after the address changes, so on
		// a loaded machine the previous cluster's YAML may still be there:
		// read until it reads back to this one, or time out.
		var yaml string
		var back envoyconf.Cluster
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			yaml = eval(`document.getElementById('yaml-text').innerText`)
			back, err = envoyconf.ParseCluster([]byte(yaml))
			if (err == nil && back.Outlier == want.Outlier && back.PanicThreshold == want.PanicThreshold && back.MaxRetries == want.MaxRetries) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || back.Outlier != want.Outlier || back.PanicThreshold != want.PanicThreshold || back.MaxRetries != want.MaxRetries {
			t.Errorf("%s (%s): the lab's YAML does not read back to the pasted config:\n%s\n%+v\nwant %+v (%v)", tc.file, link, yaml, back, want, err)
		}
	}

	// "Sweep a setting" sweeps from the settings shown: the last import's.
	step("sweep from here", chromedp.Click(chromedp.CSS("#link-sweep")), chromedp.WaitVisible(chromedp.CSS("#sweep-failure canvas")))
	if got := eval(`document.querySelector('.sweep').innerText`); !strings.Contains(got, "Every run also sets:") || !strings.Contains(got, "enforcing_success_rate = 0%") {
		t.Errorf("the sweep from the lab lacks the lab's settings:\n%s", head(got, 600))
	}

	importAdmin(t, b)

	step("open /whatif", chromedp.Navigate(b.url+"/whatif"), chromedp.WaitVisible(chromedp.CSS("#whatif-log")))
	logFile, _ := filepath.Abs(filepath.Join("..", "testdata", "whatif", "envoy.log"))
	cfg, err := os.ReadFile(filepath.Join("..", "testdata", "whatif", "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	step("choose the log", chromedp.SetUploadFiles(chromedp.CSS("#whatif-log"), []string{logFile}))
	eval(`(() => { document.getElementById('whatif-config').value = ` + strconv.Quote(string(cfg)) + `; return 'ok' })()`)
	step("replay", chromedp.Click(chromedp.CSS("#whatif-run")), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	events := eval(`document.getElementById('whatif-events').innerText`)
	for _, want := range []string{"02:00:20.902\t20.9\teject\t10.0.0.5:8080\tconsecutive_5xx", "02:01:00.000\t60\tuneject\t10.0.0.5:8080"} {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %q:\n%s", want, events)
		}
	}
	if got := eval(`document.getElementById('whatif-unparsed').innerText`); !strings.Contains(got, "line 35:") || !strings.Contains(got, "line 66:") {
		t.Errorf("unparsed lines:\n%s", got)
	}
	if got := eval(`String(echarts.getInstanceByDom(document.getElementById('chart-lanes')).getOption().series.find(s => s.name === 'ejected').data.length)`); got != "3" {
		t.Errorf("ejected cells in the replay's lanes = %s, want 3 (after the sweeps at 30, 40 and 50 s: ejected at 20.9 s, back at the sweep at 60 s)", got)
	}
	b.checkOffline()
}
