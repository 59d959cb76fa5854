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

// TestBrowserImportWhatif pastes the three sample clusters into the lab's
// "Paste your cluster": each loads in place (the address becomes its
// permalink, the notes show, lint redraws) and the lab's cluster YAML reads
// back to the pasted config; a bad field is named on the page. Then /whatif
// replays the sample Envoy log: its ejection of 10.0.0.5, the unparsed
// lines with their numbers, and the lab's charts.
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
		t.Errorf("the sweep from the lab lacks the lab's settings:\n%s", head(got, 600))
	}

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
