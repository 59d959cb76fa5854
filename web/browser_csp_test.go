package web

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/roombus"
)

// htmlInjector stands for an escaping bug: it writes an inline script and
// an onerror handler into every HTML page the lab serves (streams pass
// through untouched).
type htmlInjector struct {
	http.ResponseWriter
	buf    bytes.Buffer
	html   bool
	status int
}

const injected = `<script>window.__pwned = 'inline script'</script><img src="/no-such-image" onerror="window.__pwned2 = 'onerror'">`

func (h *htmlInjector) WriteHeader(code int) {
	h.status = code
	h.html = strings.HasPrefix(h.Header().Get("Content-Type"), "text/html")
	if !h.html {
		h.ResponseWriter.WriteHeader(code)
	}
}

func (h *htmlInjector) Write(p []byte) (int, error) {
	if h.status == 0 {
		h.WriteHeader(http.StatusOK)
	}
	if h.html {
		return h.buf.Write(p)
	}
	return h.ResponseWriter.Write(p)
}

func (h *htmlInjector) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok && !h.html {
		f.Flush()
	}
}

func (h *htmlInjector) Unwrap() http.ResponseWriter { return h.ResponseWriter }

func (h *htmlInjector) finish() {
	if !h.html {
		return
	}
	page := strings.Replace(h.buf.String(), "<body>", "<body>"+injected, 1)
	h.Header().Del("Content-Length")
	h.ResponseWriter.WriteHeader(h.status)
	_, _ = h.ResponseWriter.Write([]byte(page))
}

func injectHTML(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Pages are gzipped when asked; the injection needs them plain.
		r.Header.Del("Accept-Encoding")
		iw := &htmlInjector{ResponseWriter: w}
		next.ServeHTTP(iw, r)
		iw.finish()
	})
}

// Issue 19, defect 10: the policy once allowed 'unsafe-inline' scripts, so
// escaping was the only defence. With markup injected into every page, no
// injected script or handler runs, and every page still works: the charts
// (drawn by the nonce-carrying scripts of the tab's stream) fill on the
// lab, a lesson, a room's attendee and instructor pages and the recording
// player; the pages without a lab render their forms.
func TestBrowserCSPInjection(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	bus, err := roombus.StartBus(roombus.BusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	s, err := New(Options{Bus: bus, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(injectHTML(s.Handler()))
	t.Cleanup(ts.Close)
	t.Cleanup(s.lab.Shutdown)
	l := &roomLab{S: s, TS: ts, Bus: bus}
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	if st, body := roomtest.Call(t, "POST", ts.URL+"/r/"+code+"/questions", `{"qkind":"out","qat":60}`, code, key, ""); st != 201 {
		t.Fatalf("question: %d %s", st, body)
	}
	b := browsertest.Laptops(t, ts.URL, 1)[0]
	charts := `(() => { const el = document.getElementById('chart-sr');
		const c = el && window.echarts && echarts.getInstanceByDom(el); return !!c && c.getOption().series.length > 0 })()`
	clean := func(path string) {
		t.Helper()
		if !strings.Contains(b.Eval(`document.body.innerHTML`), "__pwned") {
			t.Fatalf("%s: the injection is not in the page", path)
		}
		// The broken image's error has fired (or been refused) once the
		// image is complete.
		b.Poll(path+": the image settled", `document.querySelector('img[src="/no-such-image"]').complete`)
		if got := b.Eval(`JSON.stringify([window.__pwned || null, window.__pwned2 || null])`); got != "[null,null]" {
			t.Errorf("%s: injected code ran: %s", path, got)
		}
	}
	for _, p := range []struct{ path, works string }{
		{"/", `!!document.querySelector('.course-list a')`},
		{"/lab", charts},
		{"/lessons/cap", charts},
		{"/whatif", `!!document.querySelector('form textarea, form input[type=file]')`},
		{"/r/" + code, charts},
		{"/r/" + code + "/recording", charts},
	} {
		b.Step("open "+p.path, chromedp.Navigate(ts.URL+p.path))
		b.Poll(p.path+" working", p.works)
		clean(p.path)
	}
	// A workshop started from the lab's button: the form posts /rooms and
	// the instructor's page draws its charts.
	b.Step("open the lab", chromedp.Navigate(ts.URL+"/lab"))
	b.Poll("the lab's charts", charts)
	b.Step("start a workshop", chromedp.Click(chromedp.CSS("#btn-start-room")))
	b.Step("the instructor page", chromedp.WaitVisible(chromedp.CSS("#room-bar.present")))
	b.Poll("the instructor page", `/^\/r\/[2-9A-Z]{6}\/present$/.test(location.pathname) && `+charts)
	clean("the instructor page")
	// The instructor link (issue 22, item 5), by keyboard: focus its
	// summary, open it, the link and its Copy button show.
	b.Step("open the instructor link", chromedp.Focus(chromedp.CSS("#room-handover summary")), chromedp.KeyEvent("\r"))
	b.Poll("the instructor link shown", `document.getElementById('room-handover').open && /\/present\?key=./.test(document.getElementById('room-handover-link').textContent) && document.getElementById('room-handover-link').getBoundingClientRect().width > 0`)
	shot(t, b, "outlierlab-instructor-link.png")
	// On a phone the bar folds its less used tools (the instructor link
	// among them) behind "More tools", a button the keyboard opens; the
	// link (one long token) wraps instead of widening the page.
	b.Step("a phone's width", chromedp.EmulateViewport(390, 844))
	b.Poll("the instructor link folded at 390 px", `document.getElementById('room-handover-link').getBoundingClientRect().width === 0 &&
		document.querySelector('.room-more-toggle').getAttribute('aria-expanded') === 'false'`)
	b.Step("open More tools", chromedp.Focus(chromedp.CSS(".room-more-toggle")), chromedp.KeyEvent("\r"))
	b.Poll("the instructor link shown again", `document.querySelector('.room-more-toggle').getAttribute('aria-expanded') === 'true' &&
		document.getElementById('room-handover').open && document.getElementById('room-handover-link').getBoundingClientRect().width > 0`)
	b.Poll("no sideways scroll with the instructor link open at 390 px", `document.documentElement.scrollWidth <= innerWidth`)
	shot(t, b, "outlierlab-instructor-more-phone.png")
	b.Step("close More tools", chromedp.Focus(chromedp.CSS(".room-more-toggle")), chromedp.KeyEvent(" "))
	b.Poll("the instructor link folded again", `document.getElementById('room-handover-link').getBoundingClientRect().width === 0`)
	b.CheckOffline()
}
