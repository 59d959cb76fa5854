package scenario

import (
	"math"
	"testing"

	"outlierlab/engine"
)

// tenSecondFrames is six ticks every 10 s; the interval to t s has
// 100·t/10 requests, t/10 failures, 10 retries, and a p99 of t ms.
func tenSecondFrames() []Frame {
	var frames []Frame
	for t := int64(10000); t <= 60000; t += 10000 {
		n := uint64(t / 10000)
		frames = append(frames, Frame{TMs: t,
			Clients: ClientFrame{Requests: 100 * n, Failures: n, RetriesSent: 10, BudgetRefusals: 1, NoHealthy: n % 2,
				LatencyP50Ms: float64(t) / 2000, LatencyP99Ms: float64(t) / 1000},
			Hosts: []HostFrame{{Name: "h0", Attempts: 3 * n}, {Name: "h1", Attempts: n}},
		})
	}
	return frames
}

// A window holds the intervals that lie wholly inside it: [25 s, 50 s]
// is the intervals 30–40 and 40–50 s, not 20–30 s (it starts before 25 s).
func TestWindow(t *testing.T) {
	frames := tenSecondFrames()
	for _, tc := range []struct {
		from, to int64
		ticks    []int64
	}{
		{0, math.MaxInt64, []int64{10000, 20000, 30000, 40000, 50000, 60000}},
		{25000, 50000, []int64{40000, 50000}},
		{30000, 50000, []int64{40000, 50000}},
		{20000, 20000, nil},
		{0, 9999, nil},
		{50000, 60000, []int64{60000}},
		{60000, math.MaxInt64, nil},
	} {
		w := Window(frames, tc.from, tc.to)
		var got []int64
		for _, f := range w {
			got = append(got, f.TMs)
		}
		if len(got) != len(tc.ticks) {
			t.Errorf("Window(%d, %d) = %v, want %v", tc.from, tc.to, got, tc.ticks)
			continue
		}
		for i := range got {
			if got[i] != tc.ticks[i] {
				t.Errorf("Window(%d, %d) = %v, want %v", tc.from, tc.to, got, tc.ticks)
			}
		}
	}
}

func TestTotals(t *testing.T) {
	frames := tenSecondFrames()
	got := Totals(Window(frames, 20000, 40000)) // the intervals to 30 and 40 s
	want := ClientTotals{Intervals: 2, Requests: 700, Failures: 7, RetriesSent: 20, BudgetRefusals: 2, NoHealthy: 1,
		LatencyP50Ms: 20, LatencyP99Ms: 40}
	if got != want {
		t.Errorf("Totals = %+v, want %+v", got, want)
	}
	if p := got.FailurePct(); p != 1 {
		t.Errorf("FailurePct = %v, want 1", p)
	}
	if p := got.RetryPct(); math.Abs(p-100*20.0/700) > 1e-12 {
		t.Errorf("RetryPct = %v", p)
	}
	if z := Totals(nil); z.FailurePct() != 0 || z.RetryPct() != 0 || z.Intervals != 0 {
		t.Errorf("empty Totals = %+v", z)
	}
	mine, all, found := HostAttempts(frames[:2], "h1")
	if mine != 3 || all != 12 || !found {
		t.Errorf("HostAttempts(h1) = %d of %d, %v; want 3 of 12", mine, all, found)
	}
	if _, _, found := HostAttempts(frames, "h9"); found {
		t.Error("h9 found")
	}
}

func TestCountEvents(t *testing.T) {
	frames := []Frame{
		{Events: []engine.Event{{Kind: engine.EventEject}, {Kind: engine.EventOverflow}, {Kind: engine.EventEject}}},
		{},
		{Events: []engine.Event{{Kind: engine.EventUneject}, {Kind: engine.EventEject}}},
	}
	for _, tt := range []struct {
		kind engine.EventKind
		want int
	}{{engine.EventEject, 3}, {engine.EventOverflow, 1}, {engine.EventUneject, 1}, {engine.EventDetect, 0}} {
		if got := CountEvents(frames, tt.kind); got != tt.want {
			t.Errorf("CountEvents(%v) = %d, want %d", tt.kind, got, tt.want)
		}
	}
	if got := CountEvents(nil, engine.EventEject); got != 0 {
		t.Errorf("no frames: %d", got)
	}
}
