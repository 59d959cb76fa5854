// Package webtest holds what the web packages' tests share: the tests'
// browser and its tabs, requests to a handler, a tab's event stream read
// as events, the chart options and patches those events carry, a log the
// test reads while the server writes it, a free port.
package webtest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"outlierlab/web/tabid"
	"outlierlab/web/tabstate"
)

// SyncBuffer is a buffer the server's log handler and the test share.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// FreePort is a free loopback port: free when asked, for a server the
// test starts a moment later (or for an address where nothing listens).
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Head is s cut to n bytes, marked when cut.
func Head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Servable is a server a test serves: its router, and what ends its
// streams (they never go idle by themselves).
type Servable interface {
	Handler() http.Handler
	Shutdown()
}

// Serve is s on a test HTTP server. When the test ends s's streams end
// first, then the server closes (cleanups run last first; a bus the test
// opened before is closed after both).
func Serve(t testing.TB, s Servable) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(s.Shutdown)
	return ts
}

// JSON is v as JSON (the test fails if it cannot be).
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// SameJSON reports whether a and b hold the same JSON value.
func SameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}

// Browser is the tests' browser: its identity cookie (web/tabid) goes with every
// request these helpers send, and the tabs the tests name are issued for
// it (TabOf), as a page of the lab issues its tab's id for the browser
// that loads it. A request without it, or another browser's, is refused.
const Browser = "0123456789abcdef0123456789abcdef"

// Tab is the tests' tab, issued for Browser.
var Tab = TabOf("0123456789abcdef0123")

// TabOf is the tab id of nonce (16–32 letters, digits, - or _) issued for
// Browser.
func TabOf(nonce string) string { return tabid.For(Browser, nonce) }

// BrowserCookie is Browser's identity cookie.
func BrowserCookie() *http.Cookie { return &http.Cookie{Name: tabid.Cookie, Value: Browser} }

// Client is an HTTP client with a cookie jar, as a browser: the identity
// cookie a page sets (and a room's) goes with its next requests, so the
// tab id a test reads from a page is served to it.
func Client(t testing.TB) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

// Get is http.Get with the tests' browser's cookie: a page it gets issues
// its tab's id for that browser, which the other helpers here are.
func Get(url string) (*http.Response, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.AddCookie(BrowserCookie())
	return http.DefaultClient.Do(req)
}

// Post is http.Post of a JSON body with the tests' browser's cookie, as
// a page's @post sends it.
func Post(url, body string) (*http.Response, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(BrowserCookie())
	return http.DefaultClient.Do(req)
}

// PostCommand sends one command for the test tab to a running test server
// and requires the 204 every accepted command answers.
func PostCommand(t *testing.T, base, verb, rest string) {
	t.Helper()
	res, err := Post(base+"/lab/cmd/"+verb, `{"tab":"`+Tab+`"`+rest+`}`)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("%s: status %d", verb, res.StatusCode)
	}
}

// Do sends one request to the router and returns the response; the
// tests' browser's cookie goes with it unless header sets a Cookie.
func Do(t *testing.T, h http.Handler, method, target, body string, header ...string) *http.Response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	req.AddCookie(BrowserCookie())
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func Body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Event is one server-sent event: its type and its data lines joined.
type Event struct {
	Type, Data string
}

// ReadEvents parses a stream into events until it ends.
func ReadEvents(r io.Reader, out chan<- Event) {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var ev Event
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Type != "" {
				ev.Data = strings.Join(data, "\n")
				out <- ev
			}
			ev, data = Event{}, nil
		case strings.HasPrefix(line, "event: "):
			ev.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		}
	}
}

// StreamRequest is a tab's stream request, as a page sends it: a POST of
// the page's signals to path (/lab/stream, a recording's player's) at
// base, with the tests' browser's cookie (and cookies, if any).
func StreamRequest(ctx context.Context, base, path, signals string, cookies ...*http.Cookie) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(signals))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Datastar-Request", "true")
	if !slices.ContainsFunc(cookies, func(c *http.Cookie) bool { return c.Name == tabid.Cookie }) {
		req.AddCookie(BrowserCookie())
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return req
}

// OpenStream opens a tab's stream on a test server and returns its events;
// the stream ends with the test.
func OpenStream(t *testing.T, base, signals string) <-chan Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return OpenStreamContext(ctx, t, base, signals)
}

// OpenStreamContext is OpenStream until ctx ends.
func OpenStreamContext(ctx context.Context, t *testing.T, base, signals string) <-chan Event {
	t.Helper()
	req := StreamRequest(ctx, base, "/lab/stream", signals)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultTransport.RoundTrip(req) // raw: no transparent gunzip, so we see what a browser gets
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: status %d, type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	body := io.Reader(res.Body)
	if res.Header.Get("Content-Encoding") == "gzip" {
		body = gunzipStream(t, res.Body)
	}
	events := make(chan Event, 256)
	go ReadEvents(body, events)
	return events
}

// NextCharts waits for the next chart update and returns every chart's
// whole option after it: an applyCharts call's own, or an advanceCharts
// patch applied (as js/chart.js does) to the options this stream sent before.
func NextCharts(t *testing.T, events <-chan Event) (map[string]json.RawMessage, []Event) {
	t.Helper()
	var seen []Event
	held := chartsHeld(events)
	WaitFor(t, events, "chart update", func(ev Event) bool {
		seen = append(seen, ev)
		return HoldCharts(t, held, ev.Data)
	})
	chartsSeen.Store(events, held)
	return held, seen
}

// HoldCharts brings held, every chart's option as a page holds it, past
// an event's data, and reports whether the event held charts: an
// applyCharts call (one that replaces drops what was held first) or an
// advanceCharts patch, as js/chart.js applies them.
func HoldCharts(t *testing.T, held map[string]json.RawMessage, data string) bool {
	t.Helper()
	if call, ok := ParseApplyCharts(t, data); ok {
		if call.Replace {
			clear(held)
		}
		for id, o := range call.Options {
			held[id] = o
		}
		return true
	}
	if patches, ok := parseAdvanceCharts(t, data); ok {
		for id, p := range patches {
			held[id] = ApplyPatchJSON(t, held[id], p)
		}
		return true
	}
	return false
}

// chartsSeen is, by stream, the options its page holds.
var chartsSeen sync.Map

func chartsHeld(events <-chan Event) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	if v, ok := chartsSeen.Load(events); ok {
		for id, o := range v.(map[string]json.RawMessage) {
			out[id] = o
		}
	}
	return out
}

// parseAdvanceCharts reads the advanceCharts(patches) call in an event's
// data, if it holds one.
func parseAdvanceCharts(t *testing.T, data string) (map[string]json.RawMessage, bool) {
	t.Helper()
	i := strings.Index(data, "advanceCharts(")
	if i < 0 {
		return nil, false
	}
	js := data[i+len("advanceCharts("):]
	js = strings.TrimSuffix(js[:strings.LastIndex(js, "</script>")], ")")
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatalf("advanceCharts argument: %v\n%s", err, Head(js, 300))
	}
	return out, true
}

// ApplyPatchJSON is js/chart.js's patchValue in Go: the option held with a
// patch applied.
func ApplyPatchJSON(t *testing.T, held, patch json.RawMessage) json.RawMessage {
	t.Helper()
	var v, p any
	if len(held) > 0 {
		if err := json.Unmarshal(held, &v); err != nil {
			t.Fatal(err)
		}
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(patchValue(v, p.(map[string]any)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func patchValue(v any, p map[string]any) any {
	if set, ok := p["="]; ok {
		return set
	}
	if p["o"] != nil || p["d"] != nil {
		out := map[string]any{}
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				out[k] = x
			}
		}
		for k, q := range asMap(p["o"]) {
			out[k] = patchValue(out[k], q.(map[string]any))
		}
		for _, k := range asSlice(p["d"]) {
			delete(out, k.(string))
		}
		return out
	}
	out := append([]any(nil), asSlice(v)...)
	for k, q := range asMap(p["a"]) {
		i, _ := strconv.Atoi(k)
		out[i] = patchValue(out[i], q.(map[string]any))
	}
	return append(out, asSlice(p["p"])...)
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func asSlice(v any) []any { s, _ := v.([]any); return s }

// ApplyChartsCall is what one applyCharts call the stream sent says.
type ApplyChartsCall struct {
	Options map[string]json.RawMessage
	Replace bool
	Heights map[string]int
}

// ParseApplyCharts reads the applyCharts(options[, replace, heights]) call
// in an event's data, if it holds one.
func ParseApplyCharts(t *testing.T, data string) (ApplyChartsCall, bool) {
	t.Helper()
	var call ApplyChartsCall
	i := strings.Index(data, "applyCharts(")
	if i < 0 {
		return call, false
	}
	js := data[i+len("applyCharts("):]
	js = strings.TrimSuffix(js[:strings.LastIndex(js, "</script>")], ")")
	if j := strings.LastIndex(js, ",true,"); j >= 0 {
		call.Replace = true
		if err := json.Unmarshal([]byte(js[j+len(",true,"):]), &call.Heights); err != nil {
			t.Fatalf("applyCharts heights: %v\n%s", err, Head(js[j:], 300))
		}
		js = js[:j]
	}
	if err := json.Unmarshal([]byte(js), &call.Options); err != nil {
		t.Fatalf("applyCharts argument: %v\n%s", err, Head(js, 300))
	}
	return call, true
}

// SeriesLen is the length of a named series' data in a chart option.
func SeriesLen(t *testing.T, opt json.RawMessage, name string) int {
	t.Helper()
	for _, s := range Series(t, opt) {
		if s.Name == name {
			return s.Len
		}
	}
	t.Fatalf("no series %q", name)
	return 0
}

// SeriesLength is one series of a chart option: its name, its data's length.
type SeriesLength struct {
	Name string
	Len  int
}

// Series is every series of a chart option, in order.
func Series(t testing.TB, opt json.RawMessage) []SeriesLength {
	t.Helper()
	var o struct {
		Series []struct {
			Name string            `json:"name"`
			Data []json.RawMessage `json:"data"`
		} `json:"series"`
	}
	if err := json.Unmarshal(opt, &o); err != nil {
		t.Fatal(err)
	}
	out := make([]SeriesLength, len(o.Series))
	for i, s := range o.Series {
		out[i] = SeriesLength{s.Name, len(s.Data)}
	}
	return out
}

func JoinData(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.Data)
		b.WriteString("\n")
	}
	return b.String()
}

// gunzipStream reads a gzip-compressed stream as it arrives (the server
// flushes the compressor after every event).
func gunzipStream(t *testing.T, r io.Reader) io.Reader {
	t.Helper()
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatalf("gzip stream: %v", err)
	}
	return zr
}

// SettleHeap collects twice: sync.Pool keeps a victim cache through one
// collection, and pooled buffers must not count for or against a tab.
func SettleHeap() {
	runtime.GC()
	runtime.GC()
}

// WaitFor reads events until one satisfies ok, failing after 10 s.
func WaitFor(t testing.TB, events <-chan Event, what string, ok func(Event) bool) Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, open := <-events:
			if !open {
				t.Fatalf("stream ended while waiting for %s", what)
			}
			if ok(ev) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s within 10 s", what)
		}
	}
}

// BuildRun is in's run, or the test's end.
func BuildRun(t testing.TB, in tabstate.Inputs) *tabstate.Run {
	t.Helper()
	r, err := tabstate.BuildRun(in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// DefaultRun is the default preset's run, cut to its first frames (all of
// them for frames < 0): the run of the tests that need one and no more.
func DefaultRun(t testing.TB, frames int) *tabstate.Run {
	t.Helper()
	r := BuildRun(t, tabstate.Inputs{Preset: tabstate.DefaultPreset})
	if frames >= 0 && frames < len(r.Frames) {
		cp := *r
		cp.Frames = r.Frames[:frames]
		return &cp
	}
	return r
}
