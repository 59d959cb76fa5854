package web

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"outlierlab/web/internal/webtest"
)

// rawGet asks url with Accept-Encoding accept, raw (no transparent gunzip: what a browser
// is sent).
func rawGet(t *testing.T, url, accept string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept-Encoding", accept)
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	return string(out)
}

// Issue 35: a page computed on the request is gzipped when the browser
// takes gzip — a sweep's first view (175 KB of HTML) and a what-if result
// — and a work page's progress still reaches the browser while the work
// runs: its first step decodes before the request has ended (the request
// is counted when its handler returns; the count has not moved yet).
func TestWorkPagesCompressed(t *testing.T) {
	_, ts := startTestServer(t)
	const sweep = "/sweep?preset=search-cache&param=max_ejection_percent&from=0&to=100&step=1"
	answered := func() float64 {
		return testutil.ToFloat64(metricRequests.WithLabelValues("/sweep", "GET", "200"))
	}
	before := answered()
	res := rawGet(t, ts.URL+sweep, "gzip")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("the sweep: %d, Content-Encoding %q", res.StatusCode, res.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(zr)
	var page strings.Builder
	for !strings.Contains(page.String(), `class="work-step"`) {
		line, err := br.ReadString('\n')
		page.WriteString(line)
		if err != nil {
			t.Fatalf("no progress step: %v (%q)", err, page.String())
		}
	}
	if n := answered(); n != before {
		t.Errorf("the first step came only after the sweep was answered (%v → %v): the compressor held it", before, n)
	}
	rest, err := io.ReadAll(br)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	page.Write(rest)
	if !strings.Contains(page.String(), "</html>") {
		t.Errorf("the sweep's page is not whole")
	}
	t.Logf("a sweep's first view: %d bytes of HTML", page.Len())

	// A what-if result.
	log, err := os.ReadFile("../testdata/whatif/envoy.log")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("log", "envoy.log")
	_, _ = fw.Write(log)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/whatif", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept-Encoding", "gzip")
	wres, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(wres.Body)
	wres.Body.Close()
	if wres.StatusCode != 200 || wres.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("what-if: %d, Content-Encoding %q", wres.StatusCode, wres.Header.Get("Content-Encoding"))
	}
	if html := gunzip(t, raw); !strings.Contains(html, "</html>") || !strings.Contains(html, "10.0.0.") {
		t.Errorf("what-if's page is not whole: %d bytes", len(html))
	}
	t.Logf("a what-if result: %d bytes gzipped", len(raw))

	// Without gzip: as it is.
	res = rawGet(t, ts.URL+sweep, "")
	plain, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.Header.Get("Content-Encoding") != "" || !strings.Contains(string(plain), "</html>") {
		t.Errorf("without Accept-Encoding: Content-Encoding %q", res.Header.Get("Content-Encoding"))
	}
}

// What encodes itself passes through once: the static files' own gzip
// and brotli copies (their ETag unchanged), a page Pages.Render gzipped,
// /metrics (promhttp's gzip); a tab's stream, gzipped an update at a
// time, sends its headers and first event at once.
func TestCompressLeavesEncodedAlone(t *testing.T) {
	_, ts := startTestServer(t)
	res := rawGet(t, ts.URL+"/static/vendor/datastar.js", "")
	js, _ := io.ReadAll(res.Body)
	res.Body.Close()
	etag := res.Header.Get("ETag")
	for _, enc := range []string{"gzip", "br"} {
		res := rawGet(t, ts.URL+"/static/vendor/datastar.js", enc)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if vary := res.Header.Values("Vary"); len(vary) != 1 {
			t.Errorf("%s: Vary %q, want Accept-Encoding once", enc, vary)
		}
		if res.Header.Get("Content-Encoding") != enc || res.Header.Get("ETag") != etag {
			t.Errorf("%s: Content-Encoding %q, ETag %q (want %q)", enc, res.Header.Get("Content-Encoding"), res.Header.Get("ETag"), etag)
		}
		want, err := os.ReadFile("static/vendor/datastar.js." + map[string]string{"gzip": "gz", "br": "br"}[enc])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s: %d bytes, not the precompressed copy's %d", enc, len(b), len(want))
		}
	}
	gz := rawGet(t, ts.URL+"/static/vendor/datastar.js", "gzip")
	b, _ := io.ReadAll(gz.Body)
	gz.Body.Close()
	if gunzip(t, b) != string(js) {
		t.Error("the gzip copy, once gunzipped, is not the file")
	}
	for _, path := range []string{"/lab?preset=search-cache", "/metrics"} {
		res := rawGet(t, ts.URL+path, "gzip")
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: Content-Encoding %q", path, res.Header.Get("Content-Encoding"))
			continue
		}
		if vary := res.Header.Values("Vary"); strings.Count(strings.Join(vary, ","), "Accept-Encoding") != 1 {
			t.Errorf("%s: Vary %q, want Accept-Encoding once", path, vary)
		}
		if s := gunzip(t, b); len(s) < 2 || s[0] == 0x1f && s[1] == 0x8b {
			t.Errorf("%s: gzipped twice", path)
		}
	}
	start := time.Now()
	events := webtest.OpenStream(t, ts.URL, `{"tab":"`+webtest.Tab+`","preset":"search-cache"}`)
	headers := time.Since(start)
	select {
	case ev := <-events:
		t.Logf("the stream's headers after %v, its first event (%s) after %v", headers, ev.Type, time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("no event from the stream within 10 s")
	}
}
