package explain

import (
	"strconv"
	"strings"
)

// Seconds writes a time in milliseconds as seconds, without the unit, the
// way the decision log and the text output print times: "40", "0.25",
// "1.234", "20.1". Below 10 s every millisecond is kept. From 10 s on one
// decimal is enough and the value is rounded to it (20.05 s reads 20.1,
// as a lesson quoting the event says), except where rounding would land
// on a whole second the time is not: 239.96 s is not the 240 s tick, so
// it keeps the decimals that say so (239.96).
func Seconds(ms int64) string {
	if ms < 0 {
		// -ms overflows for MinInt64 (it is MinInt64 again); the magnitude
		// always fits in a uint64.
		return "-" + secondsOf(uint64(-(ms+1))+1)
	}
	return secondsOf(uint64(ms))
}

// secondsOf is Seconds of a magnitude; ms ≤ 2⁶³, so rounding up by 50
// cannot overflow.
func secondsOf(ms uint64) string {
	if ms%1000 == 0 {
		return strconv.FormatUint(ms/1000, 10)
	}
	if ms < 10000 {
		return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)
	}
	// Integer rounding, half away from zero: no binary fraction decides
	// a tie (20.05 s is 20050 ms, exactly half-way).
	for _, d := range []uint64{100, 10} {
		r := (ms + d/2) / d * d
		if r%1000 != 0 {
			return strconv.FormatFloat(float64(r)/1000, 'f', -1, 64)
		}
	}
	return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
}

// Distinct writes two percentages (or any two rates) with the fewest
// decimals, at least one and at most four, at which they read differently,
// so a sentence that says one is below the other shows it: 99.94 and
// 99.91 read "99.94" and "99.91", not "99.9" and "99.9". Rounding keeps
// the order, so the printed numbers never contradict the comparison.
// Values equal to four decimals are printed with four.
func Distinct(a, b float64) (string, string) {
	for d := 1; ; d++ {
		sa, sb := strconv.FormatFloat(a, 'f', d, 64), strconv.FormatFloat(b, 'f', d, 64)
		if sa != sb || d == 4 {
			return sa, sb
		}
	}
}

// decimals is how many digits a formatted number has after its point.
func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// sigma writes a standard deviation with d decimals, or more (up to four)
// until it shows two significant digits: a σ of 0.037 points is what puts
// the threshold a few hundredths under the mean, and "0.0" would hide it.
func sigma(sd float64, d int) string {
	for ; ; d++ {
		s := strconv.FormatFloat(sd, 'f', d, 64)
		if d >= 4 || sd == 0 || sd >= 1 || len(strings.TrimLeft(strings.ReplaceAll(s, ".", ""), "0")) >= 2 {
			return s
		}
	}
}

// fixed writes v with d decimals.
func fixed(v float64, d int) string { return strconv.FormatFloat(v, 'f', d, 64) }

// factor writes success_rate_stdev_factor as the multiplier it is (Envoy
// stores it ×1000: 1900 is 1.9), with no trailing zeros.
func factor(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
