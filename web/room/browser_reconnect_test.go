package room

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/roombus"
)

// roundRobin is a proxy in front of replicas that sends each request to
// the next one, as nginx's default upstream does: no stickiness, a tab's
// page, stream and commands each land anywhere.
func roundRobin(t *testing.T, replicas ...*roomLab) *httptest.Server {
	t.Helper()
	var proxies []*httputil.ReverseProxy
	for _, l := range replicas {
		u, _ := url.Parse(l.TS.URL)
		p := httputil.NewSingleHostReverseProxy(u)
		p.FlushInterval = -1 // streams pass each event at once
		proxies = append(proxies, p)
	}
	var n atomic.Uint64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxies[n.Add(1)%uint64(len(proxies))].ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts
}

// TestBrowserRoomAcrossReplicas (issue 33): a plan's room through a
// round-robin proxy over two replicas, as a person runs it. The
// instructor's Next, the attendee's and a second instructor tab's pages,
// and the projector follow every scene, the ones on another lesson
// included (4 → 5 → 6 of lightning: cap, panic, cap), with no reload of
// their own; the instructor's slider reaches the attendee whichever
// replica the command lands on; and when the replica that holds a page's
// stream shuts down, the page says it is reconnecting and follows again
// by itself.
func TestBrowserRoomAcrossReplicas(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	la := startRoomLab(t, roombus.BusOptions{Listen: "127.0.0.1:0"}, Limits{})
	lb := startRoomLab(t, la.Bus.Replica(), Limits{})
	proxy := roundRobin(t, la, lb)
	bctx := browsertest.StartChromium(t, 1280, 800)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	teacher, pupil, wall := browsertest.Tab(t, bctx, proxy.URL, 4*time.Minute), browsertest.Tab(t, bctx, proxy.URL, 4*time.Minute), browsertest.Tab(t, bctx, proxy.URL, 4*time.Minute)
	const helpers = `
window.t_shown = sel => { const el = document.querySelector(sel); return !!el && getComputedStyle(el).display !== 'none'; };
window.t_slide = (id, v) => { const el = document.getElementById(id); el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); return 'ok'; };
window.t_conns = window.t_conns || [];
new MutationObserver(() => { const s = document.getElementById('stream'); if (s && t_conns[t_conns.length - 1] !== s.dataset.conn) t_conns.push(s.dataset.conn) })
	.observe(document.documentElement, {subtree: true, attributes: true, attributeFilter: ['data-conn']});
true`
	ready := func(b *browser, what string) {
		t.Helper()
		b.Step(what, chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
		if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](helpers)); err != nil {
			t.Fatalf("helpers: %v", err)
		}
		b.Poll(what+": its stream live", `document.getElementById('stream').dataset.conn === 'live'`)
	}

	teacher.Step("open the home page", chromedp.Navigate(teacher.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#room-start-from")))
	teacher.Step("pick the lightning plan", chromedp.SetValue(chromedp.CSS("#room-start-from"), "plan:lightning"))
	teacher.Step("start", chromedp.Click(chromedp.CSS("#btn-start-room")))
	teacher.Step("the instructor page", chromedp.WaitVisible(chromedp.CSS("#room-bar.present")))
	ready(teacher, "the instructor page")
	code := teacher.Eval(`document.querySelector('#room-bar .room-code').textContent`)
	pupil.Step("join", chromedp.Navigate(pupil.URL+"/r/"+code))
	ready(pupil, "the attendee's page")
	wall.Step("the projector", chromedp.Navigate(wall.URL+"/r/"+code+"/projector"))
	ready(wall, "the projector")
	// The second instructor tab: the teacher's browser (its key cookie),
	// another tab.
	sctx, closeSecond := chromedp.NewContext(teacher.Ctx)
	t.Cleanup(closeSecond)
	second := &browser{T: t, Ctx: sctx, URL: proxy.URL}
	second.Step("a second instructor tab", chromedp.Navigate(second.URL+"/r/"+code+"/present"))
	ready(second, "the second instructor tab")

	pages := map[string]*browser{"the instructor's": teacher, "the second instructor tab's": second, "the attendee's": pupil, "the projector's": wall}
	scene := func(title, lesson, scrub string) {
		t.Helper()
		start := time.Now()
		defer func() { t.Logf("%s: every page there after %v", title, time.Since(start).Round(time.Millisecond)) }()
		for name, b := range pages {
			// Self-contained: a page that loaded again would have lost the
			// helpers. The lesson is the one the lab shows (the projector
			// has no prose), not a signal.
			b.Poll(name+" page on "+title, `(() => { const $ = id => document.getElementById(id) || {dataset: {}};
				return $('room-scene-title').textContent === '`+title+`' && $('scrub').value === '`+scrub+`' &&
					($('lab').dataset.labLesson || 'lab') === '`+lesson+`' })()`)
		}
	}
	scene("One host fails a third of its searches", "cap", "3")

	// A slider on the instructor's page: its command lands on either
	// replica; the attendee and the second tab follow it each time.
	for _, v := range []string{"20", "34", "17"} {
		teacher.Eval(`t_slide('c-max_ejection_percent', '` + v + `')`)
		for name, b := range map[string]*browser{"the attendee's": pupil, "the second instructor tab's": second} {
			b.Poll(name+" cap at "+v, `document.getElementById('c-max_ejection_percent').value === '`+v+`'`)
		}
	}

	// The replica that holds the attendee's stream goes away (a rolling
	// restart): the page says so, then follows again by itself.
	holder := la
	if tab := pupil.Eval(`JSON.parse(document.getElementById('lab').dataset.signals).tab`); tab != "" {
		if sess := lb.S.lab.Sessions.Get(tab); sess != nil && sess.Streams() > 0 {
			holder = lb
		}
	}
	holder.S.lab.Shutdown()
	pupil.Poll("the attendee's page says it is reconnecting, then is live again", `t_conns.includes('reconnecting') && document.getElementById('stream').dataset.conn === 'live'`)

	// Every scene of the plan, two of them on another lesson.
	for _, s := range []struct{ title, lesson, scrub string }{
		{"The cap that ejects nothing", "cap", "4"},
		{"Raise the cap to 34", "cap", "3"},
		{"Out for 30 s, then 60, then 90", "cap", "6"},
		{"A burst, an 80% cap, and panic", "panic", "3"},
		{"Three settings to take home", "cap", "30"},
	} {
		teacher.Step("next", chromedp.Click(chromedp.CSS("#btn-scene-next")))
		scene(s.title, s.lesson, s.scrub)
	}
}
