package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
)

// TestBrowserMesh: the lab with 20 client proxies (issue 39), at a
// laptop's 1280×800 and a phone's 390×844. With one client the mesh's two
// charts are not on screen (chart.Only); the permalink with clients=20
// shows them, drawn: the heatmap a lane per host, the volume chart a line
// per host and the dashed success_rate_request_volume; once the run has
// played the heatmap holds h5's lane out for all 20 clients under failure
// percentage at a per-client volume. Moving Client proxies back to 1 hides
// them again without a reload (their data-show). On the projector view
// they take two cells of the six and every chart stays whole. Screenshots of the two
// charts go to $OUTLIERLAB_SHOTS (default: $TMPDIR/outlierlab-mesh), to
// be looked at.
func TestBrowserMesh(t *testing.T) {
	const link = "/lab?preset=search-cache&clients=20&rps=1000&max_ejection_percent=34&enforcing_failure_percentage=100&failure_percentage_threshold=20&failure_percentage_request_volume=50"
	keep := os.Getenv("OUTLIERLAB_SHOTS")
	if keep == "" {
		keep = filepath.Join(os.TempDir(), "outlierlab-mesh")
	}
	_ = os.MkdirAll(keep, 0o755)
	t.Logf("screenshots: %s", keep)
	// shown: the box takes room on the page (neither display: none nor
	// inside a hidden parent).
	shown := func(id string) string {
		return `(() => { const f = document.getElementById('fig-` + id + `'); return !!f && f.getClientRects().length > 0 && getComputedStyle(f).display !== 'none' })()`
	}
	opt := func(id string) string {
		return `echarts.getInstanceByDom(document.getElementById('` + id + `')).getOption()`
	}
	for _, size := range [][2]int{{1280, 800}, {390, 844}} {
		t.Run(fmt.Sprint(size[0]), func(t *testing.T) {
			b := startBrowser(t, size[0], size[1])
			step, eval, poll := b.Step, b.Eval, b.Poll
			shot := func(id, name string) {
				t.Helper()
				// A chart out of view waits to draw (js/chart.js): bring
				// it into view and let it draw a few frames first.
				step("scroll to "+id, chromedp.ScrollIntoView(chromedp.CSS("#"+id)))
				poll(id+" drawing", `!echarts.getInstanceByDom(document.getElementById('`+id+`')).getZr().animation._paused`)
				eval(`window.t_frames = 0; (function f() { window.t_frames++; if (window.t_frames < 5) requestAnimationFrame(f); })(); 'ok'`)
				poll("a few frames drawn", `window.t_frames >= 5`)
				png, err := chromedp.Run(b.Ctx, chromedp.Screenshot(chromedp.CSS(`#fig-`+id)))
				if err != nil {
					t.Fatalf("screenshot of %s: %v", id, err)
				}
				p := filepath.Join(keep, fmt.Sprintf("%s-%d.png", name, size[0]))
				if err := os.WriteFile(p, png, 0o644); err != nil {
					t.Errorf("keeping the screenshot: %v", err)
				}
			}

			// One client: the page as before, the mesh's boxes out of it.
			step("open the one-client lab", chromedp.Navigate(b.URL+"/lab?preset=search-cache"), chromedp.WaitVisible(chromedp.CSS("#chart-sr canvas")))
			for _, id := range []string{"chart-mesh", "chart-volume"} {
				if got := eval(shown(id) + ` + ''`); got != "false" {
					t.Errorf("one client: %s is on screen", id)
				}
			}

			step("open the mesh permalink", chromedp.Navigate(b.URL+link), chromedp.WaitVisible(chromedp.CSS("#chart-mesh canvas")))
			if got := eval(`document.querySelector('[name="clients"]').value`); got != "20" {
				t.Fatalf("the Client proxies control reads %q, want 20", got)
			}
			for _, id := range []string{"chart-mesh", "chart-volume"} {
				poll(id+" on screen and given its option", shown(id)+` && !!document.getElementById('`+id+`').option`)
				if w := eval(`Math.round(document.getElementById('` + id + `').getBoundingClientRect().width) + ''`); w == "0" {
					t.Errorf("%s is on screen with no width", id)
				}
			}
			// search-cache has six hosts: six lanes, six lines and the
			// threshold's.
			if got := eval(opt("chart-mesh") + `.yAxis[0].data.length + ''`); got != "6" {
				t.Errorf("the heatmap has %s lanes, want 6", got)
			}
			const vol = `echarts.getInstanceByDom(document.getElementById('chart-volume')).getOption().series`
			if got := eval(vol + `.filter(s => /^h\d+$/.test(s.name)).length + '/' + ` + vol + `.filter(s => s.name === 'success_rate_request_volume').length`); got != "6/1" {
				t.Errorf("the volume chart's host and threshold series: %s, want 6/1", got)
			}

			step("speed instant", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
			step("play", chromedp.Click(chromedp.CSS("#btn-play")))
			poll("the run to end", `document.getElementById('scrub').value === document.getElementById('scrub').max && document.getElementById('scrub').max !== '0'`)
			cells := `(` + opt("chart-mesh") + `.series[0].data || [])`
			poll("h5 ejected by 20 of 20 in the heatmap", cells+`.some(c => c.value[1] === 5 && c.value[2] === 20)`)
			if got := eval(cells + `.find(c => c.value[2] === 20).name`); !strings.HasPrefix(got, "h5 ejected by 20 of 20 clients after") {
				t.Errorf("the cell's tooltip: %q", got)
			}
			if got := eval(opt("chart-mesh") + `.visualMap[0].pieces.at(-1).lte + ''`); got != "20" {
				t.Errorf("the heatmap's scale ends at %s, want 20 clients", got)
			}
			if got := eval(`document.getElementById('chart-mesh').getAttribute('aria-label')`); !strings.Contains(got, "of 20 clients") {
				t.Errorf("the heatmap's accessible name: %q", got)
			}
			if got := eval(vol + `.filter(s => s.name === 'success_rate_request_volume').map(s => s.data.at(-1)).join()`); got != "100" {
				t.Errorf("the volume chart's threshold line: %q, want 100", got)
			}
			// Before the fault (to 30 s) one client sends each host about
			// 1000 ÷ 20 ÷ 6 × 10 ≈ 83 requests an interval.
			if got := eval(vol + `.find(s => s.name === 'h0').data.slice(0, 3).every(v => v > 60 && v < 100) + ''`); got != "true" {
				t.Errorf("h0's counts from one of 20 clients before the fault are not ~83: %s", eval(`JSON.stringify(`+vol+`.find(s => s.name === 'h0').data.slice(0, 3))`))
			}
			shot("chart-mesh", "heatmap")
			shot("chart-volume", "volume")

			// Back to one client: the boxes go with the slider.
			eval(`(() => { const el = document.getElementById('c-clients');
				el.value = '1'; el.dispatchEvent(new Event('input', {bubbles: true})); return 'ok' })()`)
			for _, id := range []string{"chart-mesh", "chart-volume"} {
				poll(id+" off screen at one client", `!`+shown(id))
			}
			b.CheckOffline()
		})
	}
	// The projector view (1280×720, lesson.css): with a mesh the two
	// charts take the traffic share's and the counters' cells, and every
	// chart shown is wholly on screen, on the lab and in the mesh lesson.
	t.Run("projector", func(t *testing.T) {
		b := startBrowser(t, 1280, 720)
		for _, path := range []string{"/lab?view=projector&preset=search-cache&clients=20&t=100", "/lessons/mesh?view=projector"} {
			browsertest.OpenPage(b, 1280, 720, path)
			b.Poll("the projector's fonts", `(`+chartFonts+`)(18) === ''`)
			if got := b.Eval(`['chart-mesh', 'chart-volume', 'chart-share', 'chart-counters'].map(id => ` + shown("' + id + '") + `).join()`); got != "true,true,false,false" {
				t.Errorf("%s: mesh, volume, share, counters on screen: %s", path, got)
			}
			if got := b.Eval(chartsInView); got != "" {
				t.Errorf("%s: charts not wholly on screen: %s", path, got)
			}
		}
	})
}
