package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room"
	"outlierlab/web/roombus"
)

// Issue 15, Build: a request writes exactly one log line with its method,
// path, status, duration and bytes; issue 35: the client's address, the
// duration in milliseconds, a number.
func TestRequestLogLine(t *testing.T) {
	var buf webtest.SyncBuffer
	s, err := New(Options{Log: NewLogger(&buf, "json")})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d log lines, want 1:\n%s", len(lines), buf.String())
	}
	var line struct {
		Msg, Method, Path, Client string
		Status, Bytes             int
		Duration                  *float64 `json:"duration_ms"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatalf("not a JSON line: %v: %s", err, lines[0])
	}
	if line.Msg != "request" || line.Method != "GET" || line.Path != "/healthz" || line.Status != 200 || line.Bytes != 3 || line.Duration == nil || line.Client != "192.0.2.1" {
		t.Fatalf("log line %s", lines[0])
	}
}

// Issue 15, defect 7: probes ask with HEAD.
func TestHealthzHead(t *testing.T) {
	rec := httptest.NewRecorder()
	newTestServer(t).Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("HEAD /healthz: %d, want 200", rec.Code)
	}
}

// Issue 15, defect 6: a page on another site cannot post commands.
func TestCrossSitePostsRefused(t *testing.T) {
	h := newTestServer(t).Handler()
	body := `{"tab":"` + webtest.TabOf("crosssitetab00000001") + `"}`
	for _, c := range []struct {
		name, header, value string
		want                int
	}{
		{"origin elsewhere", "Origin", "https://elsewhere", http.StatusForbidden},
		{"cross-site fetch", "Sec-Fetch-Site", "cross-site", http.StatusForbidden},
		{"same-site is not same-origin", "Sec-Fetch-Site", "same-site", http.StatusForbidden},
		{"same-origin fetch", "Sec-Fetch-Site", "same-origin", http.StatusNoContent},
		{"origin of this host", "Origin", "http://example.com", http.StatusNoContent},
		{"no browser headers (curl)", "", "", http.StatusNoContent},
	} {
		req := httptest.NewRequest(http.MethodPost, "/lab/cmd/pause", strings.NewReader(body))
		req.AddCookie(webtest.BrowserCookie())
		if c.header != "" {
			req.Header.Set(c.header, c.value)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, rec.Code, rec.Body.String(), c.want)
		}
		if c.want == http.StatusForbidden && !strings.Contains(rec.Body.String(), "cross-site request refused") {
			t.Errorf("%s: body %q does not say why", c.name, rec.Body.String())
		}
	}
	// A cross-site page cannot read anything state-changing through GET
	// either: the lab has no GET that changes a session.
	req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("cross-site GET /healthz: %d, want 200", rec.Code)
	}
}

// Issue 15, Build: /metrics shows every family the issue names after a tab
// streamed and moved a slider.
func TestMetricsAfterTraffic(t *testing.T) {
	s := newTestServer(t)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close) // after the stream's own cleanup has closed it
	events := webtest.OpenStream(t, ts.URL, `{"tab":"`+webtest.Tab+`","preset":"search-cache","cursor":30}`)
	webtest.NextCharts(t, events)
	webtest.PostCommand(t, ts.URL, "set", `,"seq":1,"cfg":{"max_ejection_percent":34}`)
	webtest.NextCharts(t, events)
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/lab/cmd/pause", strings.NewReader(`{"tab":"`+webtest.Tab+`"}`))
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site pause: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	families := []string{
		`outlierlab_commands_total{code="403",verb="pause"} `,
		"outlierlab_sessions 1",
		"outlierlab_streams_open ",
		`outlierlab_commands_total{code="204",verb="set"} `,
		"outlierlab_command_redraw_seconds_count ",
		"outlierlab_run_cache_hits_total ",
		"outlierlab_run_cache_misses_total ",
		"outlierlab_run_cache_bytes ",
		"outlierlab_runs_computed_total ",
		"outlierlab_run_duration_seconds_count ",
		"outlierlab_rooms 0",
		`outlierlab_commands_total{code="204",verb="uninject"} `, // every verb's series is there (at zero in a fresh process)
		`outlierlab_http_requests_total{code="204",method="POST",route="/lab/cmd/{verb}"} `,
		`outlierlab_http_request_duration_seconds_count{method="POST",route="/lab/cmd/{verb}"} `,
		"outlierlab_room_followers 0",
		"go_goroutines ",
		"go_memstats_heap_alloc_bytes ",
		"process_resident_memory_bytes ",
	}
	var text string
	deadline := time.Now().Add(5 * time.Second)
	for {
		text = get(t, ts.URL+"/metrics")
		if m := regexp.MustCompile(`(?m)^outlierlab_command_redraw_seconds_count (\d+)`).FindStringSubmatch(text); m != nil && m[1] != "0" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, f := range families {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(f)).MatchString(text) {
			t.Errorf("/metrics lacks %q", f)
		}
	}
	for _, nonzero := range []string{"outlierlab_streams_open", "outlierlab_command_redraw_seconds_count", "outlierlab_runs_computed_total", "outlierlab_run_cache_misses_total"} {
		if regexp.MustCompile(`(?m)^` + nonzero + ` 0$`).MatchString(text) {
			t.Errorf("%s is 0 after traffic", nonzero)
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// Issue 15, Build: a room and its followers show in /metrics.
func TestMetricsRooms(t *testing.T) {
	l := startRoomLab(t, roombus.BusOptions{}, room.Limits{})
	code, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	follower := roomtest.OpenRoomStream(t, l.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, follower, "the first redraw", roomtest.Charted)
	text := get(t, l.TS.URL+"/metrics")
	for _, want := range []string{"outlierlab_rooms 1", "outlierlab_room_followers 1"} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(text) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
