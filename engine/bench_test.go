package engine

import "testing"

// Recording one result is on every request's path in Envoy's workers; the
// lab records ~180 000 per scenario run. Goal: ≤ 10 ns/op, 0 allocs/op.
func BenchmarkPutHTTPResponseCode(b *testing.B) {
	d, _, hs := newTestDetector(DefaultConfig(), 1)
	m := hs[0]
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%3 == 2 {
			m.PutHTTPResponseCode(503)
		} else {
			m.PutHTTPResponseCode(200)
		}
	}
	_ = d
}

// One interval tick over 100 hosts with traffic and a success-rate outlier.
// Goal: ≤ 5 µs/op, 0 allocs/op in steady state.
func BenchmarkTick100Hosts(b *testing.B) {
	cfg := DefaultConfig()
	cfg.MaxEjectionPercent = 0 // keep the outlier in: every tick does the full SR pass
	d, clock, hs := newTestDetector(cfg, 100)
	var events []Event
	fill := func() {
		for i, h := range hs {
			f := uint64(0)
			if i == 7 {
				f = 50
			}
			h.ext.current = bucket{total: 200, success: 200 - f}
		}
	}
	fill()
	d.Tick()
	events = d.DrainEvents(events[:0])
	b.ReportAllocs()
	for b.Loop() {
		fill()
		clock.Ms += 10000
		d.Tick()
		events = d.DrainEvents(events[:0])
	}
}
