package sweep

import (
	"context"
	"slices"
	"strings"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		spec, param string
		first, last string
		n           int
		err         string
	}{
		{spec: "max_ejection_percent=0:100:1", param: "max_ejection_percent", first: "0", last: "100", n: 101},
		{spec: "max_ejection_percent=0:100:25", param: "max_ejection_percent", first: "0", last: "100", n: 5},
		{spec: "interval=1:3:0.5", param: "interval", first: "1.0s", last: "3.0s", n: 5},
		{spec: "fault_rate=0.1:0.3:0.1", param: "fault_rate", first: "0.1", last: "0.3", n: 3},
		{spec: "lb=round_robin,least_request,random", param: "lb", first: "round_robin", last: "random", n: 3},
		{spec: "max_ejection_percent", err: "want name=from:to:step"},
		{spec: "bogus=0:1:1", err: "bogus: unknown setting"},
		{spec: "max_ejection_percent=0:100", err: "want from:to:step"},
		{spec: "max_ejection_percent=0:100:0", err: "step 0 is not positive"},
		{spec: "max_ejection_percent=50:10:1", err: "to 10 is below from 50"},
		{spec: "max_ejection_percent=a:10:1", err: `"a" is not a number`},
		{spec: "max_ejection_percent=0:100000:1", err: "allowed at most 5000"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			param, values, err := ParseRange(tc.spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || param != tc.param || len(values) != tc.n || values[0] != tc.first || values[len(values)-1] != tc.last {
				t.Errorf("%s, %v, %v", param, values, err)
			}
		})
	}
}

// On six hosts the cap admits k hosts for k/6 ≤ p%: the percentages with
// the same answers are one behaviour.
func TestCanonicalCap(t *testing.T) {
	cfg := engine.DefaultConfig()
	for _, tc := range []struct{ p, want uint32 }{{0, 0}, {10, 0}, {16, 0}, {17, 17}, {33, 17}, {34, 34}, {49, 34}, {50, 50}, {84, 84}, {99, 84}, {100, 100}} {
		cfg.MaxEjectionPercent = tc.p
		if got := canonicalCap(cfg, 6, engine.DialectEnvoy); got != tc.want {
			t.Errorf("p=%d: %d, want %d", tc.p, got, tc.want)
		}
	}
	// always_eject_one_host admits the first ejection whatever the cap:
	// 0 and 17 then answer alike.
	cfg.AlwaysEjectOneHost, cfg.MaxEjectionPercent = true, 10
	if got := canonicalCap(cfg, 6, engine.DialectEnvoy); got != 0 {
		t.Errorf("always_eject_one_host, 10: %d", got)
	}
	// gRPC counts only the hosts already out (A50): 100·0/6 < p admits the
	// first ejection for any p > 0.
	cfg.AlwaysEjectOneHost, cfg.MaxEjectionPercent = false, 10
	if got := canonicalCap(cfg, 6, engine.DialectGRPC); got != 1 {
		t.Errorf("grpc, 10: %d", got)
	}
}

// A sweep that runs each behaviour once gives what running every value
// gives.
func TestSweepMatchesOneRunPerValue(t *testing.T) {
	_, values, _ := ParseRange("max_ejection_percent=0:100:5")
	sw, err := Run(context.Background(), Spec{Preset: scenario.SearchCache, Param: "max_ejection_percent", Values: values, Seeds: []uint64{1}})
	if err != nil {
		t.Fatal(err)
	}
	if sw.Runs != 7 {
		t.Errorf("%d runs, want 7 (one per cap answer on six hosts)", sw.Runs)
	}
	for i, v := range values {
		sc, cfg, err := settings.Apply(scenario.SearchCache, map[string]string{"max_ejection_percent": v})
		if err != nil {
			t.Fatal(err)
		}
		res, err := scenario.Run(sc, cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sw.Points[i].Metrics, MetricsOf(res); got != want {
			t.Errorf("max_ejection_percent=%s:\n sweep %+v\n  run  %+v", v, got, want)
		}
	}
}

func TestSweepBadValueNamesIt(t *testing.T) {
	_, err := Run(context.Background(), Spec{Preset: scenario.SearchCache, Param: "max_ejection_percent", Values: []string{"50", "101"}, Seeds: []uint64{1}})
	if err == nil || !strings.Contains(err.Error(), "max_ejection_percent=101: max_ejection_percent: 101 is out of range (allowed 0–100") {
		t.Errorf("err %v", err)
	}
	_, err = Run(context.Background(), Spec{Preset: scenario.SearchCache, Param: "nope", Values: []string{"1"}, Seeds: []uint64{1}})
	if err == nil || !strings.Contains(err.Error(), "nope: unknown setting") {
		t.Errorf("unknown param: %v", err)
	}
}

func TestBands(t *testing.T) {
	sw := &Sweep{Values: []string{"a"}, Seeds: []uint64{1, 2, 3, 4}, Points: []Point{
		{Metrics: Metrics{FailurePct: 4, Ejections: 1}}, {Metrics: Metrics{FailurePct: 1, Ejections: 3}},
		{Metrics: Metrics{FailurePct: 2, Ejections: 2}}, {Metrics: Metrics{FailurePct: 8, Ejections: 2}},
	}}
	b := sw.Bands()[0]
	if b.FailurePct != (Stat{1, 3, 8}) || b.Ejections != (Stat{1, 2, 3}) {
		t.Errorf("%+v", b)
	}
}

// The issue's own example: search-cache, seed 1, the cap raised from 10%
// to 34%.
func TestCompareSentences(t *testing.T) {
	d, err := CompareRuns(scenario.SearchCache, 1, map[string]string{}, map[string]string{"max_ejection_percent": "34"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"B sets max_ejection_percent to 34 (A: 10).",
		"B ejects h5 4 times, A never.",
		"Clients: 5.00% → 0.74% failures.",
		"Since the fault, clients: 5.56% → 0.83%.",
		"Ejections refused by the cap (max_ejection_percent): 27 → 0.",
		"Most hosts ejected at once: 0 → 1.",
	}
	if !slices.Equal(d.Sentences, want) {
		t.Errorf("sentences\n%s\nwant\n%s", strings.Join(d.Sentences, "\n"), strings.Join(want, "\n"))
	}
	same, err := CompareRuns(scenario.SearchCache, 1, map[string]string{"max_ejection_percent": "34"}, map[string]string{})
	if err != nil || same.Sentences[0] != "A and B run the same settings." || same.Sentences[1] != "Both eject the same hosts as often (4 ejections)." {
		t.Errorf("same: %q, %v", same.Sentences, err)
	}
	if _, err := CompareRuns(scenario.SearchCache, 1, map[string]string{}, map[string]string{"interval": "0s"}); err == nil || !strings.HasPrefix(err.Error(), "B: interval") {
		t.Errorf("bad B: %v", err)
	}
}

func TestParseSettings(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{"max_ejection_percent=34", map[string]string{"max_ejection_percent": "34"}, ""},
		{"retry_on=5xx,reset,max_ejection_percent=34", map[string]string{"retry_on": "5xx,reset", "max_ejection_percent": "34"}, ""},
		{"a=1,,b=2", map[string]string{"a": "1", "b": "2"}, ""},
		{"", map[string]string{}, ""},
		{"34", nil, `"34": want name=value`},
		{"=3", nil, `"=3": want name=value`},
	} {
		got, err := ParseSettings(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %v, %v", tc.in, got, err)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %s=%q, want %q", tc.in, k, got[k], v)
			}
		}
	}
}

// Plan is the distinct runs Run makes, before any runs: a cap sweep of six
// hosts is seven behaviours a seed; Progress counts them up to the total.
func TestPlanAndProgress(t *testing.T) {
	_, values, _ := ParseRange("max_ejection_percent=0:100:1")
	spec := Spec{Preset: scenario.SearchCache, Param: "max_ejection_percent", Values: values, Seeds: []uint64{1, 2}}
	jobs, err := Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 14 {
		t.Fatalf("%d jobs, want 14 (7 behaviours × 2 seeds)", len(jobs))
	}
	var calls []int
	spec.Progress = func(done, total int) {
		if total != len(jobs) {
			t.Errorf("total %d, want %d", total, len(jobs))
		}
		calls = append(calls, done)
	}
	sw, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Runs != len(jobs) || !slices.Equal(calls, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}) {
		t.Errorf("runs %d, progress %v", sw.Runs, calls)
	}
	if _, err := Plan(Spec{Preset: scenario.SearchCache, Param: "interval", Values: []string{"x"}, Seeds: []uint64{1}}); err == nil || !strings.Contains(err.Error(), "interval=x") {
		t.Errorf("a bad value: %v", err)
	}
}
