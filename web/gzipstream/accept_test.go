package gzipstream

import "testing"

func TestAcceptsEncoding(t *testing.T) {
	tests := []struct {
		header, coding string
		want           bool
	}{
		{"gzip, deflate, br, zstd", "br", true}, // Chromium's
		{"gzip, deflate", "br", false},
		{"br;q=0, gzip", "br", false},
		{"br; q=0.000", "br", false},
		{"BR;Q=0.5", "br", true},
		{"*", "br", true},
		{"*;q=0", "gzip", false},
		{"gzip;q=0, *", "gzip", false}, // named beats the star
		{"*;q=0, gzip", "gzip", true},
		{"brotli", "br", false},
		{"", "gzip", false},
		{"gzip;q=0.000", "gzip", false},
		{"deflate, gzip", "gzip", true},
	}
	for _, tt := range tests {
		if got := Accepts(tt.header, tt.coding); got != tt.want {
			t.Errorf("Accepts(%q, %q) = %v, want %v", tt.header, tt.coding, got, tt.want)
		}
	}
}
