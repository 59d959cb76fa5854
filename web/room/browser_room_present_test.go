package room

import (
	"fmt"
	"outlierlab/web/internal/browsertest"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserRoomPresentOpensAtTop: the instructor page of a room on the
// lightning plan, whose first scene is on a lesson with a prediction,
// opens at its top at 1280×720 and 853×480, with the scene's Previous,
// Next and "Ask the room" wholly in the first screen, once its stream's
// first redraw came (the prediction's box scrolled itself into view on
// it, past the room's controls: issue 33; a plan's room no longer holds
// for the prediction, record.State.Snapshot). A learner who steps into the pause on the lesson's
// own page still has the prediction scrolled into view.
func TestBrowserRoomPresentOpensAtTop(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	l := planLab(t)
	_, code, key, _ := startPlanRoom(t, l, "plan:lightning")
	b := browsertest.Laptops(t, l.TS.URL, 1)[0]
	const controls = `['btn-scene-prev', 'btn-scene-next', 'btn-scene-ask'].map(id => { const el = document.getElementById(id), r = el && el.getBoundingClientRect();
		return !el ? id + ' missing' : r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth ? '' : id + ' at ' + [r.left, r.top, r.right, r.bottom].map(Math.round).join(','); }).filter(Boolean).join('; ')`
	for _, size := range [][2]int{{1280, 720}, {853, 480}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		b.Step("open the instructor page at "+name, chromedp.EmulateViewport(int64(size[0]), int64(size[1])), chromedp.Navigate(l.TS.URL+"/r/"+code+"/present?key="+key))
		b.Poll(name+": the first redraw and the charts", `document.readyState === 'complete' && document.getElementById('stream').dataset.conn === 'live' &&
			!!document.querySelector('#status .state') && [...document.querySelectorAll('.chart')].every(el => { const c = window.echarts && echarts.getInstanceByDom(el); return !!c && c.getOption().series.length > 0 })`)
		viewShot(t, b, "outlierlab-room-present-top-"+name+".png")
		if got := b.Eval(`String(window.scrollY)`); got != "0" {
			t.Errorf("%s: the instructor page opens scrolled to %s px", name, got)
		}
		if got := b.Eval(controls); got != "" {
			t.Errorf("%s: the scene's controls are not in the first screen: %s", name, got)
		}
	}

	b.Step("a lesson page at 853×480", chromedp.Navigate(l.TS.URL+"/lessons/cap"))
	b.Poll("the lesson's charts", `!!document.querySelector('#chart-lanes canvas') && !!document.getElementById('predict')`)
	if got := b.Eval(`String(window.scrollY)`); got != "0" {
		t.Errorf("the lesson page opens scrolled to %s px", got)
	}
	for i := range 3 {
		b.Step(fmt.Sprintf("step %d", i+1), chromedp.Click(chromedp.CSS("#btn-step")))
		b.Poll(fmt.Sprintf("the step to %d0 s", i+1), fmt.Sprintf(`document.getElementById('scrub').value === '%d'`, i+1))
	}
	b.Poll("the pause, the prediction scrolled into view", `!!document.querySelector('#status .state.held') &&
		(() => { const r = document.getElementById('predict').getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight - 40; })()`)
	b.CheckOffline()
}
