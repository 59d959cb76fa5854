package challenge

import (
	"math"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/course"
	"outlierlab/engine/scenario"
)

// Intervals count for failures_at_most when they lie inside the window:
// from 40 s, the ticks at 50 s … 100 s (six intervals).

// frames builds a run of ticks every 10 s to 100 s on hosts h0–h3: out
// lists who is ejected after each tick (by tick time), ejects the eject
// events, failPct the clients' failures per interval (1000 requests
// each), panicAt the intervals in panic.
func frames(out map[int64][]string, ejects map[int64]string, failPct map[int64]float64, panicAt ...int64) *scenario.Result {
	run := &scenario.Result{Summary: scenario.Summary{IntervalMs: 10000}}
	for t := int64(10000); t <= 100000; t += 10000 {
		f := scenario.Frame{TMs: t, Clients: scenario.ClientFrame{Requests: 1000, Failures: uint64(failPct[t] * 10)}}
		for _, h := range []string{"h0", "h1", "h2", "h3"} {
			ej := false
			for _, o := range out[t] {
				ej = ej || o == h
			}
			f.Hosts = append(f.Hosts, scenario.HostFrame{Name: h, Ejected: ej})
		}
		if h, ok := ejects[t]; ok {
			f.Events = append(f.Events, engine.Event{AtMs: t, Host: h, Kind: engine.EventEject})
		}
		for _, p := range panicAt {
			f.Panic = f.Panic || p == t
		}
		run.Frames = append(run.Frames, f)
	}
	return run
}

func s(n int64) course.Ms { return course.Ms(n * 1000) }

// Every kind, on a run where it holds and one where it does not: the
// pass, the value and the moment that decided a failure.
func TestGoalKinds(t *testing.T) {
	h1At40 := frames(map[int64][]string{40000: {"h1"}, 50000: {"h1"}}, map[int64]string{40000: "h1"}, nil)
	twoOut := frames(map[int64][]string{60000: {"h1", "h2"}, 70000: {"h1", "h2", "h3"}}, map[int64]string{60000: "h1"}, nil)
	failing := frames(nil, nil, map[int64]float64{50000: 3, 60000: 9, 70000: 1})
	calm := frames(nil, nil, map[int64]float64{50000: 0.5})
	panicky := frames(nil, nil, nil, 80000, 90000)
	tests := []struct {
		name  string
		goal  Goal
		run   *scenario.Result
		pass  bool
		value float64
		atMs  int64
	}{
		{"ejected in time", Goal{Kind: KindEjectedWithin, Host: "h1", After: s(30), Within: s(10)}, h1At40, true, 10, 0},
		{"ejected late", Goal{Kind: KindEjectedWithin, Host: "h1", After: s(20), Within: s(10)}, h1At40, false, 20, 30000},
		{"never ejected", Goal{Kind: KindEjectedWithin, Host: "h2", After: s(30), Within: s(15)}, h1At40, false, math.Inf(1), 50000},
		{"ejected before the clock starts is not in time", Goal{Kind: KindEjectedWithin, Host: "h1", After: s(50), Within: s(20)}, h1At40, false, math.Inf(1), 70000},
		{"failures under the bound", Goal{Kind: KindFailuresAtMost, From: s(40), To: course.End, Max: 1}, calm, true, 0.5 / 6, 0},
		{"failures over: the worst interval", Goal{Kind: KindFailuresAtMost, From: s(40), To: course.End, Max: 1}, failing, false, 13.0 / 6, 60000},
		{"failures outside the window do not count", Goal{Kind: KindFailuresAtMost, From: s(60), To: s(100), Max: 1}, failing, true, 1.0 / 4, 0},
		{"one out at most", Goal{Kind: KindMaxOut, To: course.End, Max: 1}, h1At40, true, 1, 0},
		{"two out: the first tick over", Goal{Kind: KindMaxOut, To: course.End, Max: 1}, twoOut, false, 3, 60000},
		{"max_out's window", Goal{Kind: KindMaxOut, From: s(70), To: s(90), Max: 2}, twoOut, false, 3, 70000},
		{"nothing ejected", Goal{Kind: KindNotEjected, To: course.End}, calm, true, 0, 0},
		{"an ejection", Goal{Kind: KindNotEjected, To: course.End}, h1At40, false, 1, 40000},
		{"the bad host excepted", Goal{Kind: KindNotEjected, Except: []string{"h1"}, To: course.End}, h1At40, true, 0, 0},
		{"only the hosts named", Goal{Kind: KindNotEjected, Hosts: []string{"h2", "h3"}, To: course.End}, twoOut, false, 0, 60000},
		{"out from before the window", Goal{Kind: KindNotEjected, From: s(50), To: course.End}, h1At40, false, 0, 50000},
		{"no panic", Goal{Kind: KindNoPanic, To: course.End}, calm, true, 0, 0},
		{"a panic", Goal{Kind: KindNoPanic, To: course.End}, panicky, false, 2, 80000},
		{"panic after the window", Goal{Kind: KindNoPanic, To: s(70)}, panicky, true, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.goal.Measure(tc.run)
			if o.Pass != tc.pass || math.Abs(o.Value-tc.value) > 1e-9 && !(math.IsInf(o.Value, 1) && math.IsInf(tc.value, 1)) || o.AtMs != tc.atMs {
				t.Errorf("%s: pass %v value %v at %d (%s); want pass %v value %v at %d", tc.goal.Words(), o.Pass, o.Value, o.AtMs, o.Detail, tc.pass, tc.value, tc.atMs)
			}
			if o.Detail == "" {
				t.Error("no detail")
			}
		})
	}
}

func TestGoalWords(t *testing.T) {
	for _, tc := range []struct {
		g    Goal
		want string
	}{
		{Goal{Kind: KindEjectedWithin, Host: "h5", After: s(30), Within: s(20)}, "h5 ejected within 20 s of 30 s"},
		{Goal{Kind: KindFailuresAtMost, From: s(60), To: course.End, Max: 2.5}, "clients' failures ≤ 2.5% from 60 s to the end"},
		{Goal{Kind: KindMaxOut, To: course.End, Max: 1}, "never more than 1 host ejected at once over the whole run"},
		{Goal{Kind: KindNotEjected, Except: []string{"h5"}, From: s(30), To: s(90)}, "no host but h5 ejected from 30 s to 90 s"},
		{Goal{Kind: KindNoPanic, To: course.End}, "no panic over the whole run"},
	} {
		if got := tc.g.Words(); got != tc.want {
			t.Errorf("%s: %q; want %q", tc.g.Kind, got, tc.want)
		}
	}
}
