package course

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// handFrames is a small run built by hand: three hosts, ticks every 10 s
// to 60 s. h2 fails from 10 s; it is detected and refused by the cap at
// 20 s, ejected by success rate at 30 s and back at 60 s. A consecutive
// overflow happens mid-interval at 25.5 s. Panic during the interval to
// 40 s.
func handFrames() []scenario.Frame {
	var frames []scenario.Frame
	for t := int64(10000); t <= 60000; t += 10000 {
		f := scenario.Frame{TMs: t}
		ejected := t >= 30000 && t < 60000
		for _, name := range []string{"h0", "h1", "h2"} {
			h := scenario.HostFrame{Name: name, Requests: 100, Successes: 100, SuccessRate: 100, Attempts: 100}
			if name == "h2" && t >= 20000 {
				h.Successes, h.SuccessRate = 60, 60
				h.Ejected = ejected
				if ejected {
					h.Multiplier, h.NumEjections, h.ReturnsInMs = 1, 1, 60000-t
					h.Attempts, h.Requests, h.Successes, h.SuccessRate = 0, 0, 0, -1
				}
			}
			f.Hosts = append(f.Hosts, h)
		}
		f.Clients = scenario.ClientFrame{Requests: 1000, Failures: 10 * uint64(t/10000), RetriesSent: 100, LatencyP99Ms: float64(t / 1000)}
		f.SuccessRate = scenario.RateFrame{Gate: "ran", HostsWithVolume: 3, MinimumHosts: 3, Mean: 86.7, StdDev: 18.9, Threshold: 50.8}
		if t == 10000 {
			f.SuccessRate = scenario.RateFrame{Gate: "too_few_hosts_with_volume", HostsWithVolume: 2, MinimumHosts: 3, Mean: -1, Threshold: -1}
		}
		switch t {
		case 20000:
			f.Events = []engine.Event{{AtMs: 20000, Host: "h2", Kind: engine.EventOverflow, Detector: engine.SuccessRate}}
			f.Stats[engine.StatEjectionsOverflow] = 1
		case 30000:
			f.Events = []engine.Event{
				{AtMs: 25500, Host: "h2", Kind: engine.EventOverflow, Detector: engine.Consecutive5xx},
				{AtMs: 30000, Host: "h2", Kind: engine.EventEject, Detector: engine.SuccessRate},
			}
		case 60000:
			f.Events = []engine.Event{{AtMs: 60000, Host: "h2", Kind: engine.EventUneject}}
		}
		if t >= 30000 {
			f.Stats[engine.StatEjectionsOverflow] = 2
			f.Stats[engine.StatEjectionsEnforcedTotal] = 1
		}
		if t == 40000 {
			f.Panic = true
			f.Cluster.LbHealthyPanic = 7
		}
		if t > 40000 {
			f.Cluster.LbHealthyPanic = 7
		}
		frames = append(frames, f)
	}
	return frames
}

// check reads a check the way a lesson file writes it.
func mustCheck(t *testing.T, src string) Check {
	t.Helper()
	var c Check
	if err := yaml.UnmarshalStrict([]byte(src), &c); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return c
}

func TestEvaluate(t *testing.T) {
	frames := handFrames()
	cases := []struct {
		check  string
		pass   bool
		needs  int64
		detail string // a substring of Detail
	}{
		{`{kind: ejected, host: h2, at: 30s}`, true, 30000, "h2 ejected at 30 s: yes"},
		{`{kind: ejected, host: h2, at: 20s}`, false, 20000, "h2 ejected at 20 s: no"},
		{`{kind: ejected, host: h2, at: 25s}`, false, 30000, "no tick at 25 s (ticks every 10 s)"},
		{`{kind: ejected, host: h2, at: 90s}`, false, 60000, "the run ends at 60 s, before 90 s"},
		{`{kind: ejected, host: h9, at: 30s}`, false, 30000, "no host h9"},
		{`{kind: not_ejected, host: h2, at: 20s}`, true, 20000, "h2 ejected at 20 s: no"},
		{`{kind: not_ejected, host: h2, from: 10s, to: 60s}`, false, 60000, "h2 was ejected at 30 s"},
		{`{kind: not_ejected, from: 10s, to: 20s}`, true, 20000, "hosts ejected at any tick 10–20 s: none"},
		{`{kind: not_ejected, host: h0, from: 10s}`, true, 60000, "10 s–end"},
		{`{kind: ejected_hosts, at: 30s, min: 1, max: 1}`, true, 30000, "hosts ejected at 30 s: 1 (h2) (wanted 1)"},
		{`{kind: ejected_hosts, at: 60s, max: 0}`, true, 60000, "0 (none)"},
		// Events: at is the exact time; a window is by event time, so
		// the mid-interval consecutive overflow is in 25–26 s.
		{`{kind: event, event: eject, host: h2, detector: success_rate, at: 30s}`, true, 30000, "h2 eject (success_rate) at 30 s: 1 [30 s]"},
		{`{kind: event, event: overflow, from: 20s, to: 30s, min: 2}`, true, 30000, "overflow in 20–30 s: 2 [h2 20 s, h2 25.5 s] (wanted ≥ 2)"},
		{`{kind: event, event: overflow, detector: consecutive_5xx, from: 25s, to: 26s}`, true, 30000, ": 1 [h2 25.5 s]"},
		{`{kind: event, event: eject, detector: consecutive_5xx, from: 0s, to: end, max: 0}`, true, 60000, "eject (consecutive_5xx) in 0 s–end: 0 (wanted ≤ 0)"},
		{`{kind: event, event: detect, from: 10s}`, false, 60000, "detect in 10 s–end: 0 (wanted ≥ 1)"},
		{`{kind: event, event: uneject, host: h2, at: 60s}`, true, 60000, "h2 uneject at 60 s: 1"},
		// Stats: the value at a tick, or the increase over a window.
		{`{kind: stat, name: ejections_overflow, at: 30s, min: 2}`, true, 30000, "ejections_overflow at 30 s: 2 (wanted ≥ 2)"},
		{`{kind: stat, name: ejections_overflow, from: 30s, to: 60s, max: 0}`, false, 60000, "ejections_overflow increase 30–60 s: 1 (wanted ≤ 0)"},
		{`{kind: stat, name: lb_healthy_panic, from: 40s, to: 40s, min: 1}`, true, 40000, "lb_healthy_panic increase 40–40 s: 7"},
		// Clients: intervals inside the window: 20–40 s is the intervals
		// to 30 and 40 s: 70 failures in 2000 requests.
		{`{kind: clients, name: failure_pct, from: 20s, to: 40s, min: 3.4, max: 3.6}`, true, 40000, "clients' failure pct 20–40 s: 3.5% (wanted 3.4–3.6%)"},
		{`{kind: clients, name: failures, at: 10s, min: 10, max: 10}`, true, 10000, "interval to 10 s: 10"},
		{`{kind: clients, name: retry_pct, min: 10, max: 10}`, true, 60000, "retry pct 0 s–end: 10%"},
		{`{kind: clients, name: p99_ms, from: 0s, to: 30s, max: 20}`, false, 30000, "p99 ms 0–30 s: 30 ms (wanted ≤ 20 ms)"},
		// Success rate: a gate, a figure, or every tick of a window.
		{`{kind: success_rate, is: too_few_hosts_with_volume, at: 10s}`, true, 10000, "too_few_hosts_with_volume"},
		{`{kind: success_rate, is: ran, from: 10s, to: 30s}`, false, 30000, "too_few_hosts_with_volume (2 with volume, 3 needed) at 10 s (wanted ran)"},
		{`{kind: success_rate, name: threshold, at: 20s, min: 50.7, max: 50.9}`, true, 20000, "success rate threshold at 20 s: 50.8 (wanted 50.7–50.9)"},
		{`{kind: success_rate, name: mean, at: 10s, min: 0}`, false, 10000, "did not run at 10 s"},
		{`{kind: success_rate, name: hosts_with_volume, at: 10s, max: 2}`, true, 10000, ": 2"},
		{`{kind: host, host: h2, name: success_rate, at: 20s, min: 59, max: 61}`, true, 20000, "h2 success rate at 20 s: 60 (wanted 59–61)"},
		{`{kind: host, host: h2, name: returns_in_s, at: 40s, min: 20, max: 20}`, true, 40000, "returns in s at 40 s: 20"},
		{`{kind: host, host: h2, name: multiplier, at: 30s, min: 2}`, false, 30000, "multiplier at 30 s: 1 (wanted ≥ 2)"},
		// Share: h2 had no attempts while ejected (30–50 s): 0 of 200.
		{`{kind: share, host: h2, from: 30s, to: 50s, max: 0}`, true, 50000, "h2's share of attempts 30–50 s: 0%"},
		{`{kind: share, host: h0, at: 10s, min: 33, max: 34}`, true, 10000, "33.33%"},
		{`{kind: panic, at: 40s}`, true, 40000, "panic in the interval to 40 s: yes (40 s)"},
		{`{kind: panic, from: 10s, to: 30s}`, false, 30000, "panic in intervals to 10–30 s: no"},
		{`{kind: no_panic, from: 10s}`, false, 60000, "yes (40 s) (wanted no)"},
		// Combinations: needs is the furthest frame any part reads.
		{`{all: [{kind: ejected, host: h2, at: 30s}, {kind: event, event: uneject, host: h2, at: 60s}]}`, true, 60000, "h2 ejected at 30 s: yes; h2 uneject at 60 s: 1"},
		{`{all: [{kind: ejected, host: h2, at: 30s}, {kind: ejected, host: h2, at: 60s}]}`, false, 60000, "h2 ejected at 60 s: no"},
		{`{any: [{kind: ejected, host: h2, at: 20s}, {kind: ejected, host: h2, at: 30s}]}`, true, 30000, "(h2 ejected at 20 s: no | h2 ejected at 30 s: yes)"},
	}
	for _, tc := range cases {
		c := mustCheck(t, tc.check)
		r := Evaluate(c, &scenario.Result{Frames: frames}, WholeRun)
		if r.Pass != tc.pass || r.NeedsCursorMs != tc.needs || !r.Decided || !strings.Contains(r.Detail, tc.detail) {
			t.Errorf("%s\n got pass=%v needs=%d decided=%v detail %q\nwant pass=%v needs=%d detail containing %q",
				tc.check, r.Pass, r.NeedsCursorMs, r.Decided, r.Detail, tc.pass, tc.needs, tc.detail)
		}
	}
}

// Before the cursor reaches the frame a check needs, the check is "not
// yet", even if the answer is already known; at and past it, decided.
func TestEvaluateCursor(t *testing.T) {
	run := &scenario.Result{Frames: handFrames()}
	c := mustCheck(t, `{all: [{kind: ejected, host: h2, at: 30s}, {kind: event, event: uneject, host: h2, at: 60s}]}`)
	for _, tc := range []struct {
		cursor  int64
		pass    bool
		decided bool
		detail  string
	}{
		{0, false, false, "not yet: step to 60 s"},
		{30000, false, false, "not yet: step to 60 s"},
		{59999, false, false, "not yet: step to 60 s"},
		{60000, true, true, "h2 ejected at 30 s: yes"},
		{WholeRun, true, true, "h2 uneject at 60 s: 1"},
	} {
		r := Evaluate(c, run, tc.cursor)
		if r.Pass != tc.pass || r.Decided != tc.decided || r.NeedsCursorMs != 60000 || !strings.Contains(r.Detail, tc.detail) {
			t.Errorf("cursor %d: got %+v, want pass=%v decided=%v detail %q", tc.cursor, r, tc.pass, tc.decided, tc.detail)
		}
	}
	// A part already shown can settle it: an all with a failed part fails,
	// an any with a passed part passes, before the cursor reaches the rest.
	c = mustCheck(t, `{all: [{kind: ejected, host: h2, at: 20s}, {kind: event, event: uneject, host: h2, at: 60s}]}`)
	if r := Evaluate(c, run, 10000); r.Decided {
		t.Errorf("all, failed part not shown yet: %+v", r)
	}
	if r := Evaluate(c, run, 20000); !r.Decided || r.Pass || r.NeedsCursorMs != 60000 || r.Detail != "h2 ejected at 20 s: no" {
		t.Errorf("all with a failed part at 20 s: %+v", r)
	}
	c = mustCheck(t, `{any: [{kind: ejected, host: h2, at: 30s}, {kind: event, event: uneject, host: h2, at: 60s}]}`)
	if r := Evaluate(c, run, 30000); !r.Decided || !r.Pass || r.Detail != "h2 ejected at 30 s: yes" {
		t.Errorf("any with a passed part at 30 s: %+v", r)
	}
	// A window that ends mid-interval needs the tick that closes it.
	c = mustCheck(t, `{kind: event, event: overflow, from: 25s, to: 26s}`)
	if r := Evaluate(c, run, 29999); r.Decided || r.NeedsCursorMs != 30000 {
		t.Errorf("window to 26 s: %+v, want needs 30000 and not decided at 29999", r)
	}
	// "end" is the last frame of whatever run is given.
	c = mustCheck(t, `{kind: no_panic, from: 50s}`)
	if r := Evaluate(c, &scenario.Result{Frames: run.Frames[:5]}, WholeRun); r.NeedsCursorMs != 50000 || !r.Pass {
		t.Errorf("end of a 50 s run: %+v", r)
	}
}

func TestCheckValidate(t *testing.T) {
	cases := []struct {
		check string
		err   string
	}{
		{`{}`, "missing kind"},
		{`{kind: ejectd, host: h1, at: 10s}`, `unknown kind "ejectd"`},
		{`{kind: ejected, at: 10s}`, "(ejected): needs host"},
		{`{kind: ejected, host: h1}`, "(ejected): needs at"},
		{`{kind: ejected, host: h1, from: 10s, to: 20s}`, "takes at, not from/to"},
		{`{kind: ejected, host: h1, at: 10s, min: 1}`, "(ejected): does not take min"},
		{`{kind: not_ejected, host: h1}`, "needs at or from/to"},
		{`{kind: not_ejected, host: h1, at: 10s, from: 0s, to: 20s}`, "use at or from/to, not both"},
		{`{kind: not_ejected, from: 30s, to: 20s}`, "to 20 s is before from 30 s"},
		{`{kind: ejected_hosts, at: 10s}`, "needs min or max"},
		{`{kind: event, at: 10s}`, "(event): needs event"},
		{`{kind: event, event: ejection, at: 10s}`, `event "ejection" is not one of eject, detect, overflow, uneject`},
		{`{kind: event, event: eject, detector: sr, at: 10s}`, `detector "sr" is not one of consecutive_5xx, consecutive_gateway_failure`},
		{`{kind: event, event: uneject, detector: success_rate, at: 10s}`, "an uneject has no detector"},
		{`{kind: event, event: eject, at: 10s, min: 3, max: 1}`, "max 1 is below min 3"},
		{`{kind: stat, name: ejections_overflows, at: 10s, min: 1}`, `name "ejections_overflows" is not one of`},
		{`{kind: stat, name: ejections_overflow, at: 10s}`, "needs min or max"},
		{`{kind: clients, name: failure_rate, min: 1}`, `name "failure_rate" is not one of failure_pct`},
		{`{kind: clients, name: failure_pct, at: end, min: 1}`, "at cannot be end"},
		{`{kind: success_rate, at: 10s}`, "needs is"},
		{`{kind: success_rate, is: skipped, at: 10s}`, `is "skipped" is not one of ran`},
		{`{kind: success_rate, is: ran, name: mean, at: 10s}`, "use is (a gate) or name with min/max"},
		{`{kind: host, host: h1, name: sr, at: 10s, min: 1}`, `name "sr" is not one of success_rate`},
		{`{kind: share, host: h1, at: 10s}`, "needs min or max"},
		{`{kind: panic, host: h1, at: 10s}`, "(panic): does not take host"},
		{`{all: []}`, "check.all: is empty"},
		{`{all: [{kind: panic, at: 10s}], any: [{kind: panic, at: 10s}]}`, "use one of all, any or kind"},
		{`{all: [{kind: panic, at: 10s}], at: 10s}`, "all cannot have parameters of its own"},
		{`{any: [{kind: panic}]}`, "check.any[0] (panic): needs at or from/to"},
		{`{kind: setting, min: 1}`, "(setting): needs name"},
		{`{kind: setting, name: max_ejection_pct, min: 17}`, `unknown setting "max_ejection_pct" (an outlier_detection field`},
		{`{kind: setting, name: max_ejection_percent}`, "(setting): needs min or max"},
		{`{kind: setting, name: max_ejection_percent, is: "17"}`, "max_ejection_percent is a number: use min and max"},
		{`{kind: setting, name: max_ejection_percent, min: 18, max: 17}`, "max 17 is below min 18"},
		{`{kind: setting, name: always_eject_one_host, min: 1}`, "always_eject_one_host is not a number: use is"},
		{`{kind: setting, name: always_eject_one_host}`, "needs is (the value always_eject_one_host must have)"},
		{`{kind: setting, name: always_eject_one_host, is: "yes"}`, `is "yes" is not a value of always_eject_one_host (one of true, false)`},
		{`{kind: setting, name: fault_pattern, is: even}`, "one of interleaved, random"},
		{`{kind: setting, name: hosts, min: 6, at: 40s}`, "(setting): does not take at"},
	}
	for _, tc := range cases {
		var c Check
		if err := yaml.UnmarshalStrict([]byte(tc.check), &c); err != nil {
			t.Errorf("%s: parse: %v", tc.check, err)
			continue
		}
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %v, want an error containing %q", tc.check, err, tc.err)
		}
	}
}

// A setting check reads the settings the run was made with, as lessons
// write them: numbers (durations in seconds) within min/max, other values
// by equality. It reads no frame, so it is decided at any cursor.
func TestEvaluateSetting(t *testing.T) {
	p, _ := scenario.Lookup("search-cache")
	sc, _, err := settings.Apply(p, map[string]string{"max_ejection_percent": "34", "base_ejection_time": "45s", "fault_pattern": "random", "hosts": "8"})
	if err != nil {
		t.Fatal(err)
	}
	run := &scenario.Result{Scenario: sc, Config: sc.Outlier, Frames: handFrames()}
	for _, tc := range []struct {
		check  string
		pass   bool
		detail string
	}{
		{`{kind: setting, name: max_ejection_percent, min: 34, max: 34}`, true, "setting max_ejection_percent: 34 (wanted 34)"},
		{`{kind: setting, name: max_ejection_percent, min: 17, max: 17}`, false, "setting max_ejection_percent: 34 (wanted 17)"},
		{`{kind: setting, name: base_ejection_time, min: 40}`, true, "setting base_ejection_time: 45s (wanted ≥ 40)"},
		{`{kind: setting, name: always_eject_one_host, is: "true"}`, false, "setting always_eject_one_host: false (wanted true)"},
		{`{kind: setting, name: fault_pattern, is: random}`, true, "setting fault_pattern: random"},
		{`{kind: setting, name: hosts, max: 8}`, true, "setting hosts: 8 (wanted ≤ 8)"},
		{`{kind: setting, name: retry_on, is: 5xx}`, true, "setting retry_on: 5xx"},
		{`{all: [{kind: setting, name: hosts, min: 8}, {kind: ejected, host: h2, at: 30s}]}`, true, "setting hosts: 8 (wanted ≥ 8); h2 ejected at 30 s: yes"},
	} {
		c := mustCheck(t, tc.check)
		r := Evaluate(c, run, 0)
		if c.All == nil && (!r.Decided || r.NeedsCursorMs != 0) {
			t.Errorf("%s: not decided at the start: %+v", tc.check, r)
		}
		if c.All != nil {
			r = Evaluate(c, run, WholeRun)
		}
		if r.Pass != tc.pass || !strings.Contains(r.Detail, tc.detail) {
			t.Errorf("%s: got pass=%v %q, want pass=%v with %q", tc.check, r.Pass, r.Detail, tc.pass, tc.detail)
		}
	}
}

// Times are written as durations; a bare number is refused so that "40"
// never silently means 40 ms, and Ms survives a JSON round trip.
func TestMsParsing(t *testing.T) {
	var c Check
	if err := yaml.UnmarshalStrict([]byte(`{kind: panic, at: 40}`), &c); err == nil || !strings.Contains(err.Error(), `quoted duration like "40s"`) {
		t.Errorf("bare number: %v", err)
	}
	if err := yaml.UnmarshalStrict([]byte(`{kind: panic, at: 40x}`), &c); err == nil {
		t.Error("40x parsed")
	}
	if err := yaml.UnmarshalStrict([]byte(`{kind: panic, at: 1m30s, from: 0s, to: end}`), &c); err != nil || c.At != 90000 || c.To != End {
		t.Errorf("1m30s/end: %v %+v", err, c)
	}
	b, err := json.Marshal(Check{Kind: KindPanic, At: 90000, To: End})
	if err != nil || string(b) != `{"kind":"panic","at":"1m30s","to":"end"}` {
		t.Errorf("marshal: %s %v", b, err)
	}
}
