// Package browsertest drives a headless Chromium against a test server
// for the browser tests of every web package: one browser per test, with
// helpers that fail the test with what they were waiting for, and a check
// that the page asked no other host for anything.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is a headless Chromium on a test server, with helpers that
// fail the test with what they were waiting for.
type Browser struct {
	T   *testing.T
	Ctx context.Context
	URL string

	mu                     sync.Mutex
	foreign, consoleErrors []string
}

// Start serves h on a test server and starts Chromium on it, or skips
// the test (in -short mode, or without Chromium); shutdown ends the
// server's open streams before it closes.
func Start(t *testing.T, h http.Handler, shutdown func(), width, height int) *Browser {
	t.Helper()
	return StartWithin(t, h, shutdown, width, height, 90*time.Second)
}

// StartWithin is Start for a test that needs its Chromium longer than
// Start's 90 s (a walk through every lesson).
func StartWithin(t *testing.T, h http.Handler, shutdown func(), width, height int, limit time.Duration) *Browser {
	t.Helper()
	SkipWithoutChromium(t)
	ts := httptest.NewServer(h)
	// Cleanups run last-registered first: the browser goes, then the
	// streams end, then the server closes. The other order hangs Close on
	// the open stream (stack-notes §5).
	t.Cleanup(ts.Close)
	t.Cleanup(shutdown)

	bctx := StartChromium(t, width, height)
	b := &Browser{T: t, URL: ts.URL}
	if err := b.listen(bctx); err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithTimeout(bctx, limit)
	t.Cleanup(cancel)
	b.Ctx = ctx
	return b
}

// Tab is a tab of its own (a new browser context: a laptop of a room) in
// the Chromium of bctx, on base, for limit.
func Tab(t *testing.T, bctx context.Context, base string, limit time.Duration) *Browser {
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	b := &Browser{T: t, URL: base}
	if err := b.listen(ctx); err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	ctx, cancelT := context.WithTimeout(ctx, limit)
	t.Cleanup(cancelT)
	b.Ctx = ctx
	return b
}

// listen records what the page of ctx asks of other hosts than b.URL's,
// and the errors it throws or logs (CheckOffline).
func (b *Browser) listen(ctx context.Context) error {
	origin, _ := url.Parse(b.URL)
	return chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			u, err := url.Parse(e.Request.URL)
			if err != nil || (u.Scheme != "data" && u.Scheme != "blob" && u.Host != origin.Host) {
				b.foreign = append(b.foreign, e.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			b.consoleErrors = append(b.consoleErrors, e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				b.consoleErrors = append(b.consoleErrors, strings.Join(parts, " "))
			}
		}
	})
}

// On is the browser for a subtest: its failures are the subtest's.
func (b *Browser) On(t *testing.T) *Browser { return &Browser{T: t, Ctx: b.Ctx, URL: b.URL} }

// Step runs actions, failing the test with what they were for.
func (b *Browser) Step(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.T.Helper()
	if err := chromedp.Do(b.Ctx, actions...); err != nil {
		b.T.Fatalf("%s: %v", what, err)
	}
}

// Eval evaluates js on the page.
func (b *Browser) Eval(js string) string {
	b.T.Helper()
	v, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.T.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// Poll waits for js to be true on the page, for up to 20 s.
func (b *Browser) Poll(what, js string) {
	b.T.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := chromedp.Run(b.Ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil {
			return
		}
		// A navigation still under way replaces the page's JavaScript
		// context while the poll runs in the old one ("Cannot find
		// context with specified id"): poll again, in the new one.
		if lostContext(err) && time.Until(deadline) > 0 {
			time.Sleep(20 * time.Millisecond) // not a hot loop while the new context comes up
			continue
		}
		b.T.Fatalf("waiting for %s (%s): %v", what, js, err)
	}
}

// lostContext reports whether err is an evaluation whose page context went
// away under it.
func lostContext(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find context with specified id") || strings.Contains(s, "Execution context was destroyed") ||
		strings.Contains(s, "Inspected target navigated or closed")
}

// CheckOffline fails the test if the page asked another host for anything
// or logged an error.
func (b *Browser) CheckOffline() {
	b.T.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.foreign) > 0 {
		b.T.Errorf("the page made requests to other hosts: %v", b.foreign)
	}
	if len(b.consoleErrors) > 0 {
		b.T.Errorf("console errors: %v", b.consoleErrors)
	}
}

// SkipWithoutChromium skips a browser test in -short mode or where
// Chromium is not installed.
func SkipWithoutChromium(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	if FindChromium() == "" {
		t.Skip("chromium not found (install it with `apt-get install -y chromium`; .ci/run does): browser test skipped")
	}
}

// StartChromium starts a headless Chromium with its own profile, a window
// of width×height, and returns its context (skipping the test where it
// cannot run); it ends with the test. Pages of their own (a room's
// laptops) are new contexts of it (roomBrowser).
func StartChromium(t testing.TB, width, height int) context.Context {
	t.Helper()
	SkipWithoutChromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(FindChromium()),
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	return bctx
}

// FindChromium is the path of a Chromium, or "".
func FindChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Laptops are n browser contexts (their own cookies, as n laptops) in one
// new Chromium at 1440×1000, on base, each for 90 s.
func Laptops(t *testing.T, base string, n int) []*Browser {
	t.Helper()
	bctx := StartChromium(t, 1440, 1000)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	out := make([]*Browser, n)
	for i := range out {
		out[i] = Tab(t, bctx, base, 90*time.Second)
	}
	return out
}

// StartWorkshop is a room started as an instructor starts one: teacher
// opens the free lab, presses "Start a workshop" and gets the instructor
// page with its charts; its answer is the room's code. Each of pupils
// then joins at /r/CODE and has the room's charts.
func StartWorkshop(teacher *Browser, pupils ...*Browser) (code string) {
	teacher.Step("open the free lab", chromedp.Navigate(teacher.URL+"/lab"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	teacher.Step("start a workshop", chromedp.Click(chromedp.CSS("#btn-start-room")))
	teacher.Step("the instructor page", chromedp.WaitVisible(chromedp.CSS("#room-bar.present")), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	code = teacher.Eval(`document.querySelector('#room-bar .room-code').textContent`)
	for _, p := range pupils {
		p.Step("join the room", chromedp.Navigate(p.URL+"/r/"+code), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	}
	return code
}

// Shot saves a screenshot of b's whole page in the temporary directory,
// where people can look at it after the run.
func Shot(t *testing.T, b *Browser, name string) {
	png, err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	p := filepath.Join(os.TempDir(), name)
	if err := os.WriteFile(p, png, 0o644); err == nil {
		t.Logf("screenshot: %s", p)
	}
}

// OpenPage sets the viewport and loads a page, waiting for its charts when it
// has a lab (and for the stream's first redraw, which fills them).
func OpenPage(b *Browser, w, h int, path string) {
	b.T.Helper()
	b.Step("viewport", chromedp.EmulateViewport(int64(w), int64(h)))
	b.Step("open "+path, chromedp.Navigate(b.URL+path))
	if strings.HasPrefix(path, "/lab") || strings.HasPrefix(path, "/lessons/") {
		b.Poll("the charts of "+path, `(() => { const el = document.getElementById('chart-sr');
			const c = el && window.echarts && echarts.getInstanceByDom(el); return !!c && c.getOption().series.length > 0 })()`)
	}
}

// LayoutProblems is what is wrong with the page's layout, one line each:
// a page wider than the window, the transport's Play button or every
// chart outside the first screen (on a page with a lab), text that
// overflows its box.
const LayoutProblems = `(() => {
	const out = [];
	const de = document.documentElement;
	if (de.scrollWidth > innerWidth) out.push('the page scrolls sideways: scrollWidth ' + de.scrollWidth + ' > ' + innerWidth);
	const inView = (el) => { const r = el.getBoundingClientRect();
		return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight + 0.5 && r.right <= innerWidth + 0.5; };
	if (document.getElementById('lab')) {
		// A view without the transport (a room's projector, a recording's
		// own) has no Play to show.
		const play = document.getElementById('btn-play');
		if (play.closest('.transport').checkVisibility() && !inView(play)) out.push('Play is not in the first screen: ' + JSON.stringify(play.getBoundingClientRect()));
		const canvases = [...document.querySelectorAll('.chart canvas')];
		if (!canvases.some(inView)) out.push('no chart is wholly in the first screen: ' + canvases.map(c => Math.round(c.getBoundingClientRect().top) + '–' + Math.round(c.getBoundingClientRect().bottom)).join(', '));
	}
	const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '');
	for (const el of document.querySelectorAll('body *')) {
		if (['SELECT', 'OPTION', 'INPUT', 'TEXTAREA', 'CANVAS', 'SCRIPT', 'STYLE', 'svg'].includes(el.tagName)) continue;
		if (!el.checkVisibility() || el.closest('.sr-only, [hidden], .chart') || el.getBoundingClientRect().width <= 1) continue;
		const cs = getComputedStyle(el);
		if (cs.display === 'inline' || cs.display === 'contents' || cs.overflowX === 'auto' || cs.overflowX === 'scroll') continue;
		if (!el.textContent.trim()) continue;
		if (el.scrollWidth > el.clientWidth + 1) out.push('text overflows ' + name(el) + ' (' + el.scrollWidth + ' > ' + el.clientWidth + '): ' + el.textContent.trim().slice(0, 60));
	}
	return out.join('\n');
})()`

// OverlapProblems is JavaScript that lists, one line each, the pairs of
// visible boxes matched by selectors (CSS; a selector may match several
// boxes, each its own) that overlap by more than a pixel, and the boxes
// whose content overflows them downwards (text drawn over what is under
// the box): what a page that lays parts side by side must never do.
func OverlapProblems(selectors ...string) string {
	q, _ := json.Marshal(selectors)
	return `(() => {
	const out = [], boxes = [];
	const fmt = (r) => [r.left, r.top, r.right, r.bottom].map(Math.round).join(',');
	const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '');
	for (const sel of ` + string(q) + `) for (const el of document.querySelectorAll(sel)) {
		if (!el.checkVisibility() || boxes.some(b => b.el === el)) continue;
		const r = el.getBoundingClientRect();
		if (r.width <= 0 || r.height <= 0) continue;
		boxes.push({el, r});
		if (el.scrollHeight > el.clientHeight + 1 && getComputedStyle(el).overflowY === 'visible') out.push(name(el) + ' overflows its box downwards: ' + el.scrollHeight + ' > ' + el.clientHeight);
	}
	for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
		const a = boxes[i], b = boxes[j];
		if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
		if (a.r.left < b.r.right - 1 && b.r.left < a.r.right - 1 && a.r.top < b.r.bottom - 1 && b.r.top < a.r.bottom - 1)
			out.push(name(a.el) + ' ' + fmt(a.r) + ' overlaps ' + name(b.el) + ' ' + fmt(b.r));
	}
	return out.join('\n');
})()`
}

// AxeSource is axe-core's script from node_modules (package.json's
// devDependencies, installed by `make assets`): the test injects it; the
// lab never serves it.
func AxeSource(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(moduleRoot(t), "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core: %v (run `make assets` or `npm ci` at the repository's root)", err)
	}
	return string(src)
}

// AxeViolations runs axe-core on the page (once injected it stays until
// the next navigation) and returns one line per violation: its rule,
// impact and the elements it names.
func AxeViolations(b *Browser, axe string) []string {
	b.T.Helper()
	if b.Eval(`typeof window.axe`) != "object" {
		if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[any](axe+";0")); err != nil {
			b.T.Fatalf("inject axe-core: %v", err)
		}
	}
	got, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ['violations']}).then(r =>
		JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map(n => n.target.join(' '))}))))`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.T.Fatalf("axe.run: %v", err)
	}
	var vs []struct {
		ID, Impact, Help string
		Targets          []string
	}
	if err := json.Unmarshal([]byte(got), &vs); err != nil {
		b.T.Fatalf("axe's answer %q: %v", got, err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("axe %s (%s): %s: %s", v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", ")))
	}
	return out
}

// SmallText lists visible text set under 12 px.
const SmallText = `(() => {
	const out = new Set();
	const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = walker.nextNode(); n; n = walker.nextNode()) {
		const el = n.parentElement;
		if (!n.textContent.trim() || !el || !el.checkVisibility() || el.closest('.sr-only, [hidden], script, style, noscript')) continue;
		const px = parseFloat(getComputedStyle(el).fontSize);
		if (px < 12) out.add('text under 12 px (' + px + ' px): ' + el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '') + ' "' + n.textContent.trim().slice(0, 30) + '"');
	}
	const min = (o) => [...(o.xAxis || []), ...(o.yAxis || [])].map(a => a.axisLabel.fontSize).concat((o.legend || []).filter(l => l.show !== false).map(l => l.textStyle.fontSize));
	for (const el of document.querySelectorAll('.chart')) {
		const c = echarts.getInstanceByDom(el);
		const small = c ? min(c.getOption()).filter(s => !(s >= 12)) : [];
		if (small.length) out.add(el.id + ': chart text under 12 px: ' + small.join(','));
	}
	return [...out].join('\n');
})()`

// moduleRoot is the repository's root: the nearest directory above the
// test's own with a go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}
