package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserMesh: the lab with 20 client proxies (issue 39), at 1280
// and 390 px: the permalink sets the Client proxies control, and once the
// run has played the "ejected by k of N clients" heatmap holds h5's lane,
// out for all 20 clients under failure percentage at a per-client volume.
// Screenshots of the chart go to the temp directory for people to look at.
func TestBrowserMesh(t *testing.T) {
	const link = "/lab?preset=search-cache&clients=20&rps=1000&max_ejection_percent=34&enforcing_failure_percentage=100&failure_percentage_threshold=20&failure_percentage_request_volume=50"
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			b := startBrowser(t, width, 1000)
			step, eval, poll := b.Step, b.Eval, b.Poll
			step("open the mesh permalink", chromedp.Navigate(b.URL+link), chromedp.WaitVisible(chromedp.CSS("#chart-mesh canvas")))
			if got := eval(`document.querySelector('[name="clients"]').value`); got != "20" {
				t.Fatalf("the Client proxies control reads %q, want 20", got)
			}
			step("speed instant", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
			step("play", chromedp.Click(chromedp.CSS("#btn-play")))
			poll("the run to end", `document.getElementById('scrub').value === document.getElementById('scrub').max && document.getElementById('scrub').max !== '0'`)
			const cells = `(echarts.getInstanceByDom(document.getElementById('chart-mesh')).getOption().series[0].data || [])`
			poll("h5 ejected by 20 of 20 in the heatmap", cells+`.some(c => c.value[1] === 5 && c.value[2] === 20)`)
			if got := eval(cells + `.find(c => c.value[2] === 20).name`); !strings.HasPrefix(got, "h5 ejected by 20 of 20 clients after") {
				t.Errorf("the cell's tooltip: %q", got)
			}
			if got := eval(`echarts.getInstanceByDom(document.getElementById('chart-mesh')).getOption().visualMap[0].pieces.at(-1).lte + ''`); got != "20" {
				t.Errorf("the heatmap's scale ends at %s, want 20 clients", got)
			}
			if got := eval(`document.getElementById('chart-mesh').closest('figure').getAttribute('aria-label') || document.getElementById('chart-mesh').getAttribute('aria-label') || ''`); got != "" && !strings.Contains(got, "of 20 clients") {
				t.Errorf("the chart's accessible name: %q", got)
			}
			// The volume chart: each host's count from the first client,
			// under the dashed success_rate_request_volume.
			const vol = `echarts.getInstanceByDom(document.getElementById('chart-volume')).getOption().series`
			if got := eval(vol + `.filter(s => s.name === 'success_rate_request_volume').map(s => s.data.at(-1)).join()`); got != "100" {
				t.Errorf("the volume chart's threshold line: %q, want 100", got)
			}
			// Before the fault (to 30 s) one client sends each host about
			// 1000 ÷ 20 ÷ 6 × 10 ≈ 83 requests an interval.
			if got := eval(vol + `.find(s => s.name === 'h0').data.slice(0, 3).every(v => v > 60 && v < 100) + ''`); got != "true" {
				t.Errorf("h0's counts from one of 20 clients before the fault are not ~83: %s", eval(`JSON.stringify(`+vol+`.find(s => s.name === 'h0').data.slice(0, 3))`))
			}
			// A chart out of view waits to draw (app.js drawnInView): bring
			// it into view and let it draw a few frames before the shot.
			step("scroll to the heatmap", chromedp.ScrollIntoView(chromedp.CSS("#chart-mesh")))
			poll("the heatmap drawing again", `!echarts.getInstanceByDom(document.getElementById('chart-mesh')).getZr().animation._paused`)
			eval(`window.t_frames = 0; (function f() { window.t_frames++; if (window.t_frames < 5) requestAnimationFrame(f); })(); 'ok'`)
			poll("a few frames drawn", `window.t_frames >= 5`)
			png, err := chromedp.Run(b.Ctx, chromedp.Screenshot(chromedp.CSS(`figure:has(#chart-mesh)`)))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			shot := filepath.Join(os.TempDir(), fmt.Sprintf("outlierlab-mesh-%d.png", width))
			_ = os.WriteFile(shot, png, 0o644)
			t.Logf("screenshot of the heatmap: %s", shot)
			step("scroll to the volume chart", chromedp.ScrollIntoView(chromedp.CSS("#chart-volume")))
			eval(`window.t_frames = 0; (function f() { window.t_frames++; if (window.t_frames < 5) requestAnimationFrame(f); })(); 'ok'`)
			poll("a few frames drawn", `window.t_frames >= 5`)
			if png, err := chromedp.Run(b.Ctx, chromedp.Screenshot(chromedp.CSS(`figure:has(#chart-volume)`))); err == nil {
				shot := filepath.Join(os.TempDir(), fmt.Sprintf("outlierlab-volume-%d.png", width))
				_ = os.WriteFile(shot, png, 0o644)
				t.Logf("screenshot of the volume chart: %s", shot)
			}
		})
	}
}
