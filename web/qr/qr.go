// Package qr draws a room's join address as a QR code in SVG, on the
// server: no service elsewhere is asked (a workshop room may be offline),
// and the page shows it at any size without blur.
package qr

import (
	"fmt"
	"strings"

	qrcode "github.com/yeqown/go-qrcode/v2"
)

// Quiet is the quiet zone around the code, in modules (the QR standard
// asks for four).
const Quiet = 4

// SVG draws text as a QR code (error correction M: a projector's glare
// and a phone's angle cost some modules) titled for screen readers.
func SVG(text, title string) (string, error) {
	q, err := qrcode.NewWith(text, qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionMedium))
	if err != nil {
		return "", fmt.Errorf("qr code: %w", err)
	}
	var m Matrix
	if err := q.Save(&m); err != nil {
		return "", fmt.Errorf("qr code: %w", err)
	}
	return m.svg(title), nil
}

// Matrix is a qrcode.Writer that keeps the modules (bits[y][x], true for
// dark).
type Matrix struct{ Bits [][]bool }

func (m *Matrix) Write(mat qrcode.Matrix) error {
	m.Bits = mat.Bitmap()
	return nil
}

func (m *Matrix) Close() error { return nil }

// svg is one path of unit squares, one per dark module, in a viewBox with
// the quiet zone; crispEdges keeps neighbouring squares seamless.
func (m *Matrix) svg(title string) string {
	n := len(m.Bits)
	size := n + 2*Quiet
	var d strings.Builder
	for y, row := range m.Bits {
		for x, dark := range row {
			if dark {
				fmt.Fprintf(&d, "M%d %dh1v1h-1z", x+Quiet, y+Quiet)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="qr" viewBox="0 0 %d %d" role="img" aria-label="%s" shape-rendering="crispEdges">`, size, size, htmlAttr(title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="%s"/></svg>`, size, size, d.String())
	return b.String()
}

// htmlAttr escapes text for a double-quoted attribute.
func htmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;").Replace(s)
}
