package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"outlierlab/web/internal/webtest"
)

// cmdStatus posts one command body to the handler and returns the status
// and the body's text.
func cmdStatus(t *testing.T, h http.Handler, verb, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/lab/cmd/"+verb, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(webtest.BrowserCookie())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

// Issue 15, defect 5: inputs the lab used to accept, clamp or echo.
func TestStrictInputs(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	tab := `"tab":"` + webtest.TabOf("strictinputs0000001") + `"`
	digits309 := "1" + strings.Repeat("0", 308)
	cases := []struct {
		name, verb, body string
		status           int
		want, notWant    string
	}{
		{"null for a number", "set", `{` + tab + `,"cfg":{"max_ejection_percent":null}}`, 422, "max_ejection_percent: null is not a number", ""},
		{"null for a switch", "set", `{` + tab + `,"cfg":{"split_external_local_origin_errors":null}}`, 422, "split_external_local_origin_errors: null is not true or false", ""},
		{"new tab cursor -5", "pause", `{"tab":"` + webtest.TabOf("strictinputs0000002") + `","cursor":-5}`, 422, "cursor: -5 is out of range", ""},
		{"new tab cursor 1e300", "pause", `{"tab":"` + webtest.TabOf("strictinputs0000003") + `","cursor":1e300}`, 422, "cursor: 1e+300 is out of range", ""},
		{"309 digits not echoed", "set", `{` + tab + `,"cfg":{"max_ejection_percent":` + digits309 + `}}`, 422, "max_ejection_percent: 1e+308 is out of range", digits309[:30]},
		{"scrub 1.5", "scrub", `{` + tab + `,"cursor":1.5}`, 422, "cursor: 1.5 is not a whole number (allowed 0–", ""},
		{"unknown preset on a new tab", "pause", `{"tab":"` + webtest.TabOf("strictinputs0000004") + `","preset":"nope"}`, 404, `preset: "nope" is not a preset (allowed `, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := cmdStatus(t, h, c.verb, c.body)
			if code != c.status || !strings.Contains(body, c.want) {
				t.Fatalf("%s: %d %q, want %d containing %q", c.verb, code, body, c.status, c.want)
			}
			if c.notWant != "" && strings.Contains(body, c.notWant) {
				t.Fatalf("body echoes the number in full: %q", body)
			}
			if strings.Contains(c.name, "preset") && !strings.Contains(body, "search-cache") {
				t.Fatalf("body does not list the presets: %q", body)
			}
		})
	}
}
