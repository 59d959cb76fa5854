package room

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/roombus"
)

// TestBrowserRoomQuestion: in headless Chromium with two browser
// contexts, the instructor asks "Is h5 ejected at 60 s?" on search-cache;
// the attendee's page shows the question and the attendee answers yes;
// the instructor's page counts one answer and Reveal shows, on the
// attendee's page, the histogram with the engine's answer (no: the 10%
// cap refuses the ejection) marked, and the attendee's own answer.
func TestBrowserRoomQuestion(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	laptops := browsertest.Laptops(t, l.TS.URL, 2)
	teacher, pupil := laptops[0], laptops[1]

	browsertest.StartWorkshop(teacher, pupil)
	// t_spot: a log line the spotlight marks (js/spot.js names the lines
	// it marks in a stylesheet of its own, with --spot: 1).
	pupil.Eval(`window.t_spot = (li) => !!li && getComputedStyle(li).getPropertyValue('--spot').trim() === '1', 'ok'`)

	teacher.Step("open the question form", chromedp.Click(chromedp.CSS(".room-q-open summary")))
	teacher.Step("ask", chromedp.Click(chromedp.CSS("#btn-ask")))
	pupil.Poll("the question on the attendee's page", `(document.querySelector('#room-question .room-q-text') || {}).textContent === 'Question: Is h5 ejected at 60 s?'`)
	pupil.Step("answer yes", chromedp.Click(chromedp.CSS(`#room-question .room-q-choice`)))
	pupil.Poll("the attendee's own answer", `/Your answer: yes/.test(document.getElementById('room-question').textContent)`)
	teacher.Poll("one answer counted", `(document.getElementById('room-q-count') || {}).textContent === '1'`)
	if s := teacher.Eval(`document.getElementById('room-question').textContent`); containsAny(s, "engine", "room-hist") {
		t.Errorf("the instructor's page shows the split before the reveal: %q", s)
	}
	teacher.Step("reveal", chromedp.Click(chromedp.CSS("#btn-reveal")))
	pupil.Poll("the histogram with the engine's answer marked", `(() => {
		const right = document.querySelector('#room-question .room-hist-row.right');
		return !!right && right.querySelector('.room-hist-label').textContent === 'no' && /the engine's answer/.test(right.textContent) &&
			document.querySelector('#room-question .room-q-answer').textContent === 'no' && /You said yes/.test(document.getElementById('room-question').textContent);
	})()`)
	browsertest.Shot(t, pupil, "outlierlab-room-reveal.png")

	// Spotlight: the instructor shades 40–60 s; the attendee's charts
	// carry the shaded range (a markArea on a series of its own).
	teacher.Step("open the spotlight", chromedp.Click(chromedp.CSS(".room-spot summary")))
	teacher.Step("spotlight 40–60 s", chromedp.Click(chromedp.CSS("#btn-spot-range")))
	pupil.Poll("the range on the attendee's success-rate chart", `document.body.dataset.spot === '|40 s|60 s' &&
		echarts.getInstanceByDom(document.getElementById('chart-sr')).getOption().series.some(s => s.id === 'room-spot' && s.markArea.data.length === 1)`)
	teacher.Step("spotlight h5", chromedp.Click(chromedp.CSS("#btn-spot-host")))
	pupil.Poll("the host on the attendee's page", `document.body.dataset.spot === 'h5||'`)

	// Spotlight by clicking, on a phone: the attendee's page keeps its
	// place while the log scrolls its own box to the line.
	teacher.Poll("the run played past 60 s", `!!document.getElementById('lg-5-0')`)
	pupil.Step("a phone", chromedp.EmulateViewport(390, 844))
	pupil.Poll("the attendee's log holds h5's overflow at 40 s", `(() => { const li = document.getElementById('lg-3-0');
		return !!li && li.dataset.tMs === '40000' && li.dataset.host === 'h5'; })()`)
	pupil.Step("the attendee at the top of the page", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0); document.querySelector('.log').scrollTop = 0; undefined`))
	// The line is clicked where it is now: the log grows at the top while
	// the run plays, and a pointer click aimed a moment before can land on
	// the line that took its place (a flake in CI under load).
	teacher.Step("click a log line", chromedp.Evaluate[chromedp.Void](`document.getElementById('lg-3-0').click(); undefined`))
	teacher.Poll("the instructor sees what the room is shown", `document.getElementById('room-spot-now').textContent === 'Spotlight: h5, 30–40 s'`)
	pupil.Poll("the log line marked and in its box's view, the page where it was", `(() => {
		const li = document.getElementById('lg-3-0'), box = li.closest('.log');
		const r = li.getBoundingClientRect(), b = box.getBoundingClientRect();
		return document.body.dataset.spot === 'h5|30 s|40 s' && t_spot(li) &&
			box.scrollTop > 0 && r.top >= b.top && r.bottom <= b.bottom && window.scrollY === 0 &&
			[...document.querySelectorAll('.log-list > li')].filter(t_spot).length === 1;
	})()`)
	pupil.Poll("the interval shaded on the attendee's chart", `echarts.getInstanceByDom(document.getElementById('chart-sr')).getOption().series.some(s => s.id === 'room-spot' &&
		s.markArea.data.length === 1 && s.markArea.data[0][0].xAxis === '30 s' && s.markArea.data[0][1].xAxis === '40 s')`)
	pupil.Step("scroll the attendee's page to the log", chromedp.Evaluate[chromedp.Void](`document.querySelector('.log-panel').scrollIntoView()`))
	viewShot(t, pupil, "outlierlab-room-spot-log-phone.png")

	// A host's lane on the swimlanes chart: a click on h2's lane at 50 s.
	x, y := chartPoint(t, teacher, "chart-lanes", `[4, c.getOption().yAxis[0].data.findIndex(l => l.split(' ')[0] === 'h2')]`)
	teacher.Step("click h2's lane", chromedp.MouseClickXY(x, y))
	pupil.Poll("h2 spotlighted, its lane banded on the attendee's swimlanes", `document.body.dataset.spot === 'h2||' && !t_spot(document.getElementById('lg-3-0')) &&
		echarts.getInstanceByDom(document.getElementById('chart-lanes')).getOption().series.some(s => s.id === 'room-spot' && s.markLine.data.length === 1 && s.markLine.data[0].yAxis === 2)`)
	pupil.Step("the attendee's swimlanes", chromedp.Evaluate[chromedp.Void](`document.getElementById('chart-lanes').scrollIntoView({block: 'center'})`))
	viewShot(t, pupil, "outlierlab-room-spot-lane-phone.png")

	// A drag across the success-rate chart's time axis, 30 s to 60 s.
	x0, y0 := chartPoint(t, teacher, "chart-sr", `[2, 80]`)
	x1, _ := chartPoint(t, teacher, "chart-sr", `[5, 80]`)
	teacher.Step("drag 30–60 s", chromedp.MouseEvent(chromedp.MousePressed, x0, y0, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(chromedp.MouseMoved, (x0+x1)/2, y0, chromedp.ButtonLeft), chromedp.MouseEvent(chromedp.MouseMoved, x1, y0, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseReleased, x1, y0, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	pupil.Poll("the range on the attendee's page, its log lines marked", `document.body.dataset.spot === '|30 s|60 s' &&
		['lg-3-0', 'lg-4-0', 'lg-5-0'].every(id => t_spot(document.getElementById(id))) &&
		[...document.querySelectorAll('.log-list > li')].filter(t_spot).length === 3`)
	viewShot(t, teacher, "outlierlab-room-spot-present.png")
	teacher.Step("the instructor's strip", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	teacher.Poll("the hint and what the room is shown", `/Click a host, drag across a time range or click a log line/.test(document.querySelector('.room-spot-hint').textContent) &&
		document.getElementById('room-spot-now').textContent === 'Spotlight: 30–60 s'`)
	viewShot(t, teacher, "outlierlab-room-spot-strip.png")
	pupil.Step("the attendee on a desktop", chromedp.EmulateViewport(1440, 1000))
	pupil.Step("the attendee's charts", chromedp.Evaluate[chromedp.Void](`document.getElementById('chart-sr').scrollIntoView()`))
	viewShot(t, pupil, "outlierlab-room-spot-desktop.png")
	pupil.Step("the attendee's log", chromedp.Evaluate[chromedp.Void](`document.querySelector('.log-panel').scrollIntoView()`))
	viewShot(t, pupil, "outlierlab-room-spot-desktop-log.png")

	// A host's row in Envoy's hosts table; a host's legend entry, which
	// on the instructor's page picks the host instead of hiding its line.
	teacher.Step("click h4's row", chromedp.Click(chromedp.CSS(`#envoy-hosts tbody tr:nth-child(5) th`)))
	pupil.Poll("h4 spotlighted", `document.body.dataset.spot === 'h4||'`)
	teacher.Step("h3's legend entry", chromedp.Evaluate[chromedp.Void](`echarts.getInstanceByDom(document.getElementById('chart-sr')).dispatchAction({type: 'legendToggleSelect', name: 'h3'})`))
	pupil.Poll("h3 spotlighted", `document.body.dataset.spot === 'h3||'`)
	if s := teacher.Eval(`String(echarts.getInstanceByDom(document.getElementById('chart-sr')).getOption().legend[0].selected.h3)`); s == "false" {
		t.Errorf("the legend click hid h3 on the instructor's chart")
	}
	teacher.Step("the range again", chromedp.Click(chromedp.CSS("#btn-spot-range")))
	pupil.Poll("the range again", `document.body.dataset.spot === '|40 s|60 s'`)

	// By keyboard: the log is one tab stop (its box; the lines are
	// focusable by script only); ↓ and ↑ move along its lines and Enter
	// spotlights the focused one.
	if n := teacher.Eval(`String(document.querySelectorAll('.log[tabindex="0"], .log [tabindex="0"], .log-list > li.entry:not([tabindex="-1"])').length)`); n != "1" {
		t.Errorf("the instructor's log has %s tab stops, want 1", n)
	}
	teacher.Eval(`document.getElementById('lg-3-0').focus(), 'ok'`)
	teacher.Step("↓ in the log", chromedp.KeyEvent(kb.ArrowDown))
	if id := teacher.Eval(`document.activeElement.id`); id == "lg-3-0" || !strings.HasPrefix(id, "lg-") {
		t.Errorf("↓ from lg-3-0 focused %q, want the next line", id)
	}
	teacher.Step("↑ back", chromedp.KeyEvent(kb.ArrowUp))
	if id := teacher.Eval(`document.activeElement.id`); id != "lg-3-0" {
		t.Errorf("↑ focused %q, want lg-3-0", id)
	}
	teacher.Step("Enter", chromedp.KeyEvent(kb.Enter))
	pupil.Poll("the line picked by keyboard", `document.body.dataset.spot === 'h5|30 s|40 s' && t_spot(document.getElementById('lg-3-0'))`)
	teacher.Step("the range again", chromedp.Click(chromedp.CSS("#btn-spot-range")))
	pupil.Poll("the range again", `document.body.dataset.spot === '|40 s|60 s'`)

	// An attendee's click picks nothing.
	pupil.Step("an attendee clicks a log line", chromedp.Click(chromedp.CSS("#lg-5-0")))
	x, y = chartPoint(t, pupil, "chart-lanes", `[4, c.getOption().yAxis[0].data.findIndex(l => l.split(' ')[0] === 'h2')]`)
	pupil.Step("and h2's lane", chromedp.MouseClickXY(x, y))
	teacher.Step("a moment for a post to land", chromedp.Sleep(500*time.Millisecond))
	if s := teacher.Eval(`document.body.dataset.spot`); s != "|40 s|60 s" {
		t.Errorf("an attendee's click changed the spotlight: %q", s)
	}
	teacher.CheckOffline()
	pupil.CheckOffline()
}

// chartPoint is where, in the viewport, a chart of b's page draws value
// (a JS expression of c, the chart's ECharts instance), after scrolling
// the chart into the middle of the window.
func chartPoint(t *testing.T, b *browser, id, value string) (float64, float64) {
	t.Helper()
	s := b.Eval(`(() => { const el = document.getElementById('` + id + `'); el.scrollIntoView({block: 'center'});
		const c = echarts.getInstanceByDom(el), p = c.convertToPixel({gridIndex: 0}, ` + value + `), r = el.getBoundingClientRect();
		return JSON.stringify([r.left + p[0], r.top + p[1]]); })()`)
	var xy [2]float64
	if err := json.Unmarshal([]byte(s), &xy); err != nil {
		t.Fatalf("point of %s: %q: %v", id, s, err)
	}
	return xy[0], xy[1]
}

func containsAny(s string, parts ...string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// viewShot saves what b's window shows (the window, not the whole page).
func viewShot(t *testing.T, b *browser, name string) {
	t.Helper()
	png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	p := filepath.Join(os.TempDir(), name)
	if err := os.WriteFile(p, png, 0o644); err == nil {
		t.Logf("screenshot: %s", p)
	}
}
