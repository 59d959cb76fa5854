package web

import (
	"bytes"
	"compress/gzip"
	"html"
	"io"
	"net/http"
	"strings"
	"testing"

	"outlierlab/engine/course"
	"outlierlab/lessons"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

func TestPages(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	tests := []struct {
		target string
		status int
		has    []string
	}{
		// The course's path and its time (the lessons' minutes added up),
		// and the glossary the lessons link to.
		{"/", 200, []string{`href="/lab"`, "search-cache", "/lab?preset=dead-host", "Suggested path: lessons 1 to ", " min in all", `href="/glossary"`}},
		{"/glossary", 200, []string{`<dt id="tick">`, `<dt id="cap">`, "DetectorImpl::onIntervalTimer"}},
		{"/glossary?term=tick", 400, []string{"term"}},
		// The what-if page offers a sample log, and fills the box with it.
		{"/whatif", 200, []string{`href="/whatif?sample=envoy"`}},
		{"/whatif?sample=envoy", 200, []string{"10.0.0.5", `id="whatif-log-text"`}},
		{"/whatif?sample=istio", 400, []string{"sample", "allowed: envoy"}},
		{"/whatif?log=x", 400, []string{"log"}},
		{"/lab", 200, []string{"search-cache", `data-init="@post(`, `id="stream"`, `name="max_ejection_percent"`, `id="chart-lanes"`, "vendor/echarts.min.js?v="}},
		{"/lab?preset=dead-host", 200, []string{`<option value="dead-host" selected>`}},
		// The breaker is a number field (no slider holds 0–4294967295),
		// named by its Envoy path; long ranges have a field beside the
		// slider; the stats table has the cluster's own section.
		{"/lab?preset=bad-deploy", 200, []string{`type="number" class="number only" id="c-max_retries" name="max_retries" min="0" max="4294967295" step="1" value="3"`,
			"circuit_breakers.thresholds.max_retries", `id="n-max_ejection_time"`, `aria-label="Max ejection time, typed (s)"`, `id="n-fault_rate"`, `step="0.001"`,
			"<code>cluster.bad-deploy.</code>", "<code>cluster.bad-deploy.outlier_detection.</code>", `data-stat="cluster.bad-deploy.upstream_rq_retry_overflow"`}},
		{"/lab?preset=no-such-preset", 404, []string{"no scenario preset", `href="/"`}},
		{"/lessons/no-such-lesson", 404, []string{"no-such-lesson", `href="/"`, `href="/lab"`}},
		{"/no/such/page", 404, []string{`href="/"`}},
		{"/healthz", 200, []string{"ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			res := webtest.Do(t, h, "GET", tt.target, "")
			body := webtest.Body(t, res)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d\n%s", res.StatusCode, tt.status, webtest.Head(body, 400))
			}
			for _, s := range tt.has {
				if !strings.Contains(body, s) {
					t.Errorf("body lacks %q", s)
				}
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("CSP = %q", csp)
			}
		})
	}
}

// Pages are compressed when the browser asks (a lab page is ~70 KB of
// HTML, ~13 KB gzipped), and the icon is served where browsers look for
// it (a 404 there was a console error in every tab).
func TestPagesCompressedAndIcon(t *testing.T) {
	t.Parallel()
	_, ts := startTestServer(t)
	for _, path := range []string{"/", "/lab", "/lessons/cap", "/whatif"} {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if res.Header.Get("Content-Encoding") != "gzip" || err != nil {
			t.Fatalf("%s: Content-Encoding %q, %v", path, res.Header.Get("Content-Encoding"), err)
		}
		page, err := io.ReadAll(zr)
		if err != nil || !bytes.Contains(page, []byte("</html>")) || len(raw) >= len(page) {
			t.Errorf("%s: %d bytes gzipped of %d (%v)", path, len(raw), len(page), err)
		}
	}
	res, err := http.Get(ts.URL + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/svg+xml" || !bytes.HasPrefix(b, []byte("<svg")) {
		t.Errorf("/favicon.ico: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

// The home page lists the thirteen lessons in course order, with their
// minutes, and the free lab; /lessons leads there.
func TestCourseIndex(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	body := webtest.Body(t, webtest.Do(t, h, "GET", "/", ""))
	ls, err := course.Load(lessons.FS)
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for _, l := range ls {
		i := strings.Index(body, `href="/lessons/`+l.ID+`"`)
		if i < 0 {
			t.Errorf("%s is not listed", l.ID)
			continue
		}
		if i < last {
			t.Errorf("%s is listed out of order", l.ID)
		}
		last = i
		card := body[strings.LastIndex(body[:i], `<li class="lesson-card"`):]
		card = card[:strings.Index(card, "</li>")]
		for _, want := range []string{html.EscapeString(l.Title), html.EscapeString(l.Summary), tabstate.Itoa(l.Minutes) + " min", `data-progress`, `data-steps="` + l.Steps[0].ID} {
			if !strings.Contains(card, want) {
				t.Errorf("%s: card lacks %s", l.ID, want)
			}
		}
	}
	if !strings.Contains(body, `href="/lab"`) {
		t.Error("the home page has no link to the free lab")
	}
	res := webtest.Do(t, h, "GET", "/lessons", "")
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/" {
		t.Errorf("/lessons: %d to %q, want a redirect to /", res.StatusCode, res.Header.Get("Location"))
	}
}
