package web

import (
	"bytes"
	"html"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outlierlab/web/internal/webtest"
)

func compareFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "whatif", "compare", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// /whatif with Envoy's event log uploaded beside the access log: the
// matched table, its counts, the lines set aside and the finding that
// names consecutive_5xx on the override day.
func TestWhatifEvents(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	cfg := string(compareFile(t, "cluster.yaml"))
	upload := func(log, events []byte) (*bytes.Buffer, string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		_ = mw.WriteField("config", cfg)
		for name, data := range map[string][]byte{"log": log, "events": events} {
			fw, err := mw.CreateFormFile(name, name+".txt")
			if err != nil {
				t.Fatal(err)
			}
			_, _ = fw.Write(data)
		}
		_ = mw.Close()
		return &b, mw.FormDataContentType()
	}
	for _, tc := range []struct {
		name, log, events string
		status            int
		want              []string
	}{
		{"agree day", "agree.log", "agree-events.jsonl", 200, []string{
			"Envoy 10 events, the lab 10: agree 10, disagree 0, only Envoy 0, only the lab 0.",
			"Envoy's interval timer fires 4.321 s past the log's first second",
			`<tr class="match-agree" data-field=""><td>02:00:21.923</td><td class="match">agree</td><td>10.0.0.5:8080</td><td>eject consecutive_5xx (line 2)</td>`,
		}},
		{"override day", "override.log", "override-events.jsonl", 200, []string{
			"Envoy 10 events, the lab 6: agree 5, disagree 1, only Envoy 4, only the lab 0.",
			`<tr class="match-only_envoy" data-field="consecutive_5xx"><td>02:00:20.963</td><td class="match">only Envoy</td><td>10.0.0.5:8080</td><td>eject consecutive_5xx (line 1)</td>`,
			"Envoy ran with consecutive_5xx = 3, from a runtime override (outlier_detection.consecutive_5xx)",
			`id="chart-lanes"`,
		}},
		{"lines set aside", "agree.log", "problems-events.jsonl", 200, []string{
			"<li><code>line 2: not a JSON object: unexpected end of JSON input</code></li>",
			`<li><code>line 4: action "DRAIN" is not one of EJECT, UNEJECT</code></li>`,
			"agree 10, disagree 0",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, ctype := upload(compareFile(t, tc.log), compareFile(t, tc.events))
			status, page := postForm(t, h, body, ctype)
			if status != tc.status {
				t.Fatalf("status %d\n%s", status, webtest.Head(page, 800))
			}
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
		})
	}
	// Pasted, url-encoded: an event log with nothing usable is the events
	// field's 400, naming its lines.
	form := url.Values{"log_text": {string(compareFile(t, "agree.log"))}, "events_text": {"not an event\n"}}
	res := webtest.Do(t, h, http.MethodPost, "/whatif", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	if page := html.UnescapeString(webtest.Body(t, res)); res.StatusCode != 400 || !strings.Contains(page, "events: no usable event in the event log (1 lines; 1 bad, 0 with an unknown action, 0 of another cluster); line 1: not a JSON object") {
		t.Errorf("nothing usable: %d %s", res.StatusCode, webtest.Head(page, 1500))
	}
}

// FuzzWhatifEvents: POST /whatif with any log and any event log.
func FuzzWhatifEvents(f *testing.F) {
	line := `[2026-11-30T02:00:20.000Z] "GET / HTTP/1.1" 503 - 0 0 1 1 "-" "-" "-" "-" "10.0.0.5:8080"`
	f.Add(line, `{"type":"CONSECUTIVE_5XX","timestamp":"2026-11-30T02:00:20.001Z","cluster_name":"search","upstream_url":"10.0.0.5:8080","action":"EJECT","num_ejections":1,"enforced":true,"eject_consecutive_event":{}}`)
	f.Add(line, `{"type":"SUCCESS_RATE","timestamp":"1970-01-01T00:00:00Z","cluster_name":"search","upstream_url":"10.0.0.5:8080","action":"EJECT","eject_success_rate_event":{"host_success_rate":4294967295}}`)
	f.Add(line, `{"action":"UNEJECT","timestamp":"9999-12-31T23:59:59Z","cluster_name":"x","upstream_url":"y"}`+"\n[]\n{")
	f.Fuzz(func(t *testing.T, log, events string) {
		l := startFuzzLab(t)
		form := url.Values{"log_text": {log}, "events_text": {events}}
		l.serve(t, fuzzRequest("POST", "/whatif", form.Encode(), "application/x-www-form-urlencoded"))
	})
}
