package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"outlierlab/web/internal/browsertest"
)

// TestBrowserLook checks issue 10's acceptance in one headless Chromium on
// one server: the layout at a phone's, a projector's and a 150%-zoomed
// laptop's size, the keyboard, the contrast of every text, the projector
// view, the markers, the log's filter, the charts' text alternatives and
// the live region. Screenshots go to the test's temporary folder and to
// $TMPDIR/outlierlab-look, to be looked at.
func TestBrowserLook(t *testing.T) {
	b := startBrowserWithin(t, 1280, 720, 5*time.Minute)
	shots := t.TempDir()
	keep := filepath.Join(os.TempDir(), "outlierlab-look")
	_ = os.MkdirAll(keep, 0o755)
	t.Logf("screenshots: %s (and %s)", shots, keep)
	shot := func(t *testing.T, p *browser, name string) {
		t.Helper()
		png, err := chromedp.Run(p.Ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		for _, dir := range []string{shots, keep} {
			_ = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
		}
	}
	t.Run("layout", func(t *testing.T) { lookLayout(t, b.On(t), shot) })
	t.Run("keyboard", func(t *testing.T) { lookKeyboard(t, b.On(t)) })
	t.Run("contrast", func(t *testing.T) { lookContrast(t, b.On(t)) })
	t.Run("projector", func(t *testing.T) { lookProjector(t, b.On(t), shot) })
	t.Run("charts and log", func(t *testing.T) { lookChartsAndLog(t, b.On(t)) })
	b.CheckOffline()
}

// lookLayout: at 390×844 (a phone), 1280×720 (a projector) and 853×480
// (1280×720 at 150%), /, /lab and a lesson fit the window's width, show
// Play and a whole chart in the first screen, and keep every text in its
// box.
func lookLayout(t *testing.T, b *browser, shot func(*testing.T, *browser, string)) {
	for _, size := range [][2]int{{390, 844}, {1280, 720}, {853, 480}} {
		for _, path := range []string{"/", "/lab", "/lessons/cap"} {
			browsertest.OpenPage(b, size[0], size[1], path)
			name := fmt.Sprintf("%dx%d%s", size[0], size[1], strings.ReplaceAll(path, "/", "-"))
			shot(t, b, name)
			if got := b.Eval(browsertest.LayoutProblems); got != "" {
				t.Errorf("%s:\n%s", name, got)
			}
		}
	}
	// The drawer open on a phone: the transport and a chart stay in view
	// above it, beside a setting.
	browsertest.OpenPage(b, 390, 844, "/lab")
	b.Step("open the settings", chromedp.Click(chromedp.CSS("#btn-settings")))
	b.Poll("the drawer", `getComputedStyle(document.getElementById('controls')).position === 'fixed' && document.getElementById('btn-settings').getAttribute('aria-expanded') === 'true'`)
	shot(t, b, "390x844-lab-settings")
	if got := b.Eval(`(() => { const d = document.getElementById('controls').getBoundingClientRect();
		const p = document.getElementById('btn-play').getBoundingClientRect();
		const c = document.querySelector('#chart-sr canvas').getBoundingClientRect();
		const s = document.querySelector('#controls input[type=range]').getBoundingClientRect();
		return [p.top >= 0 && p.bottom <= d.top, c.top >= p.bottom && c.top + 150 <= d.top, s.top >= d.top && s.bottom <= innerHeight].join(' ') })()`); got != "true true true" {
		t.Errorf("on a phone with the settings open, Play above the drawer, 150 px of a chart above it, a slider in it: %s", got)
	}
}

// lookKeyboard: Play within five Tab presses of a fresh page; the keys;
// none of them while typing or in a menu; a menu chosen with the mouse
// gives the arrows back to the timeline; Escape leaves the copy fallback.
func lookKeyboard(t *testing.T, b *browser) {
	scrub := `document.getElementById('scrub').value`
	for _, path := range []string{"/lab", "/lessons/cap"} {
		browsertest.OpenPage(b, 1280, 720, path)
		n := 0
		for n < 5 && b.Eval(`document.activeElement.id`) != "btn-play" {
			b.Step("tab", chromedp.KeyEvent(kb.Tab))
			n++
		}
		if got := b.Eval(`document.activeElement.id`); got != "btn-play" {
			t.Errorf("%s: after %d tabs the focus is on %s, not Play", path, n, b.Eval(`document.activeElement.outerHTML.slice(0, 80)`))
		}
	}

	// A scenario chosen with the mouse: → then steps the timeline.
	browsertest.OpenPage(b, 1280, 720, "/lab")
	b.Step("click the scenario menu", chromedp.Click(chromedp.CSS("#preset")))
	b.Eval(`(() => { const el = document.getElementById('preset'); el.value = 'dead-host';
		el.dispatchEvent(new Event('change', {bubbles: true})); return 'ok' })()`)
	b.Poll("dead-host loaded", `location.search === '?preset=dead-host' && document.getElementById('c-hosts').value === '10'`)
	b.Step("press →", chromedp.KeyEvent(kb.ArrowRight))
	b.Poll("a step", scrub+` === '1'`)
	if got := b.Eval(`document.getElementById('preset').value`); got != "dead-host" {
		t.Errorf("→ after choosing the scenario changed it to %s", got)
	}

	// Home, End, g, the speeds, r and ?.
	key := func(k string) { t.Helper(); b.Step("press "+k, chromedp.KeyEvent(k)) }
	clock := `document.querySelector('#status .clock').textContent.includes`
	key(kb.End)
	b.Poll("the end", scrub+` === '30' && `+clock+`('t = 300 s')`)
	key(kb.Home)
	b.Poll("the start", scrub+` === '0' && `+clock+`('t = 0 s')`)
	key("g")
	b.Poll("the go-to box", `!document.getElementById('goto').hidden && document.activeElement.id === 'goto-time'`)
	b.Step("type 120", chromedp.SendKeys(chromedp.CSS("#goto-time"), "120"+kb.Enter))
	b.Poll("the cursor at 120 s", scrub+` === '12' && document.getElementById('goto').hidden && document.querySelector('#status .clock').textContent.includes('t = 120 s')`)
	for _, k := range [][2]string{{"4", "4"}, {"6", "16"}, {"i", "instant"}, {"1", "1"}} {
		key(k[0])
		b.Poll("speed "+k[1]+" after "+k[0], `document.querySelector('[data-speed="`+k[1]+`"]').getAttribute('aria-pressed') === 'true'`)
	}
	key("r")
	b.Poll("reset", scrub+` === '0' && location.search === '?preset=dead-host'`)
	key("?")
	b.Poll("the keys", `document.getElementById('keys').open`)
	key(kb.Escape)
	b.Poll("the keys closed", `!document.getElementById('keys').open`)

	// None while typing in a field or with a menu focused; space on a link
	// does not play.
	b.Step("focus the host menu", chromedp.Focus(chromedp.CSS("#inject-host")))
	key("r")
	key(kb.End)
	b.Step("focus a number field", chromedp.Focus(chromedp.CSS("#n-max_ejection_time")))
	key("4")
	key("g")
	b.Step("focus the brand link", chromedp.Focus(chromedp.CSS(".brand")))
	key(" ")
	if got := b.Eval(scrub + ` + ' ' + document.querySelector('[data-speed="1"]').getAttribute('aria-pressed') + ' ' + document.getElementById('goto').hidden + ' ' + (document.querySelector('#status .state.playing') !== null)`); got != "0 true true false" {
		t.Errorf("keys fired in a menu, a field or on a link (cursor, speed 1, box hidden, playing): %s", got)
	}

	// The copy fallback (no clipboard, as on plain http): Escape leaves it
	// and → steps again.
	b.Eval(`(() => { Object.defineProperty(navigator, 'clipboard', {value: undefined, configurable: true}); return 'ok' })()`)
	b.Step("back to the top", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); window.scrollTo({top: 0, behavior: 'instant'})`))
	// A redraw still arriving from the keys above may take the focus back
	// from the field (on a loaded machine it came after the click), so the
	// click is repeated until the field holds the focus.
	b.Poll("the fallback field", `(() => {
		const f = document.activeElement;
		if (f.id === 'copy-link-field' && !f.hidden) return true;
		document.getElementById('btn-copy-link').click();
		return false;
	})()`)
	key(kb.Escape)
	b.Poll("out of the field", `document.activeElement.id === 'btn-copy-link' && document.getElementById('copy-link-field').hidden`)
	key(kb.ArrowRight)
	b.Poll("a step after the copy", scrub+` === '1'`)
}

// contrastProblems lists every visible text below 4.5:1 against what is
// behind it (WCAG 2's formula, the backgrounds composited up the tree).
const contrastProblems = `(() => {
	const parse = (s) => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null;
		const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
	const over = (top, under) => top.slice(0, 3).map((c, i) => c * top[3] + under[i] * (1 - top[3]));
	const lum = (c) => { const l = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
		return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
	const background = (el) => {
		const layers = [];
		for (let e = el; e; e = e.parentElement) {
			const c = parse(getComputedStyle(e).backgroundColor);
			if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
		}
		let bg = [255, 255, 255];
		for (const l of layers.reverse()) bg = over(l, bg);
		return bg;
	};
	const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).join('.') : '');
	const out = [], seen = new Set();
	const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = walker.nextNode(); n; n = walker.nextNode()) {
		const el = n.parentElement;
		if (!n.textContent.trim() || !el || seen.has(el)) continue;
		seen.add(el);
		if (!el.checkVisibility({opacityProperty: true, visibilityProperty: true}) || el.closest('.sr-only, [hidden], script, style, noscript, option, [disabled]')) continue;
		const bg = background(el);
		const fg = over(parse(getComputedStyle(el).color), bg);
		const hi = Math.max(lum(fg), lum(bg)), lo = Math.min(lum(fg), lum(bg));
		const ratio = (hi + 0.05) / (lo + 0.05);
		if (ratio < 4.5) out.push(ratio.toFixed(2) + ':1 ' + name(el) + ' "' + n.textContent.trim().slice(0, 40) + '" ' + getComputedStyle(el).color + ' on rgb(' + bg.map(Math.round) + ')');
	}
	return [...new Set(out)].join('\n');
})()`

// openAll unfolds every folded part (settings groups, Envoy's view) so its
// text is checked too.
const openAll = `(() => { document.querySelectorAll('details').forEach(d => d.open = true); return 'ok' })()`

// lookContrast: no text below 4.5:1 on the lab (ejections, returns,
// refusals, folded non-events, both log filters, the keys dialog) and a
// lesson (prose, steps, an answered prediction and quiz).
func lookContrast(t *testing.T, b *browser) {
	check := func(what string) {
		t.Helper()
		if got := b.Eval(contrastProblems); got != "" {
			t.Errorf("%s: text below 4.5:1:\n%s", what, got)
		}
	}
	browsertest.OpenPage(b, 1280, 720, "/lab?max_ejection_percent=34&t=250")
	b.Poll("h5 ejected in the host table", `document.querySelector('#envoy-hosts tr.ejected') !== null`)
	b.Eval(openAll)
	check("the lab, h5 ejected")
	b.Step("decisions only", chromedp.Click(chromedp.CSS(`[data-log-show="decisions"]`)))
	check("the lab, decisions only")
	b.Step("everything", chromedp.Click(chromedp.CSS(`[data-log-show="all"]`)))
	b.Step("the keys", chromedp.KeyEvent("?"))
	b.Poll("the keys", `document.getElementById('keys').open`)
	check("the keys dialog")
	b.Step("close the keys", chromedp.KeyEvent(kb.Escape))
	browsertest.OpenPage(b, 1280, 720, "/lab?t=100")
	b.Poll("refusals in the log", `document.querySelector('.entry.overflow') !== null`)
	b.Eval(openAll)
	check("the lab, refusals")
	browsertest.OpenPage(b, 853, 480, "/lab")
	b.Step("the drawer", chromedp.Click(chromedp.CSS("#btn-settings")))
	check("the lab's drawer")
	browsertest.OpenPage(b, 1280, 720, "/lessons/cap")
	b.Step("answer the prediction", chromedp.Click(chromedp.CSS(`#predict .choice[data-file="0"]`)))
	b.Step("answer a question", chromedp.Click(chromedp.CSS(`.quiz .question[data-index="0"] .choice[data-file="1"]`)))
	b.Eval(openAll)
	check("the lesson")
	browsertest.OpenPage(b, 1280, 720, "/")
	check("the course")
}

// chartFonts lists the charts whose axis labels or legend text are
// smaller than min px, as their ECharts option says.
const chartFonts = `(min) => [...document.querySelectorAll('.chart')].flatMap(el => {
	const o = echarts.getInstanceByDom(el).getOption();
	const sizes = [...o.xAxis, ...o.yAxis].map(a => a.axisLabel.fontSize).concat(o.legend.filter(l => l.show !== false).map(l => l.textStyle.fontSize));
	return sizes.some(s => !(s >= min)) ? [el.id + ': ' + sizes.join(',')] : [];
}).join('; ')`

// chartsOutside lists the charts not wholly in the first screen (or under
// 100 px tall), as an array. A chart the view hides (a room's projector
// shows the charts a room reads, not all six: issue 33) is not one of
// them, but a view that shows none is.
const chartsOutside = `[...document.querySelectorAll('.chart')].filter(el => el.checkVisibility()).filter(el => { const r = el.getBoundingClientRect();
	return !(r.height >= 100 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth); }).map(el => el.id)
	.concat([...document.querySelectorAll('.chart')].some(el => el.checkVisibility()) ? [] : ['no chart is shown'])`

// chartsInView lists the charts not wholly in the window, and says if the
// page scrolls at all.
const chartsInView = `(() => ` + chartsOutside + `
	.concat(document.documentElement.scrollHeight > innerHeight ? ['the page scrolls: ' + document.documentElement.scrollHeight] : []).join(' '))()`

// lookProjector: at 1280×720 the projector view shows every chart whole,
// its axis labels and legends at 18 px or more, with the status and the
// last decisions; the settings are an overlay; p turns it off and on and
// the address keeps it.
func lookProjector(t *testing.T, b *browser, shot func(*testing.T, *browser, string)) {
	for _, path := range []string{"/lab?view=projector&t=100", "/lessons/cap?view=projector"} {
		browsertest.OpenPage(b, 1280, 720, path)
		b.Poll("the projector's fonts", `(`+chartFonts+`)(18) === ''`)
		shot(t, b, "1280x720-projector"+strings.Split(strings.ReplaceAll(path, "/", "-"), "?")[0])
		if got := b.Eval(chartsInView); got != "" {
			t.Errorf("%s: charts not wholly on screen: %s", path, got)
		}
		if got := b.Eval(`[getComputedStyle(document.querySelector('.top')).display, document.querySelectorAll('h1').length, !!document.querySelector('#status .clock').checkVisibility(), !!document.querySelector('.log-panel').checkVisibility()].join(' ')`); got != "none 1 true true" {
			t.Errorf("%s: header shown, h1 count, status shown, decisions shown: %s", path, got)
		}
	}
	browsertest.OpenPage(b, 1280, 720, "/lab?view=projector&t=100")
	if got := b.Eval(`[...document.querySelectorAll('#log-list .entry')].filter(e => e.checkVisibility()).map(e => e.classList.contains('quiet')).join(',')`); got == "" || strings.Contains(got, "true") {
		t.Errorf("the projector's decisions: visible entries quiet? %s", got)
	}
	// The settings: an overlay that leaves the charts as they are.
	before := b.Eval(`JSON.stringify(document.getElementById('chart-sr').getBoundingClientRect())`)
	b.Step("s", chromedp.KeyEvent("s"))
	b.Poll("the settings overlay", `getComputedStyle(document.getElementById('controls')).position === 'fixed' && document.activeElement.closest('#controls') !== null && location.search.includes('t=100')`)
	if after := b.Eval(`JSON.stringify(document.getElementById('chart-sr').getBoundingClientRect())`); after != before {
		t.Errorf("the settings moved the charts: %s → %s", before, after)
	}
	b.Step("Escape", chromedp.KeyEvent(kb.Escape))
	b.Poll("the settings closed", `getComputedStyle(document.getElementById('controls')).display === 'none' && document.activeElement.id === 'btn-settings'`)
	// p: off, then on; a step's new address keeps the view.
	b.Step("p", chromedp.KeyEvent("p"))
	b.Poll("the full lab", `!document.getElementById('lab').classList.contains('projector') && !location.search.includes('view=') &&
		getComputedStyle(document.querySelector('.top')).display !== 'none' && echarts.getInstanceByDom(document.getElementById('chart-sr')).getOption().xAxis[0].axisLabel.fontSize < 18`)
	b.Step("p", chromedp.KeyEvent("p"))
	b.Poll("the projector again", `document.getElementById('lab').classList.contains('projector') && location.search.includes('view=projector') && (`+chartFonts+`)(18) === ''`)
	b.Step("→", chromedp.KeyEvent(kb.ArrowRight))
	b.Poll("the address at 110 s, still projected", `location.search.includes('t=110') && location.search.includes('view=projector')`)
}

// lookChartsAndLog: every chart marks the story and names the markers in
// its legend; ECharts' aria is off and the box's name is the server's
// sentence; a chart shows as a table; the log folds non-events and hides
// them on demand; the status is read out at most once a second.
func lookChartsAndLog(t *testing.T, b *browser) {
	browsertest.OpenPage(b, 1280, 720, "/lab?max_ejection_percent=34&inject=h2@60s&t=300")
	b.Poll("the markers", `[...document.querySelectorAll('.chart')].every(el => { const o = echarts.getInstanceByDom(el).getOption();
		const ev = o.series.filter(s => s.name === 'events');
		return ev.reduce((n, s) => n + s.markLine.data.length, 0) === 9 && ev.reduce((n, s) => n + ((s.markArea || {}).data || []).length, 0) === 1 && o.legend[0].show !== false &&
			(!o.legend[0].data || o.legend[0].data.some(d => (d.name || d) === 'events')) })`)
	// A chart element's option is the server's, as sent (js/chart.js).
	if got := b.Eval(`[...document.querySelectorAll('.chart')].filter(el => { const a = el.option.aria;
		return a.enabled !== false || el.getAttribute('aria-label') !== el.dataset.title + '. ' + a.label.description || !a.label.description.includes('300 s') }).map(el => el.id + ': ' + el.getAttribute('aria-label')).join('\n')`); got != "" {
		t.Errorf("charts whose name is not the server's sentence at 300 s, or with ECharts' aria on:\n%s", got)
	}
	if got := b.Eval(`document.getElementById('chart-lanes').getAttribute('aria-label')`); got != "Ejections. At 300 s 2 of 6 hosts are ejected: h2 (×4), h5 (×4); so far 0 ejections refused by the cap and 0 detected without enforcing." {
		t.Errorf("the lanes' name: %q", got)
	}
	b.Step("step back", chromedp.Click(chromedp.CSS("#btn-back")))
	b.Poll("the name at 290 s", `document.getElementById('chart-lanes').getAttribute('aria-label').startsWith('Ejections. At 290 s')`)

	// As a table and back.
	b.Step("Table", chromedp.Click(chromedp.CSS(`[data-table-for="chart-sr"]`)))
	b.Poll("the table", `!document.getElementById('tbl-chart-sr').hidden && document.querySelectorAll('#tbl-chart-sr tbody tr').length === 29 &&
		document.getElementById('chart-sr').offsetParent === null && document.querySelector('#tbl-chart-sr tbody th').textContent === '290 s'`)
	b.Step("Chart", chromedp.Click(chromedp.CSS(`[data-table-for="chart-sr"]`)))
	b.Poll("the chart again", `document.getElementById('tbl-chart-sr').hidden && document.querySelector('#chart-sr canvas').offsetParent !== null`)

	// The log: folded non-events; decisions only hides them.
	if got := b.Eval(`[...document.querySelectorAll('#log-list .entry.folded')].map(e => e.querySelector('time').textContent + ' ' + e.querySelector('.badge').textContent).join('; ')`); !strings.Contains(got, "10–30 s NO OUTLIER ×3") {
		t.Errorf("folded entries: %s", got)
	}
	b.Step("decisions only", chromedp.Click(chromedp.CSS(`[data-log-show="decisions"]`)))
	b.Poll("the non-events hidden", `[...document.querySelectorAll('#log-list .entry')].every(e => e.classList.contains('quiet') === !e.checkVisibility()) &&
		document.querySelector('[data-log-show="decisions"]').getAttribute('aria-pressed') === 'true'`)
	b.Step("everything", chromedp.Click(chromedp.CSS(`[data-log-show="all"]`)))
	b.Poll("everything shown", `[...document.querySelectorAll('#log-list .entry')].every(e => e.checkVisibility())`)

	// The live region: the status line has none; #announce changes at
	// most once a second while a run plays at 16×.
	browsertest.OpenPage(b, 1280, 720, "/lab")
	if got := b.Eval(`[document.getElementById('status').getAttribute('aria-live'), document.getElementById('announce').getAttribute('aria-live')].join(' ')`); got != " polite" {
		t.Errorf("aria-live on the status and the announcer: %q", got)
	}
	// Each write timed as it is made: a MutationObserver's callback runs
	// after whatever else the task queued, late by a varying amount on a
	// busy machine (CI at load ~9: one gap of four under 0.99 s, though
	// the announcer waits a full second between its writes).
	b.Eval(`(() => { window.t_said = []; const el = document.getElementById('announce');
		const text = Object.getOwnPropertyDescriptor(Node.prototype, 'textContent');
		Object.defineProperty(el, 'textContent', { configurable: true, get() { return text.get.call(this); },
			set(v) { t_said.push(performance.now()); text.set.call(this, v); } });
		return 'ok' })()`)
	b.Step("16×", chromedp.KeyEvent("6"))
	b.Step("play", chromedp.KeyEvent(" "))
	b.Poll("the end of the run", `document.getElementById('scrub').value === '30'`)
	b.Poll("the last words", `t_said.length > 0 && performance.now() - t_said[t_said.length - 1] > 1100`)
	if got := b.Eval(`String(t_said.slice(1).map((t, i) => t - t_said[i]).filter(d => d < 990).length) + ' of ' + t_said.length`); !strings.HasPrefix(got, "0 of ") || got == "0 of 1" {
		t.Errorf("live region updates closer than a second apart: %s", got)
	}
}
