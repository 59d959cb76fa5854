package lab

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"outlierlab/web/gzipstream"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// Issue 15, defect 1: sessions hold their inputs, not their runs. Sixty
// tabs with distinct settings against a cache bounded to a few runs leave
// no more runs alive than the cache holds, whatever the tabs sent.
func TestRunsBoundedByCache(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	s.Runs = tabstate.NewRunCacheBytes(64, 1) // one run at a time
	var refs []weak.Pointer[tabstate.Run]
	for i := range 60 {
		sig := &TabSignals{Tab: webtest.TabOf(fmt.Sprintf("tab-%016d", i)), Preset: "search-cache", Cfg: map[string]json.RawMessage{"max_ejection_percent": json.RawMessage(fmt.Sprint(i + 1))}}
		sess, err := s.SessionFor(sig, webtest.Browser, "", false)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, weak.Make(sess.runOf()))
	}
	runtime.GC()
	runtime.GC()
	alive := 0
	for _, r := range refs {
		if r.Value() != nil {
			alive++
		}
	}
	if alive > 2 || s.Sessions.len() != 60 {
		t.Fatalf("%d of 60 runs alive after GC (cache holds 1); %d sessions", alive, s.Sessions.len())
	}
	// A session whose run went is rebuilt on demand, the same frames.
	sess := s.Sessions.Get(webtest.TabOf("tab-0000000000000007"))
	if r := sess.runOf(); r.Config.MaxEjectionPercent != 8 || len(r.Frames) == 0 {
		t.Fatalf("rebuilt run: cap %d, %d frames", r.Config.MaxEjectionPercent, len(r.Frames))
	}
}

// New tabs and commands are rate-limited per address, with a 429 that
// says what was limited.
// The limits come from the server's options (serve's -tabs-per-minute and
// -commands-per-minute): 9 a minute is a burst of 3, 15 a burst of 5.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	s, err := newServer(LabOptions{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), TabsPerMinute: 9, CommandsPerMinute: 15})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	h := s.Handler()
	post := func(tab int) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/lab/cmd/step", strings.NewReader(fmt.Sprintf(`{"tab":%q}`, webtest.TabOf(fmt.Sprintf("tab-%016d", tab)))))
		req.RemoteAddr = "192.0.2.7:1234"
		req.Header.Set("Content-Type", "application/json")
		req.AddCookie(webtest.BrowserCookie())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	for i := range 3 {
		if w := post(i); w.Code != 204 {
			t.Fatalf("tab %d: %d %s", i, w.Code, w.Body)
		}
	}
	if w := post(3); w.Code != 429 || !strings.Contains(w.Body.String(), "too many new tabs") {
		t.Fatalf("4th new tab: %d %q", w.Code, w.Body)
	}
	post(0) // the 5th command
	if w := post(0); w.Code != 429 || !strings.Contains(w.Body.String(), "too many commands") || w.Header().Get("Retry-After") == "" {
		t.Fatalf("6th command: %d %q", w.Code, w.Body)
	}
}

// Defect 3: with more open tabs than the session cap, a command on any of
// them (the oldest first) reaches its stream.
func TestCommandsPastCapRedraw(t *testing.T) {
	t.Parallel()
	const max, tabs = 10, 110
	s, err := newServer(LabOptions{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxSessions: max})
	if err != nil {
		t.Fatal(err)
	}
	s.Sessions.grace = 0 // no grace: only streaming keeps a session
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	streams := make([]<-chan webtest.Event, tabs)
	for i := range tabs {
		streams[i] = webtest.OpenStream(t, ts.URL, fmt.Sprintf(`{"tab":%q,"preset":"search-cache"}`, webtest.TabOf(fmt.Sprintf("tab-%016d", i))))
		waitCursor(t, streams[i], 0)
	}
	for i := range tabs {
		res, err := webtest.Post(ts.URL+"/lab/cmd/scrub", fmt.Sprintf(`{"tab":%q,"cursor":17}`, webtest.TabOf(fmt.Sprintf("tab-%016d", i))))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 204 {
			t.Fatalf("tab %d: scrub %d", i, res.StatusCode)
		}
		waitCursor(t, streams[i], 17)
	}
}

// waitCursor waits for the stream to show cursor c.
func waitCursor(t *testing.T, events <-chan webtest.Event, c int) {
	t.Helper()
	want := fmt.Sprintf(`"cursor":%d`, c)
	webtest.WaitFor(t, events, want, func(ev webtest.Event) bool { return strings.Contains(ev.Data, want) })
}

// A command whose session cannot be kept (the server is far over its cap
// with streaming tabs) is not acknowledged: the answer reloads the page.
func TestLostSessionReloads(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	s.Sessions.max, s.Sessions.grace = 1, 0
	for i := range 2 {
		if _, err := s.SessionFor(&TabSignals{Tab: webtest.TabOf(fmt.Sprintf("tab-%016d", i))}, webtest.Browser, "", true); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest("POST", "/lab/cmd/step", strings.NewReader(`{"tab":"`+webtest.TabOf("tab-0000000000000009")+`"}`))
	req.AddCookie(webtest.BrowserCookie())
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "location.reload()") {
		t.Fatalf("lost command: %d %q", w.Code, w.Body)
	}
}

// Defect 4: an idle stream sends a comment every keepalive period, and
// tells nginx not to buffer it.
func TestStreamKeepalive(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	s.Sessions.keepalive = 50 * time.Millisecond
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := webtest.StreamRequest(ctx, ts.URL, "/lab/stream", `{"tab":"`+webtest.TabOf("tab-0000000000000001")+`"}`)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("X-Accel-Buffering %q", res.Header.Get("X-Accel-Buffering"))
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	for sc.Scan() && n < 2 {
		if sc.Text() == ": keepalive" {
			n++
		}
	}
	if n < 2 {
		t.Fatalf("%d keepalive comments: %v", n, sc.Err())
	}
}

// Defect 2: the stream's gzip is valid, each event decodable when it is
// flushed, and an idle stream keeps only its dictionary.
func TestStreamGzipValid(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Accept-Encoding", "br, gzip;q=0.9")
	w, done := gzipstream.Compress(rec, req)
	var want strings.Builder
	for i := range 200 {
		ev := fmt.Sprintf("event: x\ndata: frame %d %s\n\n", i, strings.Repeat("abc", i%50))
		want.WriteString(ev)
		if _, err := io.WriteString(w, ev); err != nil {
			t.Fatal(err)
		}
	}
	done()
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatal("not gzip")
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || string(got) != want.String() {
		t.Fatalf("round trip: %v, %d of %d bytes", err, len(got), want.Len())
	}
	if g := w.(*gzipstream.GzipStream); cap(g.Dict) > gzipstream.DictSize {
		t.Errorf("dictionary %d bytes", cap(g.Dict))
	}
	for _, ae := range []string{"", "identity", "gzip;q=0", "br"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", ae)
		if w, _ := gzipstream.Compress(httptest.NewRecorder(), r); w != http.ResponseWriter(nil) {
			if _, ok := w.(*gzipstream.GzipStream); ok {
				t.Errorf("%q: gzip", ae)
			}
		}
	}
}

// Defect 2's other half: a played frame on the wire is at most 1 KB once
// gzipped, for every preset. A frame sends the charts' patch from the last
// cursor (web/chart/chart_patch.go), so the tables it re-sends stay inside gzip's
// window and compress to their changes. (Sending each chart's whole option
// made search-cache's frames 36 KB raw, 2.9 KB gzipped.) The mean over a
// run is the bound; the largest frame (the one with the fault's burst of
// decisions) is logged.
func TestStreamFrameBytes(t *testing.T) {
	t.Parallel()
	for _, name := range tabstate.PresetNames() {
		t.Run(name, func(t *testing.T) {
			run, err := tabstate.BuildRun(tabstate.Inputs{Preset: name})
			if err != nil {
				t.Fatal(err)
			}
			p := playFrames(t, run, "gzip")
			t.Logf("per frame: %d B raw, %d B gzip (largest %d B)", p.rawPerFrame, p.perFrame, p.largest)
			if p.perFrame > 1024 {
				t.Errorf("per frame: %d B raw, %d B gzip, want ≤ 1024 B", p.rawPerFrame, p.perFrame)
			}
		})
	}
}
