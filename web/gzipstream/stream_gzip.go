// Package gzipstream compresses a Server-Sent Events stream with gzip,
// an update (the events of one frame or redraw) at a time, holding only a
// 32 KiB dictionary between updates (see GzipStream). The lab's tab
// streams and the recording player's streams both write through it.
package gzipstream

import (
	"encoding/binary"
	"io"
	"net/http"
	"sync"

	"github.com/klauspost/compress/flate"
)

// A GzipStream is a stream compressed with gzip whose compressor is borrowed per event:
// each event is compressed by a pooled deflate writer reset with the last
// 32 KiB sent as its dictionary, and the stream keeps nothing else between
// events. A brotli or gzip writer holds its window and hash tables for the
// life of the response (1159 KiB a tab with brotli, 807 KiB with gzip,
// issue 15); an idle stream here holds its 32 KiB dictionary. Every
// browser offers gzip, so brotli is not offered (no Go brotli encoder can
// be flushed to a byte boundary with its state dropped in between).
type GzipStream struct {
	http.ResponseWriter
	Dict []byte // the last DictSize bytes sent, uncompressed
	crc  uint32
	size uint32
	head bool // gzip header written
	// held gathers the writes of one update (a frame's or a redraw's
	// events) in pending, to compress them as one: an event compressed on
	// its own costs a block header and a sync marker, and its compressor a
	// reset with the whole dictionary, eight times a frame.
	held    bool
	pending *[]byte
	cuts    []cut // Shared bytes written during the update (shared.go)
}

// pendingBufs are the buffers an update is gathered in, lent for the
// update only: an idle stream holds none.
var pendingBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// hold starts gathering writes; release compresses and sends them.
func (g *GzipStream) hold() {
	g.held = true
	if g.pending == nil {
		g.pending = pendingBufs.Get().(*[]byte)
	}
}

// release ends hold: what was written since is compressed as one run of
// blocks and sent at once.
func (g *GzipStream) release() error {
	g.held = false
	b := g.pending
	if b == nil {
		return nil
	}
	g.pending = nil
	defer func() { *b = (*b)[:0]; pendingBufs.Put(b) }()
	if len(g.cuts) > 0 {
		return g.releaseCuts(*b)
	}
	if len(*b) == 0 {
		return nil
	}
	if _, err := g.Write(*b); err != nil {
		return err
	}
	return http.NewResponseController(g.ResponseWriter).Flush()
}

// DictSize is deflate's whole window: a back reference reaches no further.
const DictSize = 32 << 10

// deflaters are compressors lent to one event at a time. Reset with the
// stream's dictionary, a compressor's output continues the stream's
// deflate data: its blocks may refer to the last 32 KiB the browser
// decoded, which is the dictionary.
var deflaters = sync.Pool{New: func() any {
	fw, _ := flate.NewWriter(io.Discard, deflateLevel)
	return fw
}}

const deflateLevel = 5

// gzipHeader is a gzip member header: deflate, no name, no time, OS unknown.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}

// Compress wraps w in the stream's compressor when the request
// accepts gzip, and returns w as it is otherwise; done ends the gzip
// member (the stream is ending).
func Compress(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func()) {
	if !Accepts(r.Header.Get("Accept-Encoding"), "gzip") {
		return w, func() {}
	}
	h := w.Header()
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
	h.Del("Content-Length")
	g := &GzipStream{ResponseWriter: w, Dict: make([]byte, 0, DictSize)}
	return g, g.close
}

// Write compresses p as one run of deflate blocks ending on a byte
// boundary (a sync point), so the browser can decode it at once.
func (g *GzipStream) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if g.held {
		*g.pending = append(*g.pending, p...)
		return len(p), nil
	}
	if err := g.header(); err != nil {
		return 0, err
	}
	fw := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(fw)
	fw.ResetDict(g.ResponseWriter, g.Dict)
	if _, err := fw.Write(p); err != nil {
		return 0, err
	}
	if err := fw.Flush(); err != nil { // a sync point: the browser decodes it now
		return 0, err
	}
	g.sent(p)
	return len(p), nil
}

// remember keeps the last DictSize bytes sent as the next dictionary.
func (g *GzipStream) remember(p []byte) {
	if len(p) >= DictSize {
		g.Dict = append(g.Dict[:0], p[len(p)-DictSize:]...)
		return
	}
	if over := len(g.Dict) + len(p) - DictSize; over > 0 {
		g.Dict = append(g.Dict[:0], g.Dict[over:]...)
	}
	g.Dict = append(g.Dict, p...)
}

// close writes the final block and the gzip trailer.
func (g *GzipStream) close() {
	if !g.head {
		return
	}
	if err := flate.StatelessDeflate(g.ResponseWriter, nil, true, nil); err != nil {
		return
	}
	var t [8]byte
	binary.LittleEndian.PutUint32(t[:4], g.crc)
	binary.LittleEndian.PutUint32(t[4:], g.size)
	_, _ = g.ResponseWriter.Write(t[:])
	g.Flush()
}

// Flush sends what was written; every Write already ends on a sync point.
// While held, nothing is sent until release.
func (g *GzipStream) Flush() {
	if !g.held {
		_ = http.NewResponseController(g.ResponseWriter).Flush()
	}
}

// Batch gathers one update's events on w when it compresses
// (GzipStream.hold), and returns what sends them.
func Batch(w http.ResponseWriter) func() error {
	g, ok := w.(*GzipStream)
	if !ok {
		return func() error { return nil }
	}
	g.hold()
	return g.release
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (g *GzipStream) Unwrap() http.ResponseWriter { return g.ResponseWriter }

var _ io.Writer = (*GzipStream)(nil)
