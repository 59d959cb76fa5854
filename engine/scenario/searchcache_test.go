package scenario

import (
	"encoding/json"
	"fmt"
	"testing"

	"outlierlab/engine"
)

// ev is an event in the replay format's words, for exact comparisons.
type ev struct {
	AtMs     int64
	Host     string
	Event    string
	Detector string
}

func (e ev) String() string { return fmt.Sprintf("%d %s %s %s", e.AtMs, e.Host, e.Event, e.Detector) }

func events(res Result, kinds ...engine.EventKind) []ev {
	var out []ev
	for _, f := range res.Frames {
		for _, e := range f.Events {
			keep := len(kinds) == 0
			for _, k := range kinds {
				keep = keep || e.Kind == k
			}
			if !keep {
				continue
			}
			x := ev{AtMs: e.AtMs, Host: e.Host, Event: e.Kind.String()}
			if e.Kind != engine.EventUneject {
				x.Detector = e.Detector.String()
			}
			out = append(out, x)
		}
	}
	return out
}

func mustRun(t testing.TB, sc Scenario, cfg engine.Config, seed uint64) Result {
	t.Helper()
	res, err := Run(sc, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// clientFailurePct is the clients' failure share over the frames whose
// interval starts at or after fromMs.
func clientFailurePct(res Result, fromMs int64) float64 {
	var r, f uint64
	for _, fr := range res.Frames {
		if fr.TMs-res.Config.IntervalMs >= fromMs {
			r += fr.Clients.Requests
			f += fr.Clients.Failures
		}
	}
	return pct(f, r)
}

// The article's figures, exactly (seeds/000): with defaults success rate
// detects h5 at every tick from 40 s and the cap refuses it; clients see
// 5.0–6.1% failures from 30 s on.
func TestSearchCacheDefaults(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		res := mustRun(t, SearchCache.Scenario(), SearchCache.Outlier, seed)
		if len(res.Frames) != 30 || res.Frames[0].TMs != 10000 {
			t.Fatalf("seed %d: %d frames, first at %d", seed, len(res.Frames), res.Frames[0].TMs)
		}
		var want []ev
		for at := int64(40000); at <= 300000; at += 10000 {
			want = append(want, ev{at, "h5", "overflow", "success_rate"})
		}
		if got := events(res); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d: events\n got %v\nwant %v", seed, got, want)
		}
		for _, f := range res.Frames {
			if f.TMs <= 30000 {
				continue
			}
			if p := f.Clients.FailurePct(); p < 5.0 || p > 6.1 {
				t.Errorf("seed %d, %d ms: clients see %.2f%% failures, want 5.0–6.1", seed, f.TMs, p)
			}
			if f.Hosts[5].Ejected {
				t.Errorf("seed %d: h5 ejected at %d", seed, f.TMs)
			}
		}
		if p := clientFailurePct(res, 30000); p < 5.0 || p > 6.1 {
			t.Errorf("seed %d: %.2f%% failures from 30 s, want 5.0–6.1", seed, p)
		}
		st := res.Summary.Stats
		if st[engine.StatEjectionsDetectedConsecutive5xx] != 0 || st[engine.StatEjectionsOverflow] != 27 || st[engine.StatEjectionsEnforcedTotal] != 0 {
			t.Errorf("seed %d: stats c5xx=%d overflow=%d enforced=%d", seed, st[engine.StatEjectionsDetectedConsecutive5xx], st[engine.StatEjectionsOverflow], st[engine.StatEjectionsEnforcedTotal])
		}
	}
}

// With max_ejection_percent 34: ejected at 40 s, back at 70 s, out again
// for 60 s then 90 s (backoff 1, 2, 3, 4); clients see 0.6–1.0% failures
// from 30 s on.
func TestSearchCacheCap34(t *testing.T) {
	want := []ev{
		{40000, "h5", "eject", "success_rate"},
		{70000, "h5", "uneject", ""},
		{80000, "h5", "eject", "success_rate"},
		{140000, "h5", "uneject", ""},
		{150000, "h5", "eject", "success_rate"},
		{240000, "h5", "uneject", ""},
		{250000, "h5", "eject", "success_rate"},
	}
	cfg := SearchCache.Outlier
	cfg.MaxEjectionPercent = 34
	for seed := uint64(1); seed <= 20; seed++ {
		res := mustRun(t, SearchCache.Scenario(), cfg, seed)
		if got := events(res); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d: events\n got %v\nwant %v", seed, got, want)
		}
		if p := clientFailurePct(res, 30000); p < 0.6 || p > 1.0 {
			t.Errorf("seed %d: %.2f%% failures from 30 s, want 0.6–1.0", seed, p)
		}
		if p := res.Summary.FailurePctSinceFault; p < 0.6 || p > 1.0 {
			t.Errorf("seed %d: summary %.2f%%", seed, p)
		}
	}
}

// A run is a pure function of its inputs: same inputs, same bytes; another
// seed, another run.
func TestDeterminism(t *testing.T) {
	cfg := SearchCache.Outlier
	cfg.MaxEjectionPercent = 34
	enc := func(seed uint64) []byte {
		res := mustRun(t, SearchCache.Scenario(), cfg, seed)
		b, err := json.Marshal(struct {
			F []Frame
			E []ev
			S Summary
		}{res.Frames, events(res), res.Summary})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := enc(7), enc(7)
	if string(a) != string(b) {
		t.Fatal("two runs with seed 7 differ")
	}
	if string(a) == string(enc(8)) {
		t.Fatal("seeds 7 and 8 gave identical runs")
	}
}
