package web

import (
	"fmt"
	"os"
	"outlierlab/web/internal/browsertest"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// tallLines makes ECharts measure a line of text as a font with CJK
// glyphs does: ECharts takes a line's height to be the width of "国",
// which is the type's size where such a font is installed (Debian's
// chromium with fonts-noto-cjk, say) and a third of it where none is (a
// fallback glyph). A machine without one drew the handout's legend in
// one column beside the plot; one with it wrapped the column into a
// second one, over the plot (issue 33).
const tallLines = `(() => { const measure = CanvasRenderingContext2D.prototype.measureText;
	CanvasRenderingContext2D.prototype.measureText = function (s) {
		if (s !== '国') return measure.call(this, s);
		const px = /(\d+(?:\.\d+)?)px/.exec(this.font);
		return { width: px ? +px[1] : 16 };
	}; })()`

// TestBrowserHandoutLegendTallType: the plan's handout, on a machine
// whose type ECharts measures with tall lines (tallLines), at a phone's
// and a projector's width: no chart's legend is over its plot or cut by
// its box (the look test's chartParts), and each legend is in the band
// above the plot, so every success-rate plot keeps its height. The
// look test covers the handout with this machine's own metrics.
func TestBrowserHandoutLegendTallType(t *testing.T) {
	_, ts := startTestServer(t)
	bctx := browsertest.StartChromium(t, 1280, 720)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b := browsertest.Tab(t, bctx, ts.URL, 2*time.Minute)
	if _, err := chromedp.Call(b.Ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: tallLines}); err != nil {
		t.Fatalf("tall lines: %v", err)
	}
	keep := filepath.Join(os.TempDir(), "outlierlab-look", "handout-tall")
	_ = os.MkdirAll(keep, 0o755)
	for _, size := range [][2]int{{390, 844}, {1280, 720}} {
		name := fmt.Sprintf("handout-tall-%dx%d", size[0], size[1])
		b.Step("open "+name, chromedp.EmulateViewport(int64(size[0]), int64(size[1])), chromedp.Navigate(ts.URL+"/plans/lightning/handout"))
		b.Poll(name+" drawn", `document.readyState === 'complete' && !!document.getElementById('handout') && `+chartsDrawn)
		b.Poll(name+" settled", chartsSettled)
		if got := b.Eval(`(() => { const c = document.createElement('canvas').getContext('2d'); c.font = '13px sans-serif'; return String(c.measureText('国').width) })()`); got != "13" {
			t.Fatalf("the tall lines are not in effect: 国 is %s px wide at 13 px", got)
		}
		if got := b.Eval(chartParts); got != "" {
			t.Errorf("%s:\n%s", name, got)
		}
		// Every legend above its plot, and the plot as tall as the box
		// the server gave it less its margins (the box grew by the band).
		if got := b.Eval(`[...document.querySelectorAll('.handout .chart')].map(el => { const c = echarts.getInstanceByDom(el);
			const l = c.getViewOfComponentModel(c.getModel().getComponent('legend')).group.getBoundingRect();
			const g = c.getModel().getComponent('grid').coordinateSystem.getRect();
			return l.y + l.height > g.y ? el.id + ': legend ends at ' + Math.round(l.y + l.height) + ', under the plot\'s top ' + Math.round(g.y)
				: el.id.endsWith('-chart-sr') && g.height < 140 ? el.id + ': plot ' + Math.round(g.height) + ' px tall' : ''; }).filter(Boolean).join('\n')`); got != "" {
			t.Errorf("%s:\n%s", name, got)
		}
		for _, id := range []string{"fig-s1-chart-sr", "fig-s5-chart-sr"} {
			if png, err := chromedp.Run(b.Ctx, chromedp.Screenshot(chromedp.CSS("#"+id))); err == nil {
				_ = os.WriteFile(filepath.Join(keep, name+"-"+id+".png"), png, 0o644)
			}
		}
	}
	t.Logf("screenshots: %s", keep)
	b.CheckOffline()
}
