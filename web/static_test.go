package web

import (
	"net/http"
	"strings"
	"testing"

	"outlierlab/web/internal/webtest"
)

func TestStaticAssets(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	h := s.Handler()
	for _, name := range []string{"css/base.css", "js/main.js", "js/chart.js", "vendor/datastar.js", "vendor/echarts.min.js"} {
		u := s.assets.URL(name)
		res := webtest.Do(t, h, "GET", u, "", "Accept-Encoding", "gzip")
		if res.StatusCode != 200 {
			t.Fatalf("%s: status %d", u, res.StatusCode)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("%s: Cache-Control %q, want immutable for the hashed URL", u, cc)
		}
		etag := res.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("%s: no ETag", u)
		}
		// The plain URL is revalidated, and a matching ETag answers 304.
		plain := webtest.Do(t, h, "GET", "/static/"+name, "", "If-None-Match", etag)
		if plain.StatusCode != http.StatusNotModified {
			t.Errorf("%s with If-None-Match: status %d, want 304", name, plain.StatusCode)
		}
	}
	res := webtest.Do(t, h, "GET", s.assets.URL("vendor/echarts.min.js"), "", "Accept-Encoding", "gzip")
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("echarts.min.js not gzipped for a client that accepts it")
	}
	if res := webtest.Do(t, h, "GET", "/static/nope.js", ""); res.StatusCode != 404 {
		t.Errorf("/static/nope.js: status %d, want 404", res.StatusCode)
	}
}
