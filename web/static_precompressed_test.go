package web

import (
	"bytes"
	"io"
	"io/fs"
	"testing"

	"outlierlab/web/internal/webtest"
)

// A vendored file goes out as the .br or .gz `make assets` wrote, by what
// the client accepts; the compressed copies have no URL of their own.
func TestStaticPrecompressed(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	h := s.Handler()
	read := func(name string) []byte {
		b, err := fs.ReadFile(staticFiles, "static/"+name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const js = "vendor/echarts.min.js"
	tests := []struct {
		accept, encoding string
		body             []byte
	}{
		{"gzip, deflate, br, zstd", "br", read(js + ".br")},
		{"gzip", "gzip", read(js + ".gz")},
		{"br;q=0, gzip", "gzip", read(js + ".gz")},
		{"identity", "", read(js)},
	}
	for _, tt := range tests {
		res := webtest.Do(t, h, "GET", s.assets.URL(js), "", "Accept-Encoding", tt.accept)
		body, _ := io.ReadAll(res.Body)
		if got := res.Header.Get("Content-Encoding"); got != tt.encoding {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", tt.accept, got, tt.encoding)
		}
		if !bytes.Equal(body, tt.body) {
			t.Errorf("Accept-Encoding %q: body is %d bytes, not the %d of its file", tt.accept, len(body), len(tt.body))
		}
		if v := res.Header.Get("Vary"); v != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Vary %q", tt.accept, v)
		}
	}
	for _, name := range []string{js + ".br", js + ".gz", "vendor/datastar.js.br"} {
		if res := webtest.Do(t, h, "GET", "/static/"+name, ""); res.StatusCode != 404 {
			t.Errorf("/static/%s: status %d, want 404", name, res.StatusCode)
		}
	}
	if n := len(read(js + ".br")); n > 200<<10 {
		t.Errorf("the ECharts bundle is %d KB in brotli: is it the full build again?", n>>10)
	}
}
