package scenario_test

import (
	"runtime"
	"testing"

	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// liveHeap samples the heap in use after a collection every tenth frame
// and at the end: the most a streamed run holds at once.
type liveHeap struct {
	scenario.FrameWriter
	frames int
	max    uint64
	bytes  countingWriter
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func (h *liveHeap) sample() {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.max = max(h.max, ms.HeapInuse)
}

func (h *liveHeap) Frame(f *scenario.Frame) error {
	if h.frames++; h.frames%10 == 0 {
		h.sample()
	}
	return h.FrameWriter.Frame(f)
}

func (h *liveHeap) End(res *scenario.Result) error {
	err := h.FrameWriter.End(res)
	h.sample()
	return err
}

// A streamed run's memory does not grow with its length (issue 26: `run`
// held every frame, 532 MB at 300 s of search-cache with every request
// failing, ~6 GB at 3 600 s). The same overflow storm for 150 s and for six
// times as long: the long run writes over five times the JSON and holds no
// more live heap than the short one, give or take a few MB of GC timing.
func TestStreamMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("1 050 s of 20 000 req/s")
	}
	p, _ := scenario.Lookup("search-cache")
	run := func(duration string) *liveHeap {
		sc, cfg, err := settings.Apply(p, map[string]string{"rps": "20000", "fault_rate": "1", "duration": duration})
		if err != nil {
			t.Fatal(err)
		}
		h := &liveHeap{}
		h.FrameWriter = scenario.NewJSONLinesWriter(&h.bytes)
		if _, err := scenario.Stream(sc, cfg, 1, h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	short, long := run("150s"), run("900s")
	t.Logf("150 s: %d MB of JSON, live heap at most %.1f MB; 900 s: %d MB of JSON, at most %.1f MB",
		short.bytes.n>>20, float64(short.max)/(1<<20), long.bytes.n>>20, float64(long.max)/(1<<20))
	if long.bytes.n < 5*short.bytes.n {
		t.Fatalf("the 900 s run wrote %d bytes, the 150 s run %d: not the storm this test needs", long.bytes.n, short.bytes.n)
	}
	const slack = 4 << 20
	if long.max > short.max+slack {
		t.Errorf("live heap grew with the run: %.1f MB at 900 s, %.1f MB at 150 s", float64(long.max)/(1<<20), float64(short.max)/(1<<20))
	}
	// What is left is the simulator and one interval's events, about
	// 2 000 overflows a second here: well under the 100 MB the CLI's
	// heaviest run must stay within.
	if long.max > 16<<20 {
		t.Errorf("live heap %.1f MB streaming 20 000 failing req/s, want ≤ 16 MB", float64(long.max)/(1<<20))
	}
}
