package guard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"outlierlab/web/csp"
	"outlierlab/web/httperr"
)

// echo answers 200 with how many bytes of the body it could read, or 413
// where the body was cut (as a handler meets http.MaxBytesReader's error).
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		httperr.Write(w, err, httperr.KindMalformed)
		return
	}
	_, _ = io.WriteString(w, "OK "+strconv.Itoa(len(b)))
})

// A browser's request from another site is refused, naming where it came
// from and where it must come from; the same site's, a safe method's and
// a script's (no browser headers) pass.
func TestSameOrigin(t *testing.T) {
	h := SameOrigin().Handler(echo)
	for _, c := range []struct {
		name, method string
		headers      map[string]string
		want         int
		text         string
	}{
		{"another site's page", "POST", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "cross-site request refused (Sec-Fetch-Site: cross-site): POST /lab/cmd/set must come from a page of this lab (lab.example)"},
		{"a same-site page (not the same origin)", "POST", map[string]string{"Sec-Fetch-Site": "same-site"}, 403, "Sec-Fetch-Site: same-site"},
		{"an old browser's Origin of another host", "POST", map[string]string{"Origin": "https://evil.example"}, 403, "origin https://evil.example"},
		{"a forged Origin a kilobyte long is cut in the answer", "POST", map[string]string{"Origin": "https://" + strings.Repeat("e", 1000)}, 403, "…"},
		{"the lab's own page", "POST", map[string]string{"Sec-Fetch-Site": "same-origin"}, 200, "OK 0"},
		{"typed in the address bar", "POST", map[string]string{"Sec-Fetch-Site": "none"}, 200, "OK 0"},
		{"Origin naming the lab", "POST", map[string]string{"Origin": "http://lab.example"}, 200, "OK 0"},
		{"a script (no browser headers)", "POST", nil, 200, "OK 0"},
		{"a link from another site (GET)", "GET", map[string]string{"Sec-Fetch-Site": "cross-site"}, 200, "OK 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, "http://lab.example/lab/cmd/set", nil)
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.want || !strings.Contains(rec.Body.String(), c.text) {
				t.Fatalf("%d %q, want %d with %q", rec.Code, rec.Body.String(), c.want, c.text)
			}
			if c.want == 403 && len(rec.Body.String()) > 400 {
				t.Fatalf("the refusal is %d bytes: a forged header is echoed whole", len(rec.Body.String()))
			}
		})
	}
}

// A body larger than a route takes is refused before it is read when it
// says so, cut at the limit when it does not; an upload route has its own
// larger limit and answers its own too-large body.
func TestLimitBodies(t *testing.T) {
	h := LimitBodies(10, map[string]int64{"/upload": 100})(echo)
	for _, c := range []struct {
		name, path string
		body       string
		unsized    bool // sent without a Content-Length (chunked)
		want       int
		text       string
	}{
		{"within the limit", "/lab/cmd/set", "0123456789", false, 200, "OK 10"},
		{"says it is larger", "/lab/cmd/set", "0123456789X", false, 413, "body: larger than this route takes (allowed at most 10 bytes)"},
		{"does not say, and is larger", "/lab/cmd/set", strings.Repeat("y", 5000), true, 413, "larger than this route takes"},
		{"an upload within its own limit", "/upload", strings.Repeat("z", 100), false, 200, "OK 100"},
		{"an upload larger than its limit is cut, not refused here", "/upload", strings.Repeat("z", 101), false, 413, "larger"},
		{"empty", "/lab/cmd/set", "", false, 200, "OK 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "http://lab.example"+c.path, strings.NewReader(c.body))
			if c.unsized {
				req.ContentLength = -1
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.want || !strings.Contains(rec.Body.String(), c.text) {
				t.Fatalf("%d %q, want %d with %q", rec.Code, rec.Body.String(), c.want, c.text)
			}
			if c.want == 413 && !c.unsized && c.path != "/upload" && rec.Header().Get("Connection") != "close" {
				t.Fatal("a refused body keeps the connection open: its rest would be read")
			}
		})
	}
}

// Every answer carries the policy of a page without a tab and the two
// headers that keep a browser from sniffing types or sending referrers.
func TestSecurityHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	SecurityHeaders(echo).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	h := rec.Header()
	if got, want := h.Get("Content-Security-Policy"), csp.Policy(""); got != want || !strings.Contains(got, "default-src 'self'") {
		t.Errorf("Content-Security-Policy: %q, want %q", got, want)
	}
	if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options: %q", got)
	}
	if got := h.Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("Referrer-Policy: %q", got)
	}
}

// A script or stylesheet goes without the policy (a browser enforces it
// on documents only) but keeps nosniff; the icon, an SVG that can open as
// a document, and a made-up path under /static/ keep it.
func TestSecurityHeadersOnSubresources(t *testing.T) {
	for _, c := range []struct {
		path   string
		policy bool
	}{
		{"/static/js/main.js", false},
		{"/static/css/base.css", false},
		{"/static/vendor/echarts.min.js", false},
		{"/static/favicon.svg", true},
		{"/static/js/main.js.map", true},
		{"/lab", true},
		{"/js/main.js", true},
	} {
		rec := httptest.NewRecorder()
		SecurityHeaders(echo).ServeHTTP(rec, httptest.NewRequest("GET", c.path, nil))
		if got := rec.Header().Get("Content-Security-Policy") != ""; got != c.policy {
			t.Errorf("%s: a policy %v, want %v", c.path, got, c.policy)
		}
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", c.path, got)
		}
	}
}
