package scenario

import "testing"

// levelShare is the share of attempts the hosts from index first on
// served in the frames whose tick is in [fromMs, toMs].
func levelShare(t *testing.T, res Result, first int, fromMs, toMs int64) float64 {
	t.Helper()
	var mine, all uint64
	for _, f := range res.Frames {
		if f.TMs < fromMs || f.TMs > toMs {
			continue
		}
		for i, h := range f.Hosts {
			all += h.Attempts
			if i >= first {
				mine += h.Attempts
			}
		}
	}
	if all == 0 {
		t.Fatal("no attempts")
	}
	return 100 * float64(mine) / float64(all)
}

// TestLocalityFailover: P1 idles while P0 is healthy; two of P0's four
// hosts ejected leave it 140·2/4 = 70 healthy, and 30% of the picks go
// to P1.
func TestLocalityFailover(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		res, err := Run(LocalityFailover.Scenario(), LocalityFailover.Outlier, seed)
		if err != nil {
			t.Fatal(err)
		}
		if got := levelShare(t, res, 4, 10_000, 30_000); got != 0 {
			t.Errorf("seed %d: P1 served %.1f%% before the fault", seed, got)
		}
		if got := levelShare(t, res, 4, 50_000, 60_000); got < 28 || got > 32 {
			t.Errorf("seed %d: P1 served %.1f%% with two P0 hosts out, want ~30%%", seed, got)
		}
		if f := res.Frames[3]; !f.Hosts[2].Ejected || !f.Hosts[3].Ejected || f.Panic {
			t.Errorf("seed %d: at 40 s h2 ejected %v, h3 %v, panic %v", seed, f.Hosts[2].Ejected, f.Hosts[3].Ejected, f.Panic)
		}
	}
}

// TestCapEmptiesLevel: a 20% cap over ten hosts admits both of P0's two:
// the whole level goes, and P1 takes every pick, out of panic.
func TestCapEmptiesLevel(t *testing.T) {
	res, err := Run(CapEmptiesLevel.Scenario(), CapEmptiesLevel.Outlier, 1)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Frames[3]
	if !f.Hosts[0].Ejected || !f.Hosts[1].Ejected || f.PanicAtEnd {
		t.Fatalf("at 40 s h0 ejected %v, h1 %v, panic %v", f.Hosts[0].Ejected, f.Hosts[1].Ejected, f.PanicAtEnd)
	}
	if got := levelShare(t, res, 2, 50_000, 60_000); got != 100 {
		t.Errorf("P1 served %.1f%% with P0 empty", got)
	}
}
