package scenario

import (
	"fmt"
	"strings"
	"testing"

	"outlierlab/engine"
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
		// Rounding to a tenth would read as the whole second (a sweep):
		// the decimals that say otherwise are kept.
		{239960, "239.96"},
		{239951, "239.95"},
		{20040, "20.04"},
		{20001, "20.001"},
		{239999, "239.999"},
		{10001, "10.001"},
		{10050, "10.1"},
		{-1500, "-1.5"},
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

// The text output's sentences round times and print the digits that show
// the comparison they state.
func TestSentenceDigits(t *testing.T) {
	for _, tc := range []struct {
		ev   engine.Event
		want string
	}{
		{engine.Event{AtMs: 20090, Host: "h2", Kind: engine.EventOverflow, Detector: engine.SuccessRate,
			Cap: engine.CapAdmits(0, 6, 10, false), HostSuccessRate: 99.8667, Mean: 99.97, Threshold: 99.8991},
			"20.1s h2 detected: success_rate 99.87% below threshold 99.90% (mean 99.97); cap 100·(0+1)/6 = 16.7% > max_ejection_percent 10%: refused (overflow)"},
		{engine.Event{AtMs: 239960, Host: "h5", Kind: engine.EventEject, Detector: engine.SuccessRate, Enforcing: 100, Backoff: 2, DurationMs: 60000,
			Cap: engine.CapAdmits(0, 6, 34, false), HostSuccessRate: 66.7, Mean: 94.4, Threshold: 70.8},
			"239.96s h5 ejected: success_rate 66.7% below threshold 70.8% (mean 94.4); cap 100·(0+1)/6 = 16.7% ≤ 34%; out for 60s (multiplier 2)"},
		{engine.Event{AtMs: 40000, Host: "h0", Kind: engine.EventOverflow, Detector: engine.Consecutive5xx,
			Cap: engine.CapCheck{Active: 200, Hosts: 2009, Percent: 100 * 201.0 / 2009, MaxPercent: 10}},
			"40s h0 detected: consecutive_5xx; cap 100·(200+1)/2009 = 10.005% > max_ejection_percent 10%: refused (overflow)"},
	} {
		if got := Sentence(tc.ev); got != tc.want {
			t.Errorf("\n got: %s\nwant: %s", got, tc.want)
		}
	}
}

// The text output's last line gives the retries as a share of requests
// and the retry overflows, so the two worlds of max_retries can be told
// apart from the command line.
func TestWriteTextRetries(t *testing.T) {
	sc := retune(t, BadDeploy, map[string]string{"duration": "60s"})
	res := mustRun(t, sc, BadDeploy.Outlier, 1)
	var b strings.Builder
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	want := fmt.Sprintf("; %d retries (%.2f%% of requests), %d retry overflows;", s.Retries, 100*float64(s.Retries)/float64(s.Requests), s.RetryOverflow)
	if s.Retries == 0 || s.RetryOverflow == 0 || !strings.Contains(b.String(), want) {
		t.Errorf("last line lacks %q:\n%s", want, b.String()[strings.LastIndex(strings.TrimSpace(b.String()), "\n")+1:])
	}
}
