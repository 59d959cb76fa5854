package web

import (
	"mime"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// compress gzips every answer the router gives that is not encoded
// already: the pages computed on the request (a sweep's first view is
// 175 KB of HTML, a what-if result up to 2 MB), the JSON, the errors.
// Pages.Render gzips its pages itself, the static files are served from
// their gzip and brotli copies (web/asset), the event streams compress
// themselves an update at a time (web/gzipstream): each of those sets
// Content-Encoding, or is an event stream, or names its ETag (a file
// served byte for byte as its tag says), and passes through untouched
// from its first byte — its status and headers too, so a stream's
// headers are not held back waiting for a body to decide on.
//
// A streamed work page (page.Work) flushes each progress step: the
// compressor flushes with it (a sync point), so the bar still moves as
// the work does. gzip only: the encoding the streams and the static files
// use, and one every browser and proxy takes.
func compress() func(http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(
		gzhttp.EnableZstd(false),
		gzhttp.ContentTypeFilter(func(ct string) bool { return !isEventStream(ct) && gzhttp.DefaultContentTypeFilter(ct) }),
	)
	if err != nil {
		panic(err) // only for invalid options: never with these
	}
	return func(next http.Handler) http.Handler {
		return wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(&passEncoded{ResponseWriter: w}, r)
		}))
	}
}

func isEventStream(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && strings.EqualFold(mt, "text/event-stream")
}

// passEncoded sits between a handler and gzhttp's writer: at the
// response's first status, write or flush it looks at the headers, and an
// answer that is encoded already, an event stream or a tagged file is
// marked for gzhttp to leave alone (its No-Gzip-Compression header, which
// gzhttp removes) and sent on at once. gzhttp alone would hold the status
// and headers of a stream that flushes before its first event until a
// body arrives.
type passEncoded struct {
	http.ResponseWriter // gzhttp's
	decided, plain      bool
	started             bool // a status was sent (or a body written)
}

func (p *passEncoded) decide() {
	if p.decided {
		return
	}
	p.decided = true
	h := p.Header()
	// gzhttp adds Vary: Accept-Encoding to every answer; a handler that
	// chooses its encoding has said so too: once is enough.
	if vs := h.Values("Vary"); len(vs) > 1 {
		seen := map[string]bool{}
		h.Del("Vary")
		for _, v := range vs {
			if k := strings.ToLower(strings.TrimSpace(v)); !seen[k] {
				seen[k] = true
				h.Add("Vary", v)
			}
		}
	}
	if h.Get("Content-Encoding") != "" || h.Get("ETag") != "" || isEventStream(h.Get("Content-Type")) {
		h.Set(gzhttp.HeaderNoCompression, "1")
		p.plain = true
	}
}

func (p *passEncoded) WriteHeader(code int) {
	if code < 200 || p.started { // informational, or a second call (net/http logs it)
		p.ResponseWriter.WriteHeader(code)
		return
	}
	p.decide()
	p.started = true
	p.ResponseWriter.WriteHeader(code)
	if p.plain {
		// An empty write makes gzhttp settle on passing through: it sends
		// the status on now, and every write after goes straight out.
		_, _ = p.ResponseWriter.Write(nil)
	}
}

func (p *passEncoded) Write(b []byte) (int, error) {
	if !p.started {
		p.WriteHeader(http.StatusOK)
	}
	return p.ResponseWriter.Write(b)
}

// Flush sends what was written: through the compressor (a sync point)
// when it compresses, as it is otherwise.
func (p *passEncoded) Flush() {
	if !p.started {
		p.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(p.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (write
// deadlines: a work page moves its own, a stream lifts it).
func (p *passEncoded) Unwrap() http.ResponseWriter { return p.ResponseWriter }
