package web

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"outlierlab/web/httperr"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/lab"
	"outlierlab/web/room"
	"outlierlab/web/roombus"
)

// The fuzz targets send what a hostile visitor could to every route
// family: lab commands and streams, the lab's pages, rooms and their API,
// import, what-if, compare and sweep. Whatever arrives, the answer is
// never a 5xx, a panic or a hang (issue 19). `make test` runs each for a
// few seconds; `make fuzz FUZZTIME=10m` longer.

// fuzzLab is one server for every input of a fuzz run (a fresh server per
// input would measure start-up, not the handlers), with a room to aim the
// room API at. Its limits are lifted: a 429 is a fine answer, but it would
// hide the handlers behind it.
type fuzzLab struct {
	h         http.Handler
	code, key string
}

var (
	fuzzMu   sync.Mutex
	fuzzLabs *fuzzLab
)

func startFuzzLab(t testing.TB) *fuzzLab {
	fuzzMu.Lock()
	defer fuzzMu.Unlock()
	if fuzzLabs != nil {
		return fuzzLabs
	}
	bus, err := roombus.StartBus(roombus.BusOptions{})
	if err != nil {
		t.Fatalf("bus: %v", err)
	}
	s, err := New(Options{Log: slog.New(slog.DiscardHandler), Bus: bus, MaxSessions: 200,
		TabsPerMinute: 1_000_000, CommandsPerMinute: 1_000_000,
		Rooms: room.Limits{JoinsPerMinute: 1_000_000, JoinBurst: 1_000_000}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	l := &fuzzLab{h: s.Handler()}
	req := httptest.NewRequest("POST", "/rooms", strings.NewReader(`{"preset":"search-cache"}`))
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	l.h.ServeHTTP(w, req)
	var out struct{ Code, Key string }
	if w.Code != http.StatusCreated || json.Unmarshal(w.Body.Bytes(), &out) != nil || out.Code == "" {
		t.Fatalf("POST /rooms: %d %s", w.Code, w.Body)
	}
	l.code, l.key = out.Code, out.Key
	fuzzLabs = l
	return l
}

// firstWrite is a response recorder that ends the request at the first
// flush: a stream's status and first event say what it made of its input,
// and it must not run on.
type firstWrite struct {
	*httptest.ResponseRecorder
	cancel context.CancelFunc
}

func (f *firstWrite) Flush() { f.ResponseRecorder.Flush(); f.cancel() }

// serve runs one request through the lab and fails on a 5xx or a handler
// that does not return within 20 s (a panic fails the fuzz run itself).
func (l *fuzzLab) serve(t *testing.T, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	w := &firstWrite{ResponseRecorder: httptest.NewRecorder(), cancel: cancel}
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.h.ServeHTTP(w, req.WithContext(ctx))
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s %s: no answer in 20 s", req.Method, httperr.Truncate(req.URL.String(), 200))
	}
	// A stream that flushed its headers answered 200; a 503 is a limit
	// reached (the lab is full, the bus is slow), which is not a failure.
	if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
		t.Fatalf("%s %s: %d %s", req.Method, httperr.Truncate(req.URL.String(), 200), w.Code, httperr.Truncate(w.Body.String(), 300))
	}
	return w.ResponseRecorder
}

func fuzzRequest(method, target, body, contentType string) *http.Request {
	req := httptest.NewRequest(method, "/", strings.NewReader(body))
	u, err := url.ParseRequestURI(target)
	if err != nil || !strings.HasPrefix(target, "/") {
		u = &url.URL{Path: "/" + strings.TrimLeft(target, "/")}
	}
	req.URL, req.RequestURI = u, u.RequestURI()
	req.AddCookie(webtest.BrowserCookie()) // the fuzzed tabs are the tests' browser's: past the tab's check
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

var hostileNumbers = []string{"NaN", "Infinity", "-Inf", "1e999", "-1e308", "9223372036854775808", "-0", "0x1p-2", `""`, "null", "[]", "{}", "true"}

// FuzzLabCommand: POST /lab/cmd/{verb} with any signals.
func FuzzLabCommand(f *testing.F) {
	for _, v := range lab.VerbNames() {
		f.Add(v, `{"tab":"`+webtest.TabOf("fuzz-tab-000000000001")+`","preset":"search-cache"}`)
	}
	for _, n := range hostileNumbers {
		f.Add("set", `{"tab":"`+webtest.TabOf("fuzz-tab-000000000002")+`","cfg":{"max_ejection_percent":`+n+`,"rps":"`+n+`"}}`)
		f.Add("scrub", `{"tab":"`+webtest.TabOf("fuzz-tab-000000000003")+`","cursor":`+n+`}`)
	}
	f.Add("inject", `{"tab":"`+webtest.TabOf("fuzz-tab-000000000004")+`","injectHost":"h99999999999","inject":"h1@NaN"}`)
	f.Add("lesson", `{"tab":"`+webtest.TabOf("fuzz-tab-000000000005")+`","lesson":"cap","step":"`+strings.Repeat("x", 5000)+`"}`)
	f.Add("answer", `{"tab":"`+webtest.TabOf("fuzz-tab-000000000006")+`","lesson":"nope","predicted":true}`)
	f.Fuzz(func(t *testing.T, verb, body string) {
		l := startFuzzLab(t)
		l.serve(t, fuzzRequest("POST", "/lab/cmd/"+url.PathEscape(verb), body, "application/json"))
	})
}

// FuzzLabStream: POST /lab/stream and the recording's stream, with any
// signals, to their first event.
func FuzzLabStream(f *testing.F) {
	f.Add(`{"tab":"`+webtest.TabOf("fuzz-stream-00000000001")+`","preset":"search-cache"}`, false)
	f.Add(`{"tab":"`+webtest.TabOf("fuzz-stream-00000000002")+`","lesson":"cap","step":"cap-17"}`, false)
	f.Add(`{"tab":"`+webtest.TabOf("fuzz-stream-00000000003")+`","room":"ZZZZZZ","roomRole":"follow"}`, false)
	f.Add(`{"tab":"`+webtest.TabOf("fuzz-stream-00000000004")+`","recSpeed":"NaN"}`, true)
	for _, n := range hostileNumbers {
		f.Add(`{"tab":"`+webtest.TabOf("fuzz-stream-00000000005")+`","cursor":`+n+`,"cfg":{"interval":`+n+`}}`, false)
	}
	f.Add(`not json`, false)
	f.Fuzz(func(t *testing.T, signals string, recording bool) {
		l := startFuzzLab(t)
		signals = strings.ReplaceAll(signals, "ROOM", l.code)
		path := "/lab/stream"
		if recording {
			path = "/r/" + l.code + "/recording/stream"
		}
		l.serve(t, fuzzRequest("POST", path, signals, "application/json"))
	})
}

// FuzzLabPages: the lab's and lessons' pages, their queries.
func FuzzLabPages(f *testing.F) {
	for _, p := range []string{"/lab?preset=search-cache&max_ejection_percent=34&t=80", "/lab?t=NaN", "/lab?interval=1e999s", "/lab?inject=h1@Inf",
		"/lessons/cap?view=projector", "/lessons/nope", "/lab?view=projector&view=x", "/", "/r?code=%00", "/plans/lightning/handout?x=%00", "/plans/%2e%2e/handout", "/static/../../etc/passwd", "/lab?" + strings.Repeat("a=1&", 2000)} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, target string) {
		l := startFuzzLab(t)
		l.serve(t, fuzzRequest("GET", target, "", ""))
	})
}

// FuzzRoomAPI: the room's routes, with and without its key, at its code
// and at made-up ones.
func FuzzRoomAPI(f *testing.F) {
	for _, c := range []struct {
		method, path, body string
		key                bool
	}{
		{"POST", "/r/ROOM/questions", `{"qkind":"out","qat":"NaN"}`, true},
		{"POST", "/r/ROOM/questions", `{"qkind":"ejected","qhost":"h5","qat":1e308}`, true},
		{"POST", "/r/ROOM/questions/abcdefgh/reveal", ``, true},
		{"POST", "/r/ROOM/answer", `{"id":"x","answer":"` + strings.Repeat("9", 400) + `"}`, false},
		{"GET", "/r/ROOM/question", ``, false},
		{"POST", "/r/ROOM/spotlight?from=NaN&to=60", ``, true},
		{"POST", "/r/ROOM/spotlight?log=lg-99999999999999999999-1", ``, true},
		{"POST", "/r/ROOM/spotlight", `{"host":"h5","from":-1,"to":1e308}`, true},
		{"POST", "/r/ROOM/summon", `{}`, true},
		{"POST", "/r/ROOM/explore?scene=NaN&stop=maybe", ``, true},
		{"POST", "/r/ROOM/explore", `{"scene":1e308,"stop":"yes"}`, true},
		{"POST", "/r/ROOM/lock", `{"lock":"maybe"}`, true},
		{"POST", "/r/ROOM/identities?per_address=1e308", ``, true},
		{"POST", "/r/ROOM/identities?per_address=-0", ``, true},
		{"POST", "/r/ROOM/recording/speed?speed=Inf", `{"tab":"` + webtest.TabOf("fuzz-rec-0000000000001") + `"}`, false},
		{"POST", "/r/ROOM/recording/seek", `{"tab":"` + webtest.TabOf("fuzz-rec-0000000000001") + `","recAt":NaN}`, false},
		{"GET", "/r/ROOM/recording.json", ``, true},
		{"GET", "/r/ROOM/recording?speed=0", ``, false},
		{"GET", "/r/ROOM/handout?scene=NaN", ``, false},
		{"GET", "/r/ROOM/present", ``, true},
		{"GET", "/r/ZZZZZZ/projector", ``, false},
		{"POST", "/rooms", `{"lesson":"nope"}`, false},
		{"POST", "/rooms", `start=preset:%00`, false},
	} {
		f.Add(c.method, c.path, c.body, c.key)
	}
	f.Fuzz(func(t *testing.T, method, path, body string, key bool) {
		l := startFuzzLab(t)
		if method != "GET" && method != "HEAD" {
			method = "POST"
		}
		req := fuzzRequest(method, strings.ReplaceAll(path, "ROOM", l.code), body, "application/json")
		if key {
			req.AddCookie(&http.Cookie{Name: "olab_key_" + l.code, Value: l.key})
		}
		l.serve(t, req)
	})
}

// FuzzImport: POST /lab/import with any document, as the document itself
// and in the lab's form.
func FuzzImport(f *testing.F) {
	f.Add("outlier_detection: {consecutive_5xx: 3, max_ejection_percent: NaN}", false)
	f.Add("a: &a [*a, *a, *a]\nb: *a", false)
	f.Add(`{"name":"c","outlier_detection":{"interval":"1e999s"}}`, true)
	f.Add(strings.Repeat("[", 10000), false)
	f.Add(`{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","static_clusters":[{"cluster":{"name":"a"}},{"cluster":7}]}]}`, false)
	f.Add(`{"cluster_statuses":[{"name":"search","host_statuses":[{"address":{"pipe":{}},"weight":4294967295,"success_rate":{"value":-1e308}}]}]}`, true)
	f.Fuzz(func(t *testing.T, doc string, form bool) {
		l := startFuzzLab(t)
		if form {
			l.serve(t, fuzzRequest("POST", "/lab/import", "cluster="+url.QueryEscape(doc)+"&name=search&preset=search-cache", "application/x-www-form-urlencoded"))
			// The same document as Envoy's /clusters, beside a cluster.
			l.serve(t, fuzzRequest("POST", "/lab/import", "cluster=name%3A+search%0Aoutlier_detection%3A+%7B%7D&clusters="+url.QueryEscape(doc)+"&preset=search-cache", "application/x-www-form-urlencoded"))
			return
		}
		l.serve(t, fuzzRequest("POST", "/lab/import", doc, "application/yaml"))
	})
}

// FuzzWhatif: POST /whatif with any log and config.
func FuzzWhatif(f *testing.F) {
	f.Add(`[2026-11-30T10:00:00.000Z] "GET / HTTP/1.1" 503 UF 0 0 1 - "-" "-" "-" "-" "10.0.0.1:80"`, "", "1")
	f.Add(`{"start_time":"2026-11-30T10:00:00Z","response_code":NaN,"upstream_host":"h1"}`, "outlier_detection: {interval: 0s}", "0")
	f.Add(strings.Repeat("x\n", 1000), "", "18446744073709551616")
	f.Fuzz(func(t *testing.T, log, config, seed string) {
		l := startFuzzLab(t)
		form := url.Values{"log_text": {log}, "config": {config}, "seed": {seed}}
		l.serve(t, fuzzRequest("POST", "/whatif", form.Encode(), "application/x-www-form-urlencoded"))
	})
}

// FuzzCompare: GET /compare?a=…&b=….
func FuzzCompare(f *testing.F) {
	f.Add("preset=search-cache&max_ejection_percent=34", "preset=search-cache&dialect=grpc")
	f.Add("t=NaN", "rps=1e999")
	f.Add("preset=nope", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		l := startFuzzLab(t)
		l.serve(t, fuzzRequest("GET", "/compare?a="+url.QueryEscape(a)+"&b="+url.QueryEscape(b), "", ""))
	})
}

// FuzzSweep: GET /sweep with any parameter, range and seeds.
func FuzzSweep(f *testing.F) {
	f.Add("max_ejection_percent", "0", "100", "10", "1-3")
	f.Add("interval", "1s", "NaN", "Inf", "1,2,3")
	f.Add("rps", "1", "1e308", "1e-300", "18446744073709551615")
	f.Fuzz(func(t *testing.T, param, from, to, step, seeds string) {
		l := startFuzzLab(t)
		q := url.Values{"param": {param}, "from": {from}, "to": {to}, "step": {step}, "seeds": {seeds}, "preset": {"search-cache"}}
		w := l.serve(t, fuzzRequest("GET", "/sweep?"+q.Encode(), "", ""))
		_, _ = io.Copy(io.Discard, w.Body)
	})
}
