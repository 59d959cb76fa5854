package room

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/room/record"
)

// projectorSizes are the windows a room's projector view is shown in: a
// 1280×720 projector at 150% zoom, and the projector itself.
var projectorSizes = [][2]int{{853, 480}, {1280, 720}}

// TestBrowserRoomProjectorReadable is issue 33's projector view: a room
// on the lightning plan asks its first scene's question, three attendees
// answer; the projector, at 853×480 and 1280×720, with the question open
// and then revealed (the engine's answer marked), shows every chart it
// shows at least 180 px tall (success rate and ejections at least), the
// QR code at least 160 px, no two of the charts, the status line, the
// question panel, the scene, the join box and the QR code over each
// other nor any of them cut by the window, the join address on one line,
// nothing to scroll (browsertest.LayoutProblems too), and a status line
// that tells the room no place to answer that the projector does not
// have (waiting for the room's answers while the question is open).
// Screenshots in $TMPDIR, outlierlab-room-projector-{open,revealed}-W.png.
func TestBrowserRoomProjectorReadable(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	l := planLab(t)
	_, code, key, _ := startPlanRoom(t, l, "plan:lightning")
	st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions", `{"scene":0}`, code, key, "")
	var q record.Question
	if st != http.StatusCreated || json.Unmarshal([]byte(body), &q) != nil {
		t.Fatalf("ask: %d %s", st, body)
	}
	for name, a := range map[string]string{"ann": "yes", "bob": "no", "cat": "no"} {
		if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a="+a, `{}`, code, "", att(t, l, code, name)); st != http.StatusNoContent {
			t.Fatalf("answer %s: %d %s", a, st, body)
		}
	}
	b := browsertest.Laptops(t, l.TS.URL, 1)[0]
	for _, phase := range []string{"open", "revealed"} {
		if phase == "revealed" {
			if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, ""); st != http.StatusOK {
				t.Fatalf("reveal: %d %s", st, body)
			}
		}
		for _, size := range projectorSizes {
			name := fmt.Sprintf("%s-%d", phase, size[0])
			b.Step("open the projector "+name, chromedp.EmulateViewport(int64(size[0]), int64(size[1])), chromedp.Navigate(l.TS.URL+"/r/"+code+"/projector"))
			ready := `!!document.querySelector('.room-projector svg.qr') && !!document.querySelector('#status .state') && ` + projectorChartsDrawn
			if phase == "open" {
				// The open question holds the room before its moment.
				ready += ` && !!document.querySelector('#status .state.held') && !!document.getElementById('room-q-count')`
			} else {
				ready += ` && !!document.querySelector('#room-question .room-hist-row.right .room-hist-mark')`
			}
			b.Poll(name+": the question, the status and the charts", ready)
			viewShot(t, b, "outlierlab-room-projector-"+name+".png")
			var problems []string
			for _, check := range []string{browsertest.LayoutProblems, projectorParts,
				browsertest.OverlapProblems(".room-projector .chart-box", "#status", "#room-question", "#room-scene", ".room-projector-head", ".room-projector svg.qr")} {
				if got := b.Eval(check); got != "" {
					problems = append(problems, got)
				}
			}
			held := b.Eval(`document.querySelector('#status .state').innerText`)
			if strings.Contains(held, "Try this") || strings.Contains(held, "Workshop bar") || strings.Contains(held, "answer it") {
				problems = append(problems, fmt.Sprintf("the status line tells the room to answer where the projector shows nothing: %q", held))
			}
			if want := "waiting for the room's answers"; (phase == "open") != strings.Contains(held, want) {
				problems = append(problems, fmt.Sprintf("the held status reads %q (%q only while the question is open)", held, want))
			}
			if len(problems) > 0 {
				t.Errorf("the projector, question %s, %d×%d:\n%s", phase, size[0], size[1], strings.Join(problems, "\n"))
			}
		}
	}
	b.CheckOffline()
}

// projectorChartsDrawn holds once every chart the projector shows has
// its series and no chart is animating.
const projectorChartsDrawn = `[...document.querySelectorAll('.chart')].filter(el => el.checkVisibility()).every(el => { const c = window.echarts && echarts.getInstanceByDom(el);
	return !!c && c.getOption().series.length > 0 && c.getZr().animation.isFinished() })`

// projectorParts lists what is wrong with a room's projector view beyond
// overlaps: a chart it shows under 180 px tall (its canvas), the success
// rate's or the ejections' chart not shown, the QR code under 160 px, a
// part of it not wholly in the window or clipped by its column, the join
// address on more than one line, a page that scrolls.
const projectorParts = `(() => {
	const out = [];
	const fmt = (r) => [r.left, r.top, r.right, r.bottom].map(Math.round).join(',');
	const shown = [...document.querySelectorAll('.room-projector .chart')].filter(el => el.checkVisibility());
	for (const id of ['chart-sr', 'chart-lanes']) if (!shown.some(el => el.id === id)) out.push(id + ' is not shown');
	for (const el of shown) {
		const c = el.querySelector('canvas');
		const h = c ? c.getBoundingClientRect().height : 0;
		if (h < 180) out.push(el.id + ' is ' + Math.round(h) + ' px tall, under 180');
	}
	const qr = document.querySelector('.room-projector svg.qr').getBoundingClientRect();
	if (qr.width < 160 || qr.height < 160) out.push('the QR code is ' + Math.round(qr.width) + '×' + Math.round(qr.height) + ' px, under 160');
	const sideEl = document.querySelector('.room-projector-side');
	const side = sideEl ? sideEl.getBoundingClientRect() : {bottom: innerHeight};
	for (const sel of ['.room-projector-head', '.room-projector svg.qr', '#room-question', '#room-scene', '#status', '.room-projector .chart-box']) {
		for (const el of document.querySelectorAll(sel)) {
			if (!el.checkVisibility()) continue;
			const r = el.getBoundingClientRect();
			if (r.top < -0.5 || r.left < -0.5 || r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5) out.push(sel + ' ' + fmt(r) + ' is not wholly in the window ' + innerWidth + '×' + innerHeight);
			if (el.closest('.room-projector-side') && r.bottom > side.bottom + 0.5) out.push(sel + ' ' + fmt(r) + ' is cut by its column, which ends at ' + Math.round(side.bottom));
		}
	}
	const join = document.querySelector('.room-projector-head .join');
	// Its text's boxes, one per line and inline part: a box under the
	// first line's starts another line.
	const range = document.createRange();
	range.selectNodeContents(join);
	const rects = [...range.getClientRects()].filter(r => r.width > 0).sort((a, b) => a.top - b.top);
	const lines = rects.filter((r, i) => i === 0 || r.top >= rects[i - 1].bottom - 1).length;
	if (lines !== 1) out.push('the join address is on ' + lines + ' lines: ' + join.textContent);
	if (join.scrollWidth > join.clientWidth + 1) out.push('the join address is cut: ' + join.scrollWidth + ' > ' + join.clientWidth);
	if (document.documentElement.scrollHeight > innerHeight) out.push('the page scrolls: ' + document.documentElement.scrollHeight + ' > ' + innerHeight);
	return out.join('\n');
})()`
