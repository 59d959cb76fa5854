package web

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room"
	"outlierlab/web/roombus"
	"outlierlab/web/tabid"
)

// Issue 26 item 0: a slider move must feel instant. In headless Chromium
// at 1280×900, on a run played to its end, the time from the cap slider's
// input event to every chart repainted: median ≤ 50 ms, p95 ≤ 100 ms.
const (
	sliderMoves        = 20
	sliderMedianBudget = 50 * time.Millisecond
	sliderP95Budget    = 100 * time.Millisecond
)

// sliderBench is installed in the page. It wraps applyCharts (the
// redraw's script calls the global) and each chart's setOption, and
// listens to each chart's rendered event (ECharts draws on the frame after
// a lazy setOption, and a chart out of the window only once it scrolls
// in: js/chart.js inView). t_move(id, value) moves a slider and resolves,
// once a redraw was applied and two animation frames have passed with no
// chart given another option or drawn again, to the times in ms from the
// input: repaint (the last chart drawn), status (the status line's
// change); changed, the charts whose option the redraw changed, and
// painted, those drawn. The clock is performance.timeOrigin +
// performance.now(), which two tabs of one browser share: a follower
// measures from the instructor's input.
const sliderBench = `
window.t_clock = () => performance.timeOrigin + performance.now();
window.t_bench = { events: 0, appliedAt: 0, options: {}, json: {}, optionAt: {}, paintedAt: {} };
window.t_hook = () => {
	if (!window.applyCharts.t_hooked) {
		// The options the page holds (each chart element's: as the server sent them).
		for (const el of document.querySelectorAll('olab-chart')) if (el.option) t_bench.json[el.id] = JSON.stringify(el.option);
		const apply = window.applyCharts;
		window.applyCharts = function (...args) {
			const r = apply.apply(this, args);
			t_bench.appliedAt = t_clock();
			t_bench.options = args[0] || {};
			return r;
		};
		window.applyCharts.t_hooked = true;
	}
	for (const el of document.querySelectorAll('.chart[id^="chart-"]')) {
		const c = window.echarts && echarts.getInstanceByDom(el);
		if (!c || c.t_hooked) continue;
		const set = c.setOption;
		c.t_hooked = true;
		c.setOption = function (...args) {
			t_bench.events++;
			return set.apply(this, args);
		};
		c.on('rendered', () => { t_bench.events++; t_bench.paintedAt[el.id] = t_clock(); });
	}
};
// t_await resolves once a redraw was applied after from, and the page is
// still for two frames.
window.t_await = (from, statusBefore) => new Promise((resolve, reject) => {
	const status = document.getElementById('status');
	let statusAt = 0, seen = -1, still = 0;
	const look = () => { if (!statusAt && status && status.textContent !== statusBefore) statusAt = t_clock(); };
	const mo = new MutationObserver(look);
	if (status) mo.observe(status, { subtree: true, childList: true, characterData: true });
	const timeout = setTimeout(() => { mo.disconnect(); reject(new Error('no redraw in 10 s')); }, 10000);
	const since = (m) => Object.values(m).filter((t) => t >= from);
	// The charts the redraw changed (compared once the move is measured).
	const changed = () => {
		let n = 0;
		for (const id in t_bench.options) {
			const j = JSON.stringify(t_bench.options[id]);
			if (t_bench.json[id] !== j) { t_bench.json[id] = j; t_bench.optionAt[id] = t_bench.appliedAt; n++; }
		}
		return n;
	};
	const frame = () => {
		look();
		if (t_bench.appliedAt < from) { requestAnimationFrame(frame); return; }
		if (seen !== t_bench.events) { seen = t_bench.events; still = 0; }
		else if (++still >= 2) {
			clearTimeout(timeout);
			mo.disconnect();
			const painted = since(t_bench.paintedAt);
			resolve({ repaint: Math.max(t_bench.appliedAt, ...painted) - from, status: statusAt ? statusAt - from : -1,
				changed: changed(), painted: painted.length });
			return;
		}
		requestAnimationFrame(frame);
	};
	requestAnimationFrame(frame);
});
window.t_status = () => { const s = document.getElementById('status'); return s ? s.textContent : ''; };
// t_move moves the slider (as a drag ends on a value) and measures on this
// page. The slider's input is throttled (data-on:input__throttle): a move
// is made once the window since the last one has passed, so that it is
// sent at once, not at the window's end.
window.t_move = async (id, v) => {
	t_hook();
	const el = document.getElementById(id);
	const m = /__throttle\.(\d+)ms/.exec([...el.attributes].map((a) => a.name).join(' '));
	const wait = (m ? +m[1] + 10 : 0) - (performance.now() - (window.t_moved || -Infinity));
	if (wait > 0) await new Promise((r) => setTimeout(r, wait));
	const before = t_status(), from = t_clock();
	window.t_moved = performance.now();
	el.value = v;
	el.dispatchEvent(new Event('input', { bubbles: true }));
	return t_await(from, before);
};
// t_still resolves once no chart was given an option or drawn for two
// frames in a row (a played run's last frames have landed).
window.t_still = () => new Promise((resolve) => {
	t_hook();
	let seen = -1, still = 0;
	const frame = () => {
		if (seen !== t_bench.events) { seen = t_bench.events; still = 0; } else if (++still >= 2) { resolve(true); return; }
		requestAnimationFrame(frame);
	};
	requestAnimationFrame(frame);
});
// t_stale lists the charts not drawn since a redraw changed them.
// A chart the page does not show (a lesson step's others, the mesh strip
// of a run without sidecars) is drawn when it is shown, not scrolled to.
window.t_stale = () => Object.keys(t_bench.optionAt).filter((id) => !(t_bench.paintedAt[id] >= t_bench.optionAt[id]) && document.getElementById(id).checkVisibility());
true`

type moveTimes struct {
	Repaint float64 `json:"repaint"`
	Status  float64 `json:"status"`
	Changed int     `json:"changed"`
	Painted int     `json:"painted"`
}

// capValues are the cap slider's positions, in turn, from the presets'
// 10%: each crosses 1/6 (one of the six hosts) the other way, so that
// every move changes what every chart shows (a move within 17–100% ejects
// no other host, and changes no chart).
var capValues = []string{"34", "10", "50", "15", "100", "5", "41", "0"}

// quantiles are the median, the 95th percentile and the largest of ms.
func quantiles(ms []float64) (p50, p95, top time.Duration) {
	s := slices.Clone(ms)
	slices.Sort(s)
	at := func(q float64) time.Duration {
		i := int(q*float64(len(s)) + 0.5)
		i = min(max(i-1, 0), len(s)-1)
		return time.Duration(s[i] * float64(time.Millisecond))
	}
	return at(0.5), at(0.95), time.Duration(s[len(s)-1] * float64(time.Millisecond))
}

// sliderFigures is what one page's moves measured, in words.
func sliderFigures(what string, moves []moveTimes) (line string, p50, p95 time.Duration) {
	var repaint, status []float64
	changed, painted := 0, 0
	for _, m := range moves {
		repaint = append(repaint, m.Repaint)
		if m.Status >= 0 {
			status = append(status, m.Status)
		}
		changed, painted = max(changed, m.Changed), max(painted, m.Painted)
	}
	p50, p95, top := quantiles(repaint)
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
	line = fmt.Sprintf("%s: %d moves, input → every chart repainted: median %v, p95 %v, max %v (%d charts changed, %d in view drawn)",
		what, len(moves), r(p50), r(p95), r(top), changed, painted)
	if len(status) > 0 {
		s50, s95, _ := quantiles(status)
		line += fmt.Sprintf("; → status line: median %v, p95 %v", r(s50), r(s95))
	}
	return line, p50, p95
}

// loadAverage is the machine's load over the last minute (/proc/loadavg),
// or -1 where it cannot be read.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// TestBrowserSliderRepaint moves the cap slider 20 times (after one
// untimed pass over its values) on /lab played to its end, on the cap
// lesson played to its end, on a room's instructor page, and on a
// follower's page (timed from the instructor's move, posted as their page
// posts it), and
// holds each page to the budget: median ≤ 50 ms,
// p95 ≤ 100 ms. Every move must give every chart its new option (else the
// benchmark measures less than a move), and a chart out of the window,
// drawn only once it scrolls in, must be drawn when it does.
//
// Over budget, the test fails only where the machine had a core to spare
// for the page: with more runnable tasks than cores (the load average
// over the last minute, at the start or the end) the figures measure the
// machine, and the test is skipped with them. Within budget it passes at
// any load. Under -race the server's command is a few times slower; the
// figures say so.
func TestBrowserSliderRepaint(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	loadBefore := loadAverage()
	l := startRoomLab(t, roombus.BusOptions{}, room.Limits{})
	bctx := browsertest.StartChromium(t, 1280, 900)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	const capSlider = "c-max_ejection_percent"
	settle := func(b *browser) {
		if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`t_still()`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("the charts settling: %v", err)
		}
	}
	playToEnd := func(b *browser, path string) {
		b.Step("open "+path, chromedp.Navigate(b.URL+path), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
		b.Eval(sliderBench + `; 'ok'`)
		b.Step("instant speed", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
		b.Step("play", chromedp.Click(chromedp.CSS("#btn-play")))
		// A lesson holds at each step's pause (a prediction to answer: any
		// choice will do), then plays on.
		b.Poll("the run's end", `(() => { const s = document.getElementById('scrub');
			if (s.value === s.max && s.max !== '0') return true;
			if (document.querySelector('#status .state.held') && !(performance.now() - (window.t_played || 0) < 400)) {
				window.t_played = performance.now();
				const choice = document.querySelector('.choice:not([aria-disabled="true"])');
				if (choice) choice.click(); else document.getElementById('btn-play').click(); }
			return false })()`)
		settle(b)
	}
	move := func(b *browser, v string) moveTimes {
		m, err := chromedp.Run(b.Ctx, chromedp.Evaluate[moveTimes](fmt.Sprintf(`t_move(%q, %q)`, capSlider, v), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("move the cap to %s: %v", v, err)
		}
		return m
	}
	// warm makes one pass over the values before the moves are timed:
	// V8 has compiled the path a move takes, and each value's run is in
	// the lab's run cache (a new run is the engine's ~6 ms, but 5–10×
	// that under -race, which is the race detector's, not the page's).
	warm := func(b *browser) {
		for _, v := range capValues {
			move(b, v)
		}
	}
	type page struct {
		what  string
		moves []moveTimes
	}
	var pages []page
	// checkMoves holds b's moves to every chart of the page, and draws
	// the charts out of the window by scrolling each into view.
	checkMoves := func(b *browser, what string, moves []moveTimes) {
		charts, _ := strconv.Atoi(b.Eval(`String(document.querySelectorAll('.chart[id^="chart-"]').length)`))
		for i, m := range moves {
			if m.Changed != charts || m.Painted < 1 {
				t.Errorf("%s: move %d (the cap at %s%%) changed %d of the %d charts and drew %d: the moves must change every chart",
					what, i+1, capValues[i%len(capValues)], m.Changed, charts, m.Painted)
			}
		}
		stale, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`(async () => {
			const out = [];
			for (const id of t_stale()) {
				document.getElementById(id).scrollIntoView({ block: 'center' });
				const t0 = performance.now();
				while (t_stale().includes(id) && performance.now() - t0 < 5000) await new Promise((r) => requestAnimationFrame(r));
				if (t_stale().includes(id)) out.push(id);
			}
			scrollTo(0, 0);
			return out.join(' ');
		})()`, chromedp.EvalAwaitPromise))
		if err != nil || stale != "" {
			t.Errorf("%s: charts not drawn with their last option 5 s after they scrolled into view: %q %v", what, stale, err)
		}
		// The tables a drag's redraws owed (web/lab/stream.go's dragGap)
		// follow once it rests: Envoy's YAML (where the page has it) and
		// the hosts' table, sent with it, show the last move's cap.
		last := capValues[(len(moves)-1)%len(capValues)]
		b.Poll(what+": Envoy's YAML at the last move's cap once the drag rests", `(() => {
			const y = document.getElementById('envoy-yaml');
			return !y || y.textContent.includes('max_ejection_percent: `+last+`'); })()`)
		pages = append(pages, page{what, moves})
	}

	for _, path := range []string{"/lab", "/lessons/cap"} {
		b := browsertest.Tab(t, bctx, l.TS.URL, 90*time.Second)
		playToEnd(b, path)
		warm(b)
		var moves []moveTimes
		for i := range sliderMoves {
			moves = append(moves, move(b, capValues[i%len(capValues)]))
		}
		checkMoves(b, path, moves)
		b.CheckOffline()
	}

	// A room. First the instructor alone: their own page repaints. Then a
	// follower: the instructor's moves come as the instructor's page posts
	// them (the set command, with their tab, role and key), from this test
	// rather than from their browser, whose own repaint would otherwise
	// share this machine's two cores with the follower's page, as it never
	// does in a room (another laptop). The follower's clock starts before
	// the post, so it counts the server's part too.
	teacher, pupil := browsertest.Tab(t, bctx, l.TS.URL, 90*time.Second), browsertest.Tab(t, bctx, l.TS.URL, 90*time.Second)
	// The instructor's browser is the tests' (its identity cookie): the
	// moves this test posts for its tab are then that browser's
	// (web/tabid), as its page's own posts would be.
	teacher.Step("the tests' browser identity", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, network.SetCookie, network.SetCookieParams{Name: tabid.Cookie, Value: webtest.Browser, URL: l.TS.URL})
		return chromedp.Void{}, err
	})
	code := browsertest.StartWorkshop(teacher)
	teacher.Poll("the instructor page's address", `/^\/r\/[2-9A-Z]{6}\/present$/.test(location.pathname)`)
	handover := teacher.Eval(`document.getElementById('room-handover-link').textContent`)
	_, key, ok := strings.Cut(handover, "/present?key=")
	if !ok {
		t.Fatalf("no key in the instructor link %q", handover)
	}
	teacherTab := teacher.Eval(`JSON.parse(document.getElementById('lab').dataset.signals).tab`)
	teacher.Eval(sliderBench + `; 'ok'`)
	teacher.Step("instant speed", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
	teacher.Step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	teacher.Poll("the run's end", `document.getElementById('scrub').value === document.getElementById('scrub').max && document.getElementById('scrub').max !== '0'`)
	settle(teacher)
	warm(teacher)
	var follower, instructor []moveTimes
	for i := range sliderMoves {
		instructor = append(instructor, move(teacher, capValues[i%len(capValues)]))
	}
	checkMoves(teacher, "/r/CODE/present (instructor)", instructor)
	teacher.CheckOffline()
	teacher.Step("the instructor's laptop leaves this machine", chromedp.Navigate("about:blank"))

	pupil.Step("join the room", chromedp.Navigate(l.TS.URL+"/r/"+code), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	pupil.Eval(sliderBench + `; 'ok'`)
	pupil.Poll("following, at the instructor's cursor", `document.getElementById('scrub').value === document.getElementById('scrub').max && document.getElementById('scrub').max !== '0'`)
	settle(pupil)
	post := func(i int, v string) {
		// seq above every post of the instructor's page (a move each).
		sig := roomtest.Sig(teacherTab, code, "present", fmt.Sprintf(`"preset":"search-cache","seq":%d,"cfg":{"max_ejection_percent":%s}`, 1000+i, v))
		if st, body := roomtest.Post(t, l.TS.URL, "set", sig, code, key); st != http.StatusNoContent {
			t.Fatalf("the instructor's move to %s: %d %s", v, st, body)
		}
	}
	for i, v := range capValues { // the follower's warm pass
		pupil.Eval(`t_hook(); window.t_pending = t_await(t_clock(), t_status()); 'ok'`)
		post(i, v)
		if _, err := chromedp.Run(pupil.Ctx, chromedp.Evaluate[moveTimes](`t_pending`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("follower, warming at the cap %s: %v", v, err)
		}
	}
	settle(pupil)
	for i := range sliderMoves {
		v := capValues[i%len(capValues)]
		pupil.Eval(`t_hook(); window.t_pending = t_await(t_clock(), t_status()); 'ok'`)
		post(len(capValues)+i, v)
		m, err := chromedp.Run(pupil.Ctx, chromedp.Evaluate[moveTimes](`t_pending`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("follower after the cap at %s: %v", v, err)
		}
		follower = append(follower, m)
	}
	checkMoves(pupil, "/r/CODE follower", follower)
	pupil.CheckOffline()

	loadAfter := loadAverage()
	var over []string
	for _, p := range pages {
		line, p50, p95 := sliderFigures(p.what, p.moves)
		t.Log(line)
		if p50 > sliderMedianBudget || p95 > sliderP95Budget {
			over = append(over, fmt.Sprintf("%s: median %v, p95 %v", p.what, p50.Round(100*time.Microsecond), p95.Round(100*time.Microsecond)))
		}
	}
	cores := runtime.NumCPU()
	machine := fmt.Sprintf("load average %.2f at the start, %.2f at the end, on %d cores", loadBefore, loadAfter, cores)
	if webtest.RaceEnabled {
		machine += "; the server under -race"
	}
	if len(over) == 0 {
		t.Logf("within budget (median ≤ %v, p95 ≤ %v): %s", sliderMedianBudget, sliderP95Budget, machine)
		return
	}
	msg := fmt.Sprintf("over budget (median ≤ %v, p95 ≤ %v): %s (%s)", sliderMedianBudget, sliderP95Budget, strings.Join(over, "; "), machine)
	if webtest.RaceEnabled {
		// The race detector makes the server's part 5–10× slower: the
		// budget is the product's, judged without it (make slider).
		t.Log("not judged under -race: " + msg)
		return
	}
	if loadBefore > float64(cores) || loadAfter > float64(cores) {
		t.Skip("the machine is too busy to judge (more runnable tasks than cores): " + msg)
	}
	t.Error(msg)
}
