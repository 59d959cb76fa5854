package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/room"
	"outlierlab/web/roombus"
)

// lookSizes are issue 25's four windows: a phone, a 1280×720 projector at
// 150% zoom, the projector itself, and a full-HD screen.
var lookSizes = [][2]int{{390, 844}, {853, 480}, {1280, 720}, {1920, 1080}}

// lookPage is one page of the look pass: its address, a name for its
// screenshots, what shows it is drawn, whether it is a projector view
// (one screen) or has a projector's first screen (the recording's player
// and charts, its entries under them), and the fault's start its charts
// show (search-cache's 30 s, on the pages whose cursor is past it),
// which must be a labelled tick.
type lookPage struct {
	name, path, ready      string
	projector, firstScreen bool
	fault                  string
	// onFirstScreen is an element that must be wholly in the window
	// before any scroll, at every size (CSS).
	onFirstScreen string
}

// chartsDrawn holds once every chart of the page has its series (the
// stream's first redraw on a lab, the page itself on a static chart).
const chartsDrawn = `[...document.querySelectorAll('.chart')].every(el => { const c = window.echarts && echarts.getInstanceByDom(el);
	return !!c && c.getOption().series.length > 0 })`

// TestBrowserLookPages checks issue 25's acceptance in one Chromium on one
// server with rooms: every page (the course, the lab, a lesson, compare,
// sweep with and without a setting, what-if, a plan's handout, a room's attendee,
// instructor, projector and recording pages, and the projector views) at
// the four sizes: no sideways scroll, no text out of its box, no text
// under 12 px, no chart part outside its chart or a legend over a plot,
// the room's code box over neither the status line, a legend nor a
// chart; the time labels on round times from 0 s and on the fault's
// start; in a projector view at every size every chart wholly on screen,
// nothing to scroll and no legend paged; and axe-core finds nothing (at
// 390×844 and 1280×720). Screenshots go to $TMPDIR/outlierlab-look/pages,
// named by page and size.
func TestBrowserLookPages(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	axe := browsertest.AxeSource(t)
	l := startRoomLab(t, roombus.BusOptions{}, room.Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	bctx := browsertest.StartChromium(t, 1280, 720)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b := browsertest.Tab(t, bctx, l.TS.URL, 10*time.Minute)
	keep := filepath.Join(os.TempDir(), "outlierlab-look", "pages")
	_ = os.MkdirAll(keep, 0o755)
	t.Logf("screenshots: %s", keep)

	// The instructor plays the run to its end (its key as the handover
	// link gives it), so the room's pages and its recording have a story.
	b.Step("the instructor page", chromedp.EmulateViewport(1280, 720), chromedp.Navigate(l.TS.URL+"/r/"+code+"/present?key="+url.QueryEscape(key)))
	b.Poll("the instructor's charts", `!!document.querySelector('#room-bar.present') && `+chartsDrawn)
	b.Step("instant speed", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
	b.Step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	b.Poll("the run's end", `document.getElementById('scrub').value === '30'`)

	runs := "a=" + url.QueryEscape("preset=search-cache") + "&b=" + url.QueryEscape("preset=search-cache&max_ejection_percent=34")
	lab := `!!document.querySelector('#lab') && ` + chartsDrawn
	pages := []lookPage{
		{name: "home", path: "/", ready: `!!document.getElementById('room-start-from')`, onFirstScreen: ".room-start"},
		{name: "lab", path: "/lab?t=100", ready: lab, fault: "30 s"},
		{name: "lesson", path: "/lessons/cap", ready: lab},
		{name: "compare", path: "/compare?" + runs, ready: `!!document.getElementById('compare-metrics') && ` + chartsDrawn},
		{name: "sweep-form", path: "/sweep", ready: `!!document.querySelector('form[action="/sweep"]')`},
		{name: "sweep", path: "/sweep?preset=search-cache&param=max_ejection_percent&from=0&to=100&step=10&seeds=1", ready: `!!document.querySelector('#sweep-failure canvas') && ` + chartsDrawn},
		{name: "whatif", path: "/whatif", ready: `!!document.querySelector('form[action="/whatif"]')`},
		{name: "handout", path: "/plans/lightning/handout", ready: `!!document.getElementById('handout') && ` + chartsDrawn, fault: "30 s"},
		{name: "attendee", path: "/r/" + code, ready: lab + ` && document.getElementById('scrub').value === '30'`, fault: "30 s"},
		{name: "instructor", path: "/r/" + code + "/present", ready: `!!document.querySelector('#room-bar.present') && ` + lab, fault: "30 s"},
		{name: "recording", path: "/r/" + code + "/recording", ready: `!!document.getElementById('rec-play') && ` + lab, firstScreen: true},
		{name: "lab-projector", path: "/lab?view=projector&t=100", ready: lab, projector: true, fault: "30 s"},
		{name: "lesson-projector", path: "/lessons/cap?view=projector", ready: lab, projector: true},
		{name: "compare-projector", path: "/compare?view=projector&" + runs, ready: `!!document.getElementById('compare-metrics') && ` + chartsDrawn, projector: true},
		{name: "room-projector", path: "/r/" + code + "/projector", ready: `!!document.querySelector('.room-projector svg.qr') && ` + lab, projector: true, fault: "30 s"},
	}
	start, axeTime := time.Now(), time.Duration(0)
	defer func() {
		t.Logf("%d pages in %s, of which axe-core %s", len(lookSizes)*len(pages), time.Since(start).Round(time.Second), axeTime.Round(time.Second))
	}()
	for _, size := range lookSizes {
		for _, p := range pages {
			name := fmt.Sprintf("%s-%dx%d", p.name, size[0], size[1])
			b.Step("open "+name, chromedp.EmulateViewport(int64(size[0]), int64(size[1])), chromedp.Navigate(l.TS.URL+p.path))
			b.Poll(name+" drawn", `document.readyState === 'complete' && `+p.ready)
			b.Poll(name+" settled", chartsSettled)
			if png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot()); err == nil {
				_ = os.WriteFile(filepath.Join(keep, name+".png"), png, 0o644)
			}
			var problems []string
			for _, check := range []string{browsertest.LayoutProblems, browsertest.SmallText, chartParts} {
				for _, line := range strings.Split(b.Eval(check), "\n") {
					if line == "" {
						continue
					}
					problems = append(problems, line)
				}
			}
			problems = append(problems, timeTickProblems(b.Eval(timeLabels), p.fault)...)
			if p.onFirstScreen != "" {
				q, _ := json.Marshal(p.onFirstScreen)
				if got := b.Eval(`(() => { const r = document.querySelector(` + string(q) + `).getBoundingClientRect();
					return r.top >= 0 && r.bottom <= innerHeight ? '' : 'top ' + Math.round(r.top) + ', bottom ' + Math.round(r.bottom) + ' of ' + innerHeight })()`); got != "" {
					problems = append(problems, p.onFirstScreen+" is not on the first screen: "+got)
				}
			}
			// A projector view fits every window it may be shown in: every
			// chart whole, nothing to scroll, no legend paged.
			if p.projector || p.firstScreen {
				check := chartsInView
				if p.firstScreen {
					check = chartsOutside + `.join(' ')`
				}
				if got := b.Eval(check); got != "" {
					problems = append(problems, "charts not wholly on screen: "+got+"; below the window: "+b.Eval(belowWindow))
				}
				if got := b.Eval(pagedLegends); got != "" {
					problems = append(problems, "paged legends: "+got)
				}
			}
			// axe-core at a phone's and a projector's size (a third of the
			// test's time at all four; the other two lay out the same DOM).
			if size == [2]int{390, 844} || size == [2]int{1280, 720} {
				axeStart := time.Now()
				problems = append(problems, browsertest.AxeViolations(b, axe)...)
				axeTime += time.Since(axeStart)
			}
			if len(problems) > 0 {
				t.Errorf("%s (%s):\n%s", name, p.path, strings.Join(problems, "\n"))
			}
		}
	}
	b.CheckOffline()
}

// chartsSettled holds once no chart is animating (ECharts draws its
// series in over about a second; its parts are measured at rest) and a
// projector's legends, and a handout's (in a band above the plot), are
// measured (js/chart.js fitLegend), and the time labels were chosen for the
// plot's width as drawn (js/chart.js fitTicks). A chart its view hides (a
// room's projector's others) has nothing drawn to measure.
const chartsSettled = `[...document.querySelectorAll('.chart')].every(el => { const c = echarts.getInstanceByDom(el);
	return !c || !el.checkVisibility() || (c.getZr().animation.isFinished() && ((el.dataset.mode !== 'projector' && el.dataset.legend !== 'band') || !(c.getOption().legend || []).length || +el.dataset.legendH > 0)
		&& (!el.dataset.ticksW || Math.abs(el.dataset.ticksW - el.dataset.plotW) <= 2)) })`

// chartParts lists what is out of place in the charts and around them: an
// axis or a legend outside its chart's box (clipped), a legend over a
// plot, and the room's code box over the status line, a legend or a
// chart's box (its title included).
const chartParts = `(() => {
	const out = [];
	const boxes = [];
	const cut = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
	const inside = (a, b) => a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
	const fmt = (r) => [r.left, r.top, r.right, r.bottom].map(Math.round).join(',');
	for (const el of document.querySelectorAll('.chart')) {
		const c = echarts.getInstanceByDom(el);
		if (!c || !el.checkVisibility()) continue;
		const box = el.getBoundingClientRect();
		const rectOf = (m) => { const v = c.getViewOfComponentModel(m); if (!v || !v.group) return null;
			const g = v.group; g.updateTransform(); const r = g.getBoundingRect().clone(); if (g.transform) r.applyTransform(g.transform);
			return r.width > 0 ? {left: box.left + r.x, top: box.top + r.y, right: box.left + r.x + r.width, bottom: box.top + r.y + r.height} : null; };
		const model = c.getModel();
		const grids = model.findComponents({mainType: 'grid'}).map(g => { const r = g.coordinateSystem.getRect();
			return {left: box.left + r.x, top: box.top + r.y, right: box.left + r.x + r.width, bottom: box.top + r.y + r.height}; });
		for (const type of ['legend', 'xAxis', 'yAxis', 'title']) {
			model.findComponents({mainType: type}).forEach((m, i) => {
				const r = rectOf(m);
				if (!r) return;
				// A paged legend (not a projector's) clips its items along
				// its line on purpose; across it its text must be whole.
				const paged = type === 'legend' && m.get('type') === 'scroll' && m.get('orient');
				const across = paged === 'vertical' ? r.left < box.left - 1 || r.right > box.right + 1 : r.top < box.top - 1 || r.bottom > box.bottom + 1;
				if (paged ? across : !inside(r, box)) out.push(el.id + ' ' + type + '[' + i + '] is cut by its chart: ' + fmt(r) + ' outside ' + fmt(box));
				if (type === 'legend') { boxes.push({name: el.id + ' legend', r});
					grids.forEach((g, j) => { if (cut(r, g)) out.push(el.id + ' legend over its plot ' + j + ': ' + fmt(r) + ' on ' + fmt(g)); }); }
			});
		}
	}
	const head = document.querySelector('.room-projector-head');
	if (head && head.checkVisibility()) {
		const h = head.getBoundingClientRect();
		const status = document.getElementById('status');
		if (status && status.checkVisibility()) boxes.push({name: '#status', r: status.getBoundingClientRect()});
		document.querySelectorAll('.chart-box').forEach(el => el.checkVisibility() && boxes.push({name: el.id || 'a chart box', r: el.getBoundingClientRect()}));
		for (const b of boxes) if (cut(h, b.r)) out.push('the room code box ' + fmt(h) + ' is over ' + b.name + ' ' + fmt(b.r));
	}
	return out.join('\n');
})()`

// pagedLegends lists the charts whose legend pages its items.
const pagedLegends = `[...document.querySelectorAll('.chart')].filter(el => (echarts.getInstanceByDom(el).getOption().legend || []).some(l => l.type === 'scroll')).map(el => el.id).join(' ')`

// belowWindow names the boxes that end below the window, the innermost
// first, to say what makes a projector view scroll.
const belowWindow = `[...document.querySelectorAll('body *')].filter(el => el.checkVisibility() && el.getBoundingClientRect().bottom > innerHeight + 0.5 &&
	![...el.children].some(c => c.checkVisibility() && c.getBoundingClientRect().bottom > innerHeight + 0.5)).slice(0, 6)
	.map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + '.' + [...el.classList].join('.') + ' ' + Math.round(el.getBoundingClientRect().top) + '–' + Math.round(el.getBoundingClientRect().bottom)).join(', ')`

// timeLabels is, by chart, the time labels its x axes show (after
// ECharts hid those that overlap), as JSON: the text of the axes' label
// elements ECharts drew and did not hide.
const timeLabels = `JSON.stringify(Object.fromEntries([...document.querySelectorAll('.chart')].filter(el => el.checkVisibility()).map(el => {
	const c = echarts.getInstanceByDom(el), out = [];
	c.getModel().findComponents({mainType: 'xAxis'}).forEach(m => { const v = c.getViewOfComponentModel(m);
		if (v && v.group) v.group.traverse(n => { if (n.type === 'text' && !n.ignore && n.style && /^\d+(\.\d+)? s$/.test(n.style.text)) out.push(n.style.text); }); });
	return [el.id, out]; })))`

// timeTickProblems reads timeLabels' answer: on every chart the labels
// but the fault's start fall on multiples of one step counted from 0 s
// (ECharts' own choice counted from the first sweep: 10, 40, 70 s), and
// the fault's start, when the page shows one, is labelled (issue 25).
func timeTickProblems(answer, fault string) []string {
	var byChart map[string][]string
	if err := json.Unmarshal([]byte(answer), &byChart); err != nil {
		return []string{fmt.Sprintf("time labels %q: %v", answer, err)}
	}
	var out []string
	for _, id := range slices.Sorted(maps.Keys(byChart)) {
		labels := byChart[id]
		if len(labels) == 0 {
			continue // not a time axis (a sweep's settings)
		}
		if fault != "" && !slices.Contains(labels, fault) {
			out = append(out, fmt.Sprintf("%s: the fault's start %s is not a labelled tick: %v", id, fault, labels))
		}
		var round []float64
		for _, l := range labels {
			if l == fault {
				continue
			}
			s, err := strconv.ParseFloat(strings.TrimSuffix(l, " s"), 64)
			if err != nil {
				out = append(out, fmt.Sprintf("%s: time label %q", id, l))
				continue
			}
			round = append(round, s)
		}
		if len(round) < 2 {
			continue
		}
		slices.Sort(round)
		step := round[1] - round[0]
		for i := 2; i < len(round); i++ {
			step = min(step, round[i]-round[i-1])
		}
		for _, s := range round {
			if math.Remainder(s, step) != 0 {
				out = append(out, fmt.Sprintf("%s: the time labels %v are not multiples of %g s counted from 0 s", id, labels, step))
				break
			}
		}
	}
	return out
}
