package engine

import "testing"

// The interval's peak streak (HostSample.Peak5xx) against the detector's
// own counter (Consecutive): each row feeds one host a string of results
// (f a 503, s a 200), then ticks; the tick reports where the counter
// stands (now) and the highest it stood in the interval (peak).
func TestPeak5xxPerInterval(t *testing.T) {
	tests := []struct {
		name      string
		intervals []string // the results fed before each tick
		now, peak []uint32 // per tick
		ejectedAt int      // the tick index after which the host is ejected, -1 never
	}{
		{"a dead host's five reach the threshold and the ejection resets them",
			[]string{"ssss", "sfffff", ""}, []uint32{0, 0, 0}, []uint32{0, 5, 0}, 1},
		{"every third fails: 1, 0, 0; the peak stays 1",
			[]string{"ssfssfssf", "ssfssfs"}, []uint32{1, 0}, []uint32{1, 1}, -1},
		{"a streak carried over a tick counts in the next interval's peak",
			[]string{"sfff", "", "fs"}, []uint32{3, 3, 0}, []uint32{3, 3, 4}, -1},
		{"a success resets the counter, not the interval's peak",
			[]string{"ffffsff", "s"}, []uint32{2, 0}, []uint32{4, 2}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxEjectionPercent = 100
			d, clock, hs := newTestDetector(cfg, 1)
			for i, feed := range tc.intervals {
				for _, r := range feed {
					if r == 'f' {
						hs[0].PutHTTPResponseCode(503)
					} else {
						hs[0].PutHTTPResponseCode(200)
					}
				}
				clock.Ms += cfg.IntervalMs
				rep := d.Tick()
				s := rep.Hosts[0]
				c5xx, _, _ := hs[0].Consecutive()
				if s.Consecutive5xx != c5xx || s.Consecutive5xx != tc.now[i] || s.Peak5xx != tc.peak[i] {
					t.Errorf("tick %d after %q: now %d (detector %d), peak %d; want now %d, peak %d",
						i, feed, s.Consecutive5xx, c5xx, s.Peak5xx, tc.now[i], tc.peak[i])
				}
				if want := tc.ejectedAt >= 0 && i >= tc.ejectedAt; s.Ejected != want {
					t.Errorf("tick %d: ejected %v, want %v", i, s.Ejected, want)
				}
			}
		})
	}
}
