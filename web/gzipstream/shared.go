package gzipstream

import (
	"bytes"
	"hash/crc32"
	"io"
	"net/http"
	"sync"

	"github.com/klauspost/compress/flate"
)

// Shared is bytes that many streams send as they are: the panels every
// follower of a room gets after the instructor's move. A GzipStream does
// not compress them with its own dictionary (that is per stream, so the
// work would be repeated for every follower): they are deflated once, on
// their own, and each stream copies the blocks. Deflate blocks that refer
// to nothing before them are valid anywhere in a deflate stream that
// stands on a byte boundary, which every update here ends on (a sync
// flush); the gzip trailer's CRC and size, and the next update's
// dictionary, are updated from the plain bytes.
type Shared struct {
	Plain []byte
	once  sync.Once
	z     []byte
	zerr  error
}

// NewShared is b to be sent by many streams; b must not change after.
func NewShared(b []byte) *Shared { return &Shared{Plain: b} }

// deflated is Plain as deflate blocks ending on a sync point, made once,
// by the first stream that sends it (the others wait for it). At the
// streams' own level: a higher one saved 5% of the bytes and would delay
// every follower.
func (s *Shared) deflated() ([]byte, error) {
	s.once.Do(func() {
		var out bytes.Buffer
		s.zerr = deflateAlone(&out, s.Plain)
		s.z = out.Bytes()
	})
	return s.z, s.zerr
}

// Deflated is how many bytes s takes compressed (made if not yet).
func (s *Shared) Deflated() int {
	z, _ := s.deflated()
	return len(z)
}

// WriteShared writes s to w: to a GzipStream its blocks made once, to
// any other writer its plain bytes.
func WriteShared(w io.Writer, s *Shared) error {
	g, ok := w.(*GzipStream)
	if !ok {
		_, err := w.Write(s.Plain)
		return err
	}
	if len(s.Plain) == 0 {
		return nil
	}
	if g.held {
		g.cuts = append(g.cuts, cut{at: len(*g.pending), s: s})
		return nil
	}
	if err := g.writeShared(s); err != nil {
		return err
	}
	g.Flush()
	return nil
}

// cut is a Shared written during an update, at an offset of pending.
type cut struct {
	at int
	s  *Shared
}

func (g *GzipStream) writeShared(s *Shared) error {
	z, err := s.deflated()
	if err != nil {
		return err
	}
	if err := g.header(); err != nil {
		return err
	}
	if _, err := g.ResponseWriter.Write(z); err != nil {
		return err
	}
	g.sent(s.Plain)
	return nil
}

// smallPlain: plain bytes between shared ones (a tab's own signals, its
// script's nonce) shorter than this are sent in a stored block: resetting
// a compressor with 32 KiB of dictionary, or building a block's Huffman
// tables, costs more than the whole update's shared bytes cost a
// follower, and a few hundred bytes gain little from either.
const smallPlain = 1 << 10

// writeSmall sends a short p as a stored (uncompressed) deflate block:
// the stream stands on a byte boundary, so the block is a zero header
// byte (not final, stored), the length and its complement, and p.
func (g *GzipStream) writeSmall(p []byte) error {
	if err := g.header(); err != nil {
		return err
	}
	n := uint16(len(p))
	hdr := [5]byte{0, byte(n), byte(n >> 8), byte(^n), byte(^n >> 8)}
	if _, err := g.ResponseWriter.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := g.ResponseWriter.Write(p); err != nil {
		return err
	}
	g.sent(p)
	return nil
}

// writeOwn compresses p on its own, as deflate blocks ending on a sync
// point.
func (g *GzipStream) writeOwn(p []byte) error {
	if err := g.header(); err != nil {
		return err
	}
	if err := deflateAlone(g.ResponseWriter, p); err != nil {
		return err
	}
	g.sent(p)
	return nil
}

// deflateAlone writes p to w as deflate blocks that refer to nothing
// before them, ending on a sync point.
func deflateAlone(w io.Writer, p []byte) error {
	fw := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(fw)
	// Not Reset: it would keep the dictionary a stream last set.
	fw.ResetDict(w, nil)
	if _, err := fw.Write(p); err != nil {
		return err
	}
	return fw.Flush()
}

// header writes the gzip member header once.
func (g *GzipStream) header() error {
	if g.head {
		return nil
	}
	if _, err := g.ResponseWriter.Write(gzipHeader); err != nil {
		return err
	}
	g.head = true
	return nil
}

// sent accounts for plain bytes the browser will have decoded.
func (g *GzipStream) sent(p []byte) {
	g.crc = crc32.Update(g.crc, crc32.IEEETable, p)
	g.size += uint32(len(p))
	g.remember(p)
}

// releaseCuts sends an update that holds shared bytes: each plain run
// between them compressed without the dictionary (a short one stored),
// each shared one copied. Resetting a compressor with the 32 KiB
// dictionary costs a follower more than all the rest of its redraw
// (fillWindow hashes all of it), and what precedes a redraw's own bytes
// is the last update's shared ones, which they hardly repeat.
func (g *GzipStream) releaseCuts(b []byte) error {
	cuts := g.cuts
	g.cuts = nil // an idle stream keeps no shared bytes alive
	prev := 0
	plain := func(p []byte) error {
		switch {
		case len(p) == 0:
			return nil
		case len(p) < smallPlain:
			return g.writeSmall(p)
		}
		return g.writeOwn(p)
	}
	for _, c := range cuts {
		if err := plain(b[prev:c.at]); err != nil {
			return err
		}
		if err := g.writeShared(c.s); err != nil {
			return err
		}
		prev = c.at
	}
	if err := plain(b[prev:]); err != nil {
		return err
	}
	return http.NewResponseController(g.ResponseWriter).Flush()
}
