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
	"outlierlab/web/internal/webtest"
)

// importAdmin pastes Envoy's admin output into the lab's import: the
// config dump without a name is refused, naming name and the clusters to
// choose from; with name "search" and /clusters beside it, the lab runs
// the dump's settings on /clusters' ten hosts (the controls, the address,
// lint's cluster) and the result names the host Envoy had ejected and
// says the run starts fresh. The panel fits a phone's width and a
// laptop's; the shots go to $TMPDIR/outlierlab-import-*.png.
func importAdmin(t *testing.T, b *browser) {
	t.Helper()
	step, eval, poll := b.Step, b.Eval, b.Poll
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
	step("open /lab", chromedp.Navigate(b.URL+"/lab?preset=search-cache"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
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
		// name or address breaks instead (once the page is laid out at
		// the new size: polled, not read once).
		b.Poll("at "+w+" px, nothing of the import panel wider than the page",
			`(() => { const r = document.getElementById('lab-tools').getBoundingClientRect(); return document.documentElement.scrollWidth <= innerWidth && r.right <= innerWidth + 1 })()`)
		png, err := chromedp.Run(b.Ctx, chromedp.Screenshot(chromedp.CSS("#lab-tools section")))
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
	step, eval, poll := b.Step, b.Eval, b.Poll
	step("open /lab", chromedp.Navigate(b.URL+"/lab?preset=search-cache"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
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
		t.Errorf("the sweep from the lab lacks the lab's settings:\n%s", webtest.Head(got, 600))
	}

	importAdmin(t, b)

	step("open /whatif", chromedp.Navigate(b.URL+"/whatif"), chromedp.WaitVisible(chromedp.CSS("#whatif-log")))
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
	b.CheckOffline()
}
