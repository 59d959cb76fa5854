package web

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserModelFaultHost submits /lab's "Model your cluster" box with
// the failing host 2 and the fault's start 60 s, as a learner does, and
// reads the run the lab opens: the address carries both, the Ejections
// chart's fault label names h2 from 60 s, and h2's success rate in the
// success-rate chart is whole up to the 60 s tick and falls after it,
// while h5 (search-cache's own failing host) stays whole.
func TestBrowserModelFaultHost(t *testing.T) {
	b := startBrowser(t, 1280, 800)
	b.Step("open the lab", chromedp.Navigate(b.URL+"/lab"))
	b.Poll("the stream", `document.getElementById('stream').dataset.conn === 'live'`)
	b.Step("open the box", chromedp.Click(chromedp.CSS("#model summary")))
	b.Step("fill the box",
		chromedp.SetValue(chromedp.CSS("#model-fault_host"), "2"),
		chromedp.SetValue(chromedp.CSS("#model-fault_start"), "60"))
	if dir := os.Getenv("OUTLIERLAB_SHOTS"); dir != "" {
		b.Eval(`(() => { document.getElementById('model').scrollIntoView(); return '' })()`)
		if png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot()); err == nil && os.WriteFile(filepath.Join(dir, "model-box-1280x800.png"), png, 0o644) == nil {
			t.Logf("screenshot: %s", filepath.Join(dir, "model-box-1280x800.png"))
		}
	}
	b.Step("run it", chromedp.Click(chromedp.CSS("#model-open")))
	b.Poll("the lab of the box's answer", `location.search.includes('fault_host=2') && location.search.includes('fault_start=60') && document.getElementById('stream').dataset.conn === 'live'`)
	b.Step("to the end", chromedp.Click(chromedp.CSS(`[data-speed="instant"]`)), chromedp.Click(chromedp.CSS("#btn-play")))
	b.Poll("the run played", `document.querySelector('[data-bind="cursor"]').value === document.querySelector('[data-bind="cursor"]').max`)
	label := b.Eval(`JSON.stringify(echarts.getInstanceByDom(document.getElementById('chart-lanes')).getOption()).match(/fault: [^"]*/)?.[0] || ''`)
	if !strings.Contains(label, "h2") || !strings.Contains(label, "from 60 s") {
		t.Errorf("the Ejections chart's fault label: %q, want h2 from 60 s", label)
	}
	series := func(host string) []float64 {
		raw := b.Eval(`JSON.stringify((echarts.getInstanceByDom(document.getElementById('chart-sr')).getOption().series.find(s => s.name === '` + host + `') || {data: []}).data.map(d => Array.isArray(d) ? d[1] : (d && typeof d === 'object' ? d.value : d)))`)
		var out []float64
		if err := json.Unmarshal([]byte(raw), &out); err != nil {
			t.Fatalf("%s's success rate: %s: %v", host, raw, err)
		}
		return out
	}
	h2, h5 := series("h2"), series("h5")
	if len(h2) < 8 || len(h5) < 8 {
		t.Fatalf("success rates: h2 %v, h5 %v", h2, h5)
	}
	// Index i is the tick at (i+1)·10 s: 5 is 60 s, 6 is 70 s.
	for i, v := range h2[:6] {
		if v != 100 {
			t.Errorf("h2 at %d s: %v%%, want 100 before its fault", (i+1)*10, v)
		}
	}
	if h2[6] > 80 {
		t.Errorf("h2 at 70 s: %v%%, want its fault's failures", h2[6])
	}
	for i, v := range h5 {
		if v != 100 {
			t.Errorf("h5 at %d s: %v%%, want 100: the fault moved to h2", (i+1)*10, v)
		}
	}
	b.CheckOffline()
}
