package web

import (
	"fmt"
	"strings"

	qrcode "github.com/yeqown/go-qrcode/v2"
)

// The join address as a QR code, drawn by the server as SVG: no service
// elsewhere is asked (a workshop room may be offline), and the page shows
// it at any size without blur.

// qrQuiet is the quiet zone around the code, in modules (the QR standard
// asks for four).
const qrQuiet = 4

// qrSVG draws text as a QR code (error correction M: a projector's glare
// and a phone's angle cost some modules) titled for screen readers.
func qrSVG(text, title string) (string, error) {
	q, err := qrcode.NewWith(text, qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionMedium))
	if err != nil {
		return "", fmt.Errorf("qr code: %w", err)
	}
	var m qrMatrix
	if err := q.Save(&m); err != nil {
		return "", fmt.Errorf("qr code: %w", err)
	}
	return m.svg(title), nil
}

// qrMatrix is a qrcode.Writer that keeps the modules (bits[y][x], true for
// dark).
type qrMatrix struct{ bits [][]bool }

func (m *qrMatrix) Write(mat qrcode.Matrix) error {
	m.bits = mat.Bitmap()
	return nil
}

func (m *qrMatrix) Close() error { return nil }

// svg is one path of unit squares, one per dark module, in a viewBox with
// the quiet zone; crispEdges keeps neighbouring squares seamless.
func (m *qrMatrix) svg(title string) string {
	n := len(m.bits)
	size := n + 2*qrQuiet
	var d strings.Builder
	for y, row := range m.bits {
		for x, dark := range row {
			if dark {
				fmt.Fprintf(&d, "M%d %dh1v1h-1z", x+qrQuiet, y+qrQuiet)
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
