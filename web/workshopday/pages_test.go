package workshopday_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
)

// A page is one person's browser tab on the room: its role (present,
// projector, follow), its viewport, and what its streams did (seen on
// the network: a stream that ended is one the page had to reopen).
type page struct {
	name, role string
	w, h       int
	ctx        context.Context

	mu     sync.Mutex
	open   map[network.RequestID]bool // its /lab/stream requests not ended
	opened int
	ended  []string // each ended stream: when, and how ("finished" or the error)
	since  int      // ended streams before the room the page is on now
	// loads is the documents the tab had loaded when it joined the room:
	// from then on every scene shows without a load.
	loads int
}

// reconnectingJS is true while the page shows a person that it is
// reconnecting its stream: a visible line that says "Reconnecting" (the
// lab's .conn-status, shown while #stream's data-conn is "reconnecting"
// or "stale"; any status region). This is the one place to change when
// that markup changes.
const reconnectingJS = `[...document.querySelectorAll('.conn-status, [data-conn], [role=status]')].some(e => e.checkVisibility() && /reconnecting/i.test(e.textContent))`

// pageLib is put in every document the pages load (before the page's own
// scripts; the page's content security policy does not apply to it):
// __wd.snap() is what the page shows a person, __wd.diff(want) how that
// differs from what the test wants (one line per difference, "" when
// none), and a watch that counts each time the page starts showing that
// it is reconnecting (in sessionStorage: a page that navigates itself
// keeps its count).
const pageLib = `(() => {
const norm = (s) => s == null ? null : s.replace(/\s+/g, ' ').trim();
const txt = (sel) => { const e = document.querySelector(sel); return e ? norm(e.textContent) : null; };
const reconnecting = () => ` + reconnectingJS + `;
// Each document the tab loads is counted: a scene is shown without one.
sessionStorage.setItem('wdLoads', String(+(sessionStorage.getItem('wdLoads') || 0) + 1));
window.__wd = {
	snap() {
		const controls = {};
		for (const el of document.querySelectorAll('#controls [id^="c-"]')) {
			controls[el.id.slice(2)] = el.type === 'checkbox' ? (el.checked ? '1' : '0') : el.value;
		}
		const qtext = norm((document.querySelector('#room-question') || {}).textContent || '');
		const total = /(\d+) answered\. The engine says/.exec(qtext);
		const preset = txt('#scenario-name') ?? ((document.getElementById('preset') || {}).value ?? null);
		return {
			path: location.pathname, visibility: document.visibilityState,
			scene: txt('#room-scene-title'), sceneN: txt('.room-scene-n'),
			lesson: txt('#lesson-title'), preset, controls,
			time: txt('#status .clock b'), state: txt('#status .state'),
			sceneQuestion: txt('#room-scene-question'),
			question: txt('#room-question .room-q-text'), revealed: !!document.querySelector('#room-question .room-hist'),
			total: total ? total[1] : null, answer: txt('#room-question .room-q-answer'),
			count: txt('#room-q-count'), mine: txt('#room-question .room-q-mine b'),
			yaml: txt('#yaml-text'),
			reconnecting: reconnecting(),
			loads: +(sessionStorage.getItem('wdLoads') || 0),
		};
	},
	diff(want) {
		const s = this.snap(), out = [];
		const q = (v) => v === null || v === undefined ? 'nothing' : JSON.stringify(v);
		const eq = (field, got, exp) => { if (got !== exp) out.push(field + ': saw ' + q(got) + ', want ' + q(exp)); };
		for (const f of ['scene', 'sceneN', 'preset', 'time', 'state', 'count', 'mine']) if (want[f] !== undefined) eq(f, s[f], want[f]);
		// "" wants none shown.
		for (const f of ['lesson', 'sceneQuestion']) if (want[f] !== undefined) eq(f, s[f], want[f] === '' ? null : want[f]);
		for (const [name, v] of Object.entries(want.controls || {})) {
			const got = s.controls[name];
			if (got === undefined) continue; // not a control this page shows
			// A slider holds its value to its step (a third is 0.33).
			const step = parseFloat((document.getElementById('c-' + name) || {}).step) || 0;
			const ok = v.str !== undefined ? got === v.str : Math.abs(parseFloat(got) - v.num) <= Math.max(1e-9, step / 2);
			if (!ok) out.push('control ' + name + ': saw ' + q(got) + ', want ' + q(v.str ?? v.num));
		}
		if (want.qOpen !== undefined) {
			eq('question', s.question, want.qOpen);
			if (s.revealed) out.push('question: saw it revealed, want it open');
		}
		if (want.qNotOther !== undefined && s.question !== null && s.question !== want.qNotOther) {
			out.push('question: saw ' + q(s.question) + (s.revealed ? ' (revealed)' : '') + ', want ' + (want.qNotOther ? q(want.qNotOther) + ' or none' : "none (this scene's question is not asked)"));
		}
		if (want.qRevealed !== undefined) {
			eq('question', s.question, want.qRevealed.text);
			if (!s.revealed) out.push('question: saw it not revealed, want the histogram');
			eq('answered', s.total, want.qRevealed.total);
			eq("engine's answer", s.answer, want.qRevealed.answer);
		}
		if (want.yaml !== undefined && !new RegExp(want.yaml).test(s.yaml || '')) {
			const y = s.yaml || '', at = Math.max(0, y.indexOf(want.yaml.split(':')[0]));
			out.push('YAML: saw ' + q(y.slice(at, at + 40)) + ', want /' + want.yaml + '/');
		}
		if (want.notReconnecting && s.reconnecting) out.push('still shows that it is reconnecting');
		if (want.loads !== undefined && s.loads !== want.loads) out.push('loaded the page again (' + s.loads + ' loads since the tab opened, ' + want.loads + ' when it joined): a scene is shown in place');
		if (out.length) out.unshift('(on ' + location.pathname + (document.readyState === 'complete' ? '' : ', ' + document.readyState) + ')');
		return out.join('\n');
	},
};
let on = false;
setInterval(() => {
	const now = reconnecting();
	if (now && !on) sessionStorage.setItem('wdReconnecting', String(+(sessionStorage.getItem('wdReconnecting') || 0) + 1));
	on = now;
}, 50);
})()`

// want is what a page should show (pageLib's diff); an empty field is
// not checked.
type want struct {
	Scene         string              `json:"scene,omitempty"`
	SceneN        string              `json:"sceneN,omitempty"`
	Lesson        *string             `json:"lesson,omitempty"` // "": no lesson's title
	Preset        string              `json:"preset,omitempty"`
	Controls      map[string]ctlValue `json:"controls,omitempty"`
	Time          string              `json:"time,omitempty"`
	State         string              `json:"state,omitempty"`
	SceneQuestion *string             `json:"sceneQuestion,omitempty"` // "": none
	QOpen         string              `json:"qOpen,omitempty"`
	QNotOther     *string             `json:"qNotOther,omitempty"` // a question shown must be this one ("": none)
	QRevealed     *revealed           `json:"qRevealed,omitempty"`
	Count         string              `json:"count,omitempty"`
	Mine          string              `json:"mine,omitempty"`
	Loads         *int                `json:"loads,omitempty"` // the documents the tab has loaded (no reload)
	YAML          string              `json:"yaml,omitempty"`  // a JavaScript regular expression
	NotReconnect  bool                `json:"notReconnecting,omitempty"`
}

type ctlValue struct {
	Num *float64 `json:"num,omitempty"`
	Str *string  `json:"str,omitempty"`
}

type revealed struct {
	Text   string `json:"text"`
	Total  string `json:"total"`
	Answer string `json:"answer"`
}

func ptr[T any](v T) *T { return &v }

// people are the browsers of a day: one Chromium per group of people
// (the instructor's two tabs share one browser context, so its key
// cookie; the projector; the attendees, each a browser context of its
// own), each page with its viewport.
type people struct {
	instructor, instructor2, projector *page
	attendees                          []*page
}

func (ps *people) all() []*page {
	return append([]*page{ps.instructor, ps.instructor2, ps.projector}, ps.attendees...)
}

// startPeople starts the browsers and their pages (blank), for up to limit.
func startPeople(t *testing.T, limit time.Duration) *people {
	t.Helper()
	teacherB := startBrowser(t, 1280, 720)
	projB := startBrowser(t, 853, 480)
	classB := startBrowser(t, 1280, 720)
	ps := &people{}
	ps.instructor = newPage(t, teacherB, "instructor", "present", 1280, 720, limit, true)
	// A second tab of the same browser context (chromedp inherits the
	// parent tab's): it shares the instructor's cookies.
	ps.instructor2 = newPage(t, ps.instructor.ctx, "instructor-tab-2", "present", 1280, 720, limit, false)
	ps.projector = newPage(t, projB, "projector", "projector", 853, 480, limit, true)
	for i := range 3 {
		ps.attendees = append(ps.attendees, newPage(t, classB, fmt.Sprintf("phone-%d", i+1), "follow", 390, 844, limit, true))
	}
	ps.attendees = append(ps.attendees, newPage(t, classB, "laptop", "follow", 1280, 720, limit, true))
	return ps
}

// startBrowser is a headless Chromium of its own, started.
func startBrowser(t *testing.T, w, h int) context.Context {
	t.Helper()
	bctx := browsertest.StartChromium(t, w, h)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// newPage opens a tab in parent's browser (in a browser context of its
// own with ownCookies, else in parent's), with its viewport, the page
// library, and a watch on its streams.
func newPage(t *testing.T, parent context.Context, name, role string, w, h int, limit time.Duration, ownCookies bool) *page {
	t.Helper()
	var opts []chromedp.ContextOption
	if ownCookies {
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	tctx, cancel := chromedp.NewContext(parent, opts...)
	t.Cleanup(cancel)
	p := &page{name: name, role: role, w: w, h: h, open: map[network.RequestID]bool{}}
	if err := chromedp.Do(tctx,
		chromedp.EmulateViewport(int64(w), int64(h)),
		func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: pageLib})
			return chromedp.Void{}, err
		}); err != nil {
		t.Fatalf("%s: open a tab: %v", name, err)
	}
	if err := chromedp.Listen(tctx, p.onEvent); err != nil {
		t.Fatalf("%s: listen: %v", name, err)
	}
	ctx, cancelT := context.WithTimeout(tctx, limit)
	t.Cleanup(cancelT)
	p.ctx = ctx
	return p
}

// onEvent follows the page's /lab/stream requests.
func (p *page) onEvent(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Type == network.ResourceTypeDocument {
			// A new document: the old one's streams go with it (the
			// page navigated, nothing cut them).
			clear(p.open)
		}
		if e.Request != nil && strings.Contains(e.Request.URL, "/lab/stream") {
			p.open[e.RequestID] = true
			p.opened++
		}
	case *network.EventLoadingFinished:
		if p.open[e.RequestID] {
			delete(p.open, e.RequestID)
			p.ended = append(p.ended, time.Now().Format("15:04:05.000")+" finished (a clean end)")
		}
	case *network.EventLoadingFailed:
		if p.open[e.RequestID] {
			delete(p.open, e.RequestID)
			p.ended = append(p.ended, time.Now().Format("15:04:05.000")+" failed: "+e.ErrorText)
		}
	}
}

// streams is how many streams the page opened, how many ended, and how
// the last few ended (in the room the page is on).
func (p *page) streams() (opened, ended int, how []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.opened, len(p.ended), slices.Clone(p.ended[max(p.since, len(p.ended)-2):])
}

// newRoom starts the page's stream report afresh (a room opened).
func (p *page) newRoom() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.since = len(p.ended)
}

// streamNote is the page's streams in a few words, for a failure.
func (p *page) streamNote() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	note := "no stream open"
	if len(p.open) > 0 {
		note = fmt.Sprintf("%d stream open", len(p.open))
	}
	if n := len(p.ended) - p.since; n > 0 {
		note += fmt.Sprintf(", %d ended in this room, the last %s", n, p.ended[len(p.ended)-1])
	}
	return note
}

func (p *page) String() string { return fmt.Sprintf("%s (%s, %d×%d)", p.name, p.role, p.w, p.h) }

// navigate loads path (the test opens each page once per room: no reload
// after that), for up to loadWithin.
func (p *page) navigate(base, path string) error {
	ctx, cancel := context.WithTimeout(p.ctx, loadWithin)
	defer cancel()
	return chromedp.Do(ctx, chromedp.Navigate(base+path))
}

// eval evaluates js on the page, again in the new document when the
// page navigated itself under it.
func eval[T any](p *page, js string) (T, error) {
	for i := 0; ; i++ {
		v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
		if err == nil || !lostContext(err) || i == 20 {
			return v, err
		}
		if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](`document.readyState !== 'loading'`, chromedp.WithPollingTimeout(2*time.Second))); err != nil && !lostContext(err) {
			return v, err
		}
	}
}

// poll waits for js to be truthy on the page for up to within (again in
// the new document when the page navigates under it), and returns it.
func poll[T any](p *page, js string, within time.Duration) (T, error) {
	deadline := time.Now().Add(within)
	for {
		v, err := chromedp.Run(p.ctx, chromedp.Poll[T](js, chromedp.WithPollingTimeout(time.Until(deadline)), chromedp.WithPollingInterval(50*time.Millisecond)))
		if err == nil || !lostContext(err) || time.Until(deadline) <= 0 {
			return v, err
		}
	}
}

// lostContext is an evaluation whose document went away under it.
func lostContext(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find context with specified id") || strings.Contains(s, "Execution context was destroyed") ||
		strings.Contains(s, "Inspected target navigated or closed")
}

// shows waits until the page shows w, for up to the deadline; else it
// returns what differs, with what the page's streams did.
func (p *page) shows(w want, deadline time.Time) error {
	js, _ := json.Marshal(w)
	pred := `window.__wd && __wd.diff(` + string(js) + `) === ''`
	for {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		_, err := chromedp.Run(p.ctx, chromedp.Poll[bool](pred, chromedp.WithPollingTimeout(left), chromedp.WithPollingInterval(50*time.Millisecond)))
		if err == nil {
			return nil
		}
		if !lostContext(err) {
			break
		}
	}
	diff, err := eval[string](p, `window.__wd ? __wd.diff(`+string(js)+`) : 'the page has no __wd (not loaded?)'`)
	if err != nil {
		diff = "cannot read the page: " + err.Error()
	}
	if diff == "" {
		return nil // it came as the poll timed out
	}
	return fmt.Errorf("%s", diff)
}

// snap is what the page shows now, for a log line.
func (p *page) snap() string {
	s, err := eval[string](p, `JSON.stringify(window.__wd ? __wd.snap() : {})`)
	if err != nil {
		return err.Error()
	}
	return s
}

// reconnectings is how many times the page has started showing that it
// reconnects (pageLib's watch).
func (p *page) reconnectings() int {
	n, err := eval[float64](p, `+(sessionStorage.getItem('wdReconnecting') || 0)`)
	if err != nil {
		return -1
	}
	return int(n)
}

// click clicks the element sel as a person does (the pointer, the
// element scrolled into view).
func (p *page) click(sel string) error {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	return chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
}

// shot saves a screenshot of what the page's viewport shows.
func (p *page) shot(t *testing.T, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot of %s: %v", p, err)
		return
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
		return
	}
	t.Logf("screenshot of %s: %s", p, path)
}

// failure is a check that failed on some pages, the same way on each.
type failure struct {
	pages []string
	diff  string
}

// checkPages waits until every page shows what wantFor says (a page it
// gives ok false is not checked), each for up to within from start, all
// at once; it reports each way pages failed once, naming them.
func checkPages(t *testing.T, what string, pages []*page, start time.Time, within time.Duration, wantFor func(*page) (want, bool)) bool {
	t.Helper()
	// The target (within) is what a person sees on a machine with a core
	// to spare; a loaded one (CI's other packages under -race, the
	// Chromium of seven pages) gets the target scaled by its load per
	// core, and a page slower than the target but within that is logged
	// with the load, not failed: a time is a figure to report, a page
	// that never follows is the failure.
	target, load := within, loadPerCore()
	within = time.Duration(float64(within) * max(1, min(load, 10)))
	deadline := start.Add(within)
	var mu sync.Mutex
	byDiff := map[string]*failure{}
	var slowest time.Duration
	var wg sync.WaitGroup
	for _, p := range pages {
		w, ok := wantFor(p)
		if !ok {
			continue
		}
		wg.Go(func() {
			err := p.shows(w, deadline)
			if err == nil {
				mu.Lock()
				slowest = max(slowest, time.Since(start))
				mu.Unlock()
				return
			}
			diff := err.Error()
			mu.Lock()
			defer mu.Unlock()
			if byDiff[diff] == nil {
				byDiff[diff] = &failure{diff: diff}
			}
			byDiff[diff].pages = append(byDiff[diff].pages, fmt.Sprintf("%s [%s]", p, p.streamNote()))
		})
	}
	wg.Wait()
	if len(byDiff) == 0 {
		switch {
		case slowest > target:
			t.Logf("%s: every page within %v, over the %v target (machine load %.1f a core)", what, slowest.Round(time.Millisecond), target, load)
		case target >= reconnectWithin:
			t.Logf("%s: every page within %v", what, slowest.Round(time.Millisecond))
		}
		return true
	}
	var diffs []string
	for d := range byDiff {
		diffs = append(diffs, d)
	}
	sort.Strings(diffs)
	for _, d := range diffs {
		f := byDiff[d]
		sort.Strings(f.pages)
		t.Errorf("%s: not within %v on\n\t%s\n    it showed:\n\t%s", what, within, strings.Join(f.pages, "\n\t"), strings.ReplaceAll(d, "\n", "\n\t"))
	}
	return false
}

// each runs fn on every page at once and returns the errors, by page.
func each(pages []*page, fn func(*page) error) map[*page]error {
	var mu sync.Mutex
	out := map[*page]error{}
	var wg sync.WaitGroup
	for _, p := range pages {
		wg.Go(func() {
			if err := fn(p); err != nil {
				mu.Lock()
				out[p] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// loadPerCore is the machine's one-minute load average per core (1 where
// it cannot be read).
func loadPerCore() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 1
	}
	var l float64
	if _, err := fmt.Sscan(string(b), &l); err != nil {
		return 1
	}
	return l / float64(runtime.NumCPU())
}
