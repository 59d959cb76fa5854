package web

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"outlierlab/web/clientaddr"
	"outlierlab/web/httperr"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/lab"
	"outlierlab/web/room"
	"outlierlab/web/roombus"
)

// Issue 19, defect 1: a question's moment of NaN once stored MinInt64
// milliseconds, and the next recording page overflowed the stack of the
// whole replica. Every non-finite or out-of-range moment is a 422 naming
// qat; the recording (and the replica) stay up; a spotlight range of NaN
// is a 422 naming its field, not a 500 from the JSON encoder.
func TestHostileNumbers(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, room.Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	for _, qat := range []string{`"NaN"`, `"nan"`, `"Inf"`, `"-Inf"`, `"+Infinity"`, `"1e999"`, `1e308`, `-1e308`, `"9223372036854775807"`, `"-0"`, `0`, `""`, `null`, `true`, `[]`, `{}`, `"0x10"`, `"60s"`} {
		st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions", `{"qkind":"out","qat":`+qat+`}`, code, key, "")
		if st != 422 || !strings.HasPrefix(body, "qat: ") || !strings.Contains(body, "allowed 1–3600 s") {
			t.Errorf("qat %s: %d %q, want 422 naming qat and its range", qat, st, body)
		}
	}
	for _, q := range []string{"from=NaN&to=60", "from=0&to=Inf", "from=-Inf&to=1", "from=1e999&to=2", "from=x&to=3"} {
		st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/spotlight?"+q, "", code, key, "")
		if st != 422 || !(strings.HasPrefix(body, "from: ") || strings.HasPrefix(body, "to: ")) {
			t.Errorf("spotlight %s: %d %q, want 422 naming the field", q, st, body)
		}
	}
	// A good question still opens, and the recording still renders.
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions", `{"qkind":"out","qat":"60"}`, code, key, ""); st != 201 {
		t.Fatalf("a good question: %d %s", st, body)
	}
	if st, body := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/recording", "", code, "", ""); st != 200 || !strings.Contains(body, "How many hosts are ejected at 60 s?") {
		t.Errorf("recording after the hostile questions: %d", st)
	}
}

// zeroReader is an endless body of zeros, counted as it is read.
type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// Issue 19, defect 2: the recording's commands read the whole body
// (a gigabyte took a replica from 382 MB to 1 GB). Every route takes a
// bounded body: told with Content-Length, it is refused before a byte is
// read; sent chunked, it is cut at the limit. Either way a 413 that names
// the body, and the server's heap does not grow by the upload.
func TestHostileBodies(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, room.Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	routes := []string{
		"/r/" + code + "/recording/play", "/r/" + code + "/questions", "/r/" + code + "/answer",
		"/r/" + code + "/spotlight", "/r/" + code + "/explore", "/rooms", "/lab/cmd/set", "/lab/lint", "/lab/import", "/whatif",
	}
	const gig = 1 << 30
	for _, path := range routes {
		for _, chunked := range []bool{false, true} {
			z := &zeroReader{}
			var body io.Reader = io.LimitReader(z, gig)
			if path == "/whatif" {
				body = io.MultiReader(strings.NewReader("--x\r\nContent-Disposition: form-data; name=\"log_text\"\r\n\r\n"), body)
			}
			req, _ := http.NewRequest("POST", l.TS.URL+path, body)
			if !chunked {
				req.ContentLength = gig
			}
			req.Header.Set("Content-Type", "application/json")
			if path == "/whatif" {
				req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
			}
			req.AddCookie(&http.Cookie{Name: "olab_key_" + code, Value: key})
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				// The server may close the connection while the client is
				// still sending: the client sees a broken pipe. What was
				// sent must still be bounded.
				if z.n >= 64<<20 {
					t.Errorf("%s (chunked %v): %v after %d bytes sent", path, chunked, err, z.n)
				}
				continue
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 413 || !strings.Contains(string(b), "larger than") {
				t.Errorf("%s (chunked %v): %d %q, want 413 saying it is larger than the limit", path, chunked, res.StatusCode, httperr.Truncate(string(b), 200))
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapInuse > 400<<20 {
		t.Errorf("heap in use %d MiB after the uploads", m.HeapInuse>>20)
	}
}

// Issue 19, defect 6: behind a proxy that appends to X-Forwarded-For, a
// visitor who writes the header themselves must not choose the address
// their limits count against. 200 code guesses through "nginx" with a new
// forged first entry each: the join limit (60) still stops them.
func TestHostileForwardedFor(t *testing.T) {
	t.Parallel()
	bus, err := roombus.StartBus(roombus.BusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	s, err := New(Options{Log: slog.New(slog.DiscardHandler), Bus: bus, Proxies: clientaddr.Proxies{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	limited := 0
	for i := range 200 {
		r := httptest.NewRequest("GET", fmt.Sprintf("/r/ZZZZ%02d", i%100), nil)
		r.RemoteAddr = "127.0.0.1:40000" // the proxy
		// What nginx's $proxy_add_x_forwarded_for makes of a forged header.
		r.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.1, 198.51.100.7", i/256, i%256))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited != 140 {
		t.Errorf("%d of 200 forged guesses limited, want 140 (60 a minute pass)", limited)
	}
}

// Issue 19, defect 9: HEAD is answered as GET (a stream's HEAD does not
// become a stream that never ends); a 405 names the methods allowed; a
// lesson page refuses a parameter it does not take, as the lab does; the
// log never holds a tab id (the tab's bearer token); -max-streams bounds
// open streams (-max-tabs bounds only the tabs without one).
func TestHostileSmall(t *testing.T) {
	t.Parallel()
	logs := &webtest.SyncBuffer{}
	s, err := New(Options{Log: slog.New(slog.NewTextHandler(logs, nil)), MaxStreams: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := webtest.Serve(t, s)
	do := func(method, path string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"HEAD", "/", 200, ""},
		{"HEAD", "/lab", 200, ""},
		{"HEAD", "/lessons/cap", 200, ""},
		{"HEAD", "/healthz", 200, ""},
		// The stream's signals go in a POST's body, never in an address
		// (a tab id in it would be in every proxy's log).
		{"HEAD", "/lab/stream", 405, "POST"},
		{"GET", "/lab/stream?datastar=" + url.QueryEscape(`{"tab":"`+webtest.Tab+`"}`), 405, "POST"},
		{"OPTIONS", "/", 405, "GET, HEAD"},
		{"DELETE", "/lab", 405, "GET, HEAD"},
		{"GET", "/lab/cmd/play", 405, "POST"},
		{"PUT", "/whatif", 405, "GET, HEAD, POST"},
	} {
		res, body := do(tc.method, tc.path)
		if res.StatusCode != tc.status || res.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q, want %d Allow %q (%s)", tc.method, tc.path, res.StatusCode, res.Header.Get("Allow"), tc.status, tc.allow, httperr.Truncate(body, 100))
		}
		if tc.method == "HEAD" && body != "" {
			t.Errorf("HEAD %s has a body", tc.path)
		}
	}
	if res, body := do("GET", "/lessons/cap?anything=1&view=projector"); res.StatusCode != 400 || !strings.Contains(body, "anything: is not a parameter of a lesson page (allowed view)") {
		t.Errorf("a lesson page's unknown parameter: %d %s", res.StatusCode, httperr.Truncate(body, 300))
	}
	if res, _ := do("GET", "/lessons/cap?view=projector"); res.StatusCode != 200 {
		t.Errorf("a lesson page's projector view: %d", res.StatusCode)
	}

	// Two streams fill a server of two streams; a third is refused, named.
	tabs := []string{webtest.TabOf("max-tabs-tab-0000000001"), webtest.TabOf("max-tabs-tab-0000000002")}
	for _, tab := range tabs {
		webtest.WaitFor(t, webtest.OpenStream(t, ts.URL, `{"tab":"`+tab+`"}`), "a stream", roomtest.Charted)
	}
	res, err := http.DefaultClient.Do(webtest.StreamRequest(t.Context(), ts.URL, "/lab/stream", `{"tab":"`+webtest.TabOf("max-tabs-tab-0000000003")+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	body := webtest.Body(t, res)
	if res.StatusCode != 503 || !strings.Contains(body, "-max-streams") {
		t.Errorf("a third stream on a server of two tabs: %d %s", res.StatusCode, body)
	}
	for _, secret := range append(tabs, webtest.Browser) {
		if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), secret[:16]) {
			t.Errorf("the log holds a tab id or the browser's identity: %s", secret)
		}
	}
	if !strings.Contains(logs.String(), "stream open") || !strings.Contains(logs.String(), "tab="+lab.TabRef(tabs[0])) {
		t.Errorf("the log does not name the stream's tab by its hash")
	}
}
