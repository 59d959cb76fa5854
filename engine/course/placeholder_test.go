package course

import (
	"strings"
	"testing"
	"testing/fstest"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
)

// handResult wraps handFrames in a Result: three hosts, default
// outlier_detection but for the cap and the stdev factor.
func handResult() *scenario.Result {
	p, _ := scenario.Lookup("search-cache")
	sc := p.Scenario()
	sc.Cluster.Hosts = 3
	cfg := engine.DefaultConfig()
	cfg.MaxEjectionPercent = 34
	cfg.SuccessRateStdevFactor = 1900
	frames := handFrames()
	frames[3].Stats[engine.StatEjectionsActive] = 1 // the tick at 40 s: h2 is out
	frames[3].Healthy = 2
	return &scenario.Result{Scenario: sc, Config: cfg, Frames: frames}
}

func TestPlaceholderResolve(t *testing.T) {
	res := handResult()
	cases := []struct {
		ph     string
		cursor int64
		want   string
	}{
		{"hosts", WholeRun, "3"},
		{"interval", WholeRun, "10 s"},
		{"k", WholeRun, "1.9"},
		{"cap_pct", WholeRun, "34"},
		// The cap arithmetic for the run's host count: 100·(0+1)/3.
		{"cap_first", WholeRun, "33.3"},
		{"cap_admits", WholeRun, "1"},
		// With one host out at 40 s the next would make 100·2/3.
		{"cap_next@40s", WholeRun, "66.7"},
		{"sr_bound", WholeRun, "4.61"},
		{"sr_needed:1", WholeRun, "5"},
		{"sr_needed:2", WholeRun, "10"},
		{"sr_needed:3", WholeRun, "14"},
		{"setting:max_ejection_percent", WholeRun, "34"},
		{"setting:base_ejection_time", WholeRun, "30s"},
		{"setting:successful_active_health_check_uneject_host", WholeRun, "true"},
		{"setting:hosts", WholeRun, "3"},
		{"threshold@20s", WholeRun, "50.8"},
		{"mean@20s", WholeRun, "86.7"},
		{"stdev@20s", WholeRun, "18.9"},
		{"gate@10s", WholeRun, "skipped: 2 hosts with enough requests, 3 needed"},
		{"gate@20s", WholeRun, "ran"},
		{"hosts_with_volume@10s", WholeRun, "2"},
		{"success_rate:h2@20s", WholeRun, "60"},
		{"requests:h0@10s", WholeRun, "100"},
		{"multiplier:h2@40s", WholeRun, "1"},
		{"returns_in_s:h2@40s", WholeRun, "20 s"},
		{"ejected@40s", WholeRun, "h2"},
		{"ejected@20s", WholeRun, "none"},
		{"ejected_count@40s", WholeRun, "1"},
		{"panic@40s", WholeRun, "yes"},
		{"healthy@40s", WholeRun, "2"},
		{"healthy_pct@40s", WholeRun, "66.7"},
		{"stat:ejections_overflow@30s", WholeRun, "2"},
		{"stat:lb_healthy_panic@40s", WholeRun, "7"},
		// Windows: intervals 20–40 s hold 70 failures in 2000 requests.
		{"failure_pct@20s-40s", WholeRun, "3.5"},
		{"failure_pct@10s", WholeRun, "1"},
		{"retry_pct@0s-end", WholeRun, "10"},
		{"p99_ms@0s-30s", WholeRun, "30"},
		{"share:h2@30s-50s", WholeRun, "0"},
		{"share:h0@10s", WholeRun, "33.3"},
		{"first_eject_at:h2@30s-end", WholeRun, "none"},
		// Without a time, a placeholder follows the cursor: the state at
		// the last tick shown, or the sum over the intervals shown.
		{"ejected", 35000, "h2"},
		{"ejected", 25000, "none"},
		{"ejected", WholeRun, "none"},
		{"threshold", 25000, "50.8"},
		{"failure_pct", 20000, "1.5"},
		{"failure_pct", WholeRun, "3.5"},
		{"failure_pct@20s-now", 40000, "3.5"},
		{"failure_pct@20s-now", 30000, "3"},
		{"stat:ejections_overflow", 10000, "0"},
		// A fixed time is shown once the cursor reaches it, and then
		// stays put whatever the cursor does.
		{"ejected@40s", 40000, "h2"},
		{"ejected@40s", 90000, "h2"},
		{"failure_pct@20s-40s", 40000, "3.5"},
	}
	// Before the cursor reaches a fixed time the value would give away
	// what the learner is about to see: it does not resolve.
	for _, ph := range []string{"ejected@40s", "failure_pct@20s-40s", "retry_pct@0s-end"} {
		p, err := ParsePlaceholder(ph)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := p.Resolve(res, 30000); err == nil {
			t.Errorf("{{%s}} at cursor 30000 = %q, want not yet", ph, got)
		}
	}
	for _, tc := range cases {
		p, err := ParsePlaceholder(tc.ph)
		if err != nil {
			t.Errorf("%s: %v", tc.ph, err)
			continue
		}
		got, err := p.Resolve(res, tc.cursor)
		if err != nil || got != tc.want {
			t.Errorf("{{%s}} at cursor %d = %q, %v; want %q", tc.ph, tc.cursor, got, err, tc.want)
		}
	}
}

// What cannot be resolved is an error for Resolve and a dash for Expand.
func TestPlaceholderUnresolvable(t *testing.T) {
	res := handResult()
	for _, tc := range []struct {
		ph     string
		cursor int64
		err    string
	}{
		{"threshold@10s", WholeRun, "success rate did not run (too_few_hosts_with_volume)"},
		{"threshold@15s", WholeRun, "no tick at 15 s"},
		{"tick@15s", WholeRun, "no tick at 15 s"},
		{"threshold", 5000, "before the first tick"},
		{"success_rate:h9@20s", WholeRun, "no host h9"},
		{"success_rate:h2@40s", WholeRun, "no requests"},
		{"failure_pct", 5000, "no whole interval"},
		{"share:h9@0s-end", WholeRun, "no host h9"},
		{"first_eject_at:h9@0s-end", WholeRun, "no host h9"},
	} {
		p, err := ParsePlaceholder(tc.ph)
		if err != nil {
			t.Fatalf("%s: %v", tc.ph, err)
		}
		if _, err := p.Resolve(res, tc.cursor); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("{{%s}}: got %v, want an error containing %q", tc.ph, err, tc.err)
		}
	}
	if _, err := (Placeholder{Name: "hosts"}).Resolve(nil, WholeRun); err == nil {
		t.Error("resolved against no run")
	}
	got := Expand("T {{threshold@10s}}, hosts {{hosts}}, {{nonsense}}", res, WholeRun)
	if want := "T " + Dash + ", hosts 3, {{nonsense}}"; got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	if got := Expand("{{hosts}} and {{ k }}", nil, WholeRun); got != Dash+" and "+Dash {
		t.Errorf("Expand without a run = %q", got)
	}
}

func TestParsePlaceholderErrors(t *testing.T) {
	for _, tc := range []struct{ ph, err string }{
		{"", "empty"},
		{"thresold", `unknown name "thresold"`},
		{"hosts:h1", "hosts takes no argument"},
		{"success_rate@40s", "success_rate needs a host like success_rate:h5"},
		// The names that meant two things, or one thing twice, are gone.
		{"rate:h5@40s", `unknown name "rate"`},
		{"p99@30s-end", `unknown name "p99"`},
		{"returns_in:h5@40s", `unknown name "returns_in"`},
		{"success_rate:five@40s", "success_rate needs a host"},
		{"stat:overflows", "stat needs a stat name"},
		{"setting:max_ejection", "setting needs an outlier_detection field or scenario knob"},
		{"sr_needed:0", "sr_needed needs a whole number ≥ 1"},
		{"cap_pct@40s", "cap_pct does not depend on time"},
		{"threshold@end", "threshold needs a tick time like @40s"},
		{"threshold@0s", "threshold needs a tick time"},
		{"failure_pct@40s-30s", "failure_pct needs a window like @30s-300s"},
		{"failure_pct@40s-later", "failure_pct needs a window like @30s-300s, @30s-end or @30s-now"},
		{"failure_pct@soon", "failure_pct needs a window"},
		{"failure_pct@0s", "failure_pct@0s is not an interval"},
	} {
		_, err := ParsePlaceholder(tc.ph)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: got %v, want an error containing %q", tc.ph, err, tc.err)
		}
	}
}

// ExpandFunc hands each parsed placeholder to the caller, so the web layer
// can wrap the live numbers; Body resolves a lesson's markdown.
func TestExpandFuncAndBody(t *testing.T) {
	var seen []string
	out := ExpandFunc("a {{hosts}} b {{ threshold@40s }} c", func(p Placeholder) string {
		seen = append(seen, p.Name+"|"+p.At.String())
		return "<" + p.Raw + ">"
	})
	if out != "a <hosts> b <threshold@40s> c" || strings.Join(seen, ",") != "hosts|0 s,threshold|40 s" {
		t.Errorf("ExpandFunc = %q, saw %v", out, seen)
	}
	ls, err := Load(fstest.MapFS{"tiny.md": {Data: []byte(minimal)}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunLesson(ls[0], "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := Body(ls[0], &res, WholeRun); !strings.Contains(got, "The threshold at 40 s was 70.9.") {
		t.Errorf("Body = %q", got)
	}
}

// Values may be written unquoted: the YAML decoder turns them into the
// strings the settings are.
func TestUnquotedSettings(t *testing.T) {
	src := strings.Replace(minimal, `max_ejection_percent: "34"`, `max_ejection_percent: 34`, 1)
	ls, err := Load(fstest.MapFS{"tiny.md": {Data: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	if v := ls[0].Steps[1].Settings["max_ejection_percent"]; v != "34" {
		t.Errorf("unquoted 34 read as %q", v)
	}
}
