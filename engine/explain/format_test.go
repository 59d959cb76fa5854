package explain

import (
	"math"
	"testing"
)

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{0, "0"},
		{40000, "40"},
		{250, "0.25"},
		{1234, "1.234"},
		{9999, "9.999"},
		// Rounded, not cut: the log line of an event at 20.1 s (issue 8).
		{20090, "20.1"},
		{20100, "20.1"},
		{20149, "20.1"},
		{20150, "20.2"},
		{20050, "20.1"}, // half-way rounds up
		{123456, "123.5"},
		{301500, "301.5"},
		// Rounding to a tenth would read as the whole second (a tick):
		// the decimals that say otherwise are kept.
		{239960, "239.96"},
		{239951, "239.95"},
		{20040, "20.04"},
		{20001, "20.001"},
		{239999, "239.999"},
		{10001, "10.001"},
		{10050, "10.1"},
		{-1500, "-1.5"},
		// Total over int64 (issue 19: -MinInt64 is MinInt64, and the
		// recursion on it never ended).
		{math.MinInt64, "-9223372036854776"},
		{math.MaxInt64, "9223372036854776"},
		{math.MinInt64 + 1, "-9223372036854776"},
	} {
		if got := Seconds(tc.ms); got != tc.want {
			t.Errorf("Seconds(%d) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}

func TestDistinct(t *testing.T) {
	for _, tc := range []struct {
		a, b         float64
		wantA, wantB string
	}{
		{66.7, 70.8, "66.7", "70.8"},
		{99.94, 99.91, "99.94", "99.91"},
		// The burst log's "99.9% is below the threshold 99.9%" (issue 8).
		{99.8667, 99.8991, "99.87", "99.90"},
		{99.90001, 99.90049, "99.9000", "99.9005"},
		{99.90001, 99.90002, "99.9000", "99.9000"}, // equal to four decimals
		{10.0049, 10, "10.005", "10.000"},
		{0, 100, "0.0", "100.0"},
	} {
		a, b := Distinct(tc.a, tc.b)
		if a != tc.wantA || b != tc.wantB {
			t.Errorf("Distinct(%v, %v) = %q, %q; want %q, %q", tc.a, tc.b, a, b, tc.wantA, tc.wantB)
		}
	}
}

// σ keeps two significant digits however small it is.
func TestSigmaDigits(t *testing.T) {
	for _, tc := range []struct {
		sd   float64
		d    int
		want string
	}{
		{12.4, 1, "12.4"},
		{1.0, 1, "1.0"},
		{0.0373, 2, "0.037"},
		{0.0373, 1, "0.037"},
		{0.5, 1, "0.50"},
		{0.00001, 1, "0.0000"},
		{0, 1, "0.0"},
	} {
		if got := sigma(tc.sd, tc.d); got != tc.want {
			t.Errorf("sigma(%v, %d) = %q, want %q", tc.sd, tc.d, got, tc.want)
		}
	}
}
