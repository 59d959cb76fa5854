package gzipstream

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// Two streams with different histories send one Shared among their own
// bytes, in updates and outside them: each decodes (with Go's own gzip
// reader, CRC and size checked) to exactly what it was sent.
func TestSharedDecodesInEveryStream(t *testing.T) {
	panel := []byte(strings.Repeat("<tr><td>host h3</td><td>ejected</td></tr>\n", 400))
	sh := NewShared(panel)
	for i, own := range []string{"tab-a " + string(panel[:2000]), strings.Repeat("tab-b's long history ", 3000)} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		w, done := Compress(rec, req)
		var want bytes.Buffer
		write := func(s string) {
			want.WriteString(s)
			if _, err := w.Write([]byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		shared := func() {
			want.Write(panel)
			if err := WriteShared(w, sh); err != nil {
				t.Fatal(err)
			}
		}
		// A history the dictionary holds; the second write's compressor
		// goes back to the pool set with this stream's dictionary, which
		// must not leak into the shared bytes deflated next.
		write(own)
		write(own)
		for pass := range 3 {
			sent := Batch(w)
			write(fmt.Sprintf(`{"cursor":%d}`, pass))
			shared()
			write(`<script nonce="` + own[:5] + `">`)
			shared()
			write(strings.Repeat("a long own part ", 300)) // compressed with the dictionary
			if err := sent(); err != nil {
				t.Fatal(err)
			}
		}
		shared() // outside an update
		write("end")
		done()
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("stream %d decodes to %d bytes, want %d", i, len(got), want.Len())
		}
	}
	if sh.Deflated() == 0 || sh.Deflated() >= len(panel)/4 {
		t.Fatalf("shared deflated to %d of %d bytes", sh.Deflated(), len(panel))
	}
}

// A writer that does not compress gets the plain bytes.
func TestSharedPlain(t *testing.T) {
	var b bytes.Buffer
	if err := WriteShared(&b, NewShared([]byte("x"))); err != nil || b.String() != "x" {
		t.Fatalf("%q %v", b.String(), err)
	}
}
