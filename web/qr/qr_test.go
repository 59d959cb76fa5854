package qr

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A join address drawn as a QR code: a square of 21 + 4k modules (the QR
// versions' sizes) in a viewBox with the quiet zone around it, one unit
// square per dark module and none in the quiet zone, the three finder
// patterns' corners dark, and the title escaped for its attribute. A
// longer address needs a larger code; one past any code's size is an
// error, not a broken picture.
func TestSVG(t *testing.T) {
	prev := 0
	for _, tt := range []struct {
		text, title, label string
	}{
		{"https://lab.example/r/K7QX2M", "Join room K7QX2M", "Join room K7QX2M"},
		{"https://lab.example/r/K7QX2M?from=" + strings.Repeat("a", 80), `Room "<b>" & co`, "Room &quot;&lt;b&gt;&quot; &amp; co"},
		{"https://lab.example/r/" + strings.Repeat("K7QX2M", 60), "a long one", "a long one"},
	} {
		svg, err := SVG(tt.text, tt.title)
		if err != nil {
			t.Fatalf("%q: %v", tt.text, err)
		}
		var m Matrix
		// The matrix behind the picture, as SVG draws it.
		q := regexp.MustCompile(`viewBox="0 0 (\d+) (\d+)"`).FindStringSubmatch(svg)
		if q == nil || q[1] != q[2] {
			t.Fatalf("%q: no square viewBox in %s", tt.text, svg[:min(len(svg), 200)])
		}
		size, _ := strconv.Atoi(q[1])
		n := size - 2*Quiet
		if n < 21 || (n-21)%4 != 0 {
			t.Errorf("%q: %d modules a side, not a QR version's size", tt.text, n)
		}
		if n <= prev {
			t.Errorf("%q: %d modules a side, not more than the shorter address's %d", tt.text, n, prev)
		}
		prev = n
		m.Bits = make([][]bool, n)
		for y := range m.Bits {
			m.Bits[y] = make([]bool, n)
		}
		for _, sq := range regexp.MustCompile(`M(\d+) (\d+)h1v1h-1z`).FindAllStringSubmatch(svg, -1) {
			x, _ := strconv.Atoi(sq[1])
			y, _ := strconv.Atoi(sq[2])
			if x < Quiet || y < Quiet || x >= Quiet+n || y >= Quiet+n {
				t.Fatalf("%q: a dark module at %d,%d, in the quiet zone", tt.text, x, y)
			}
			m.Bits[y-Quiet][x-Quiet] = true
		}
		// The finder patterns: a dark 7×7 ring at three corners.
		for _, c := range [][2]int{{0, 0}, {n - 7, 0}, {0, n - 7}} {
			for i := range 7 {
				for _, p := range [][2]int{{c[0] + i, c[1]}, {c[0] + i, c[1] + 6}, {c[0], c[1] + i}, {c[0] + 6, c[1] + i}} {
					if !m.Bits[p[1]][p[0]] {
						t.Errorf("%q: the finder pattern at %v lacks %v", tt.text, c, p)
					}
				}
			}
		}
		if again := m.svg(tt.title); again != svg {
			t.Errorf("%q: the matrix read back draws another picture", tt.text)
		}
		want := `aria-label="` + tt.label + `"`
		if !strings.Contains(svg, want) || strings.Contains(svg, "<b>") {
			t.Errorf("%q: the title is not escaped as %s", tt.text, want)
		}
	}
	if _, err := SVG(strings.Repeat("x", 4000), "too long"); err == nil {
		t.Error("4000 characters drew a QR code (the largest holds 2331 at level M)")
	}
}
