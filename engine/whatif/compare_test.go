package whatif

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/eventlog"
)

func compareDayFiles(t *testing.T, logName, eventsName string) (*Log, *eventlog.Log) {
	t.Helper()
	f, err := os.Open(filepath.Join(compareDir, logName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := ParseLog(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := os.Open(filepath.Join(compareDir, eventsName))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	events, err := eventlog.Parse(g, "search")
	if err != nil {
		t.Fatal(err)
	}
	return log, events
}

// The generated days against the cluster file. On the agree day every
// event of Envoy's has the lab's beside it. On the override day Envoy ran
// with consecutive_5xx 3: its three ejections on it are only Envoy's (two)
// or another detector's in the lab (one, which success rate ejected at the
// next tick), its returns of the first two are only Envoy's, and the
// finding names the field.
func TestCompareDays(t *testing.T) {
	c := compareConfig(t)
	for _, tc := range []struct {
		log, events string
		// consecutive5xx replaces the cluster file's, when not 0.
		consecutive5xx uint32
		want           MatchSummary
		phase          int64
		field          string
	}{
		{"agree.log", "agree-events.jsonl", 0, MatchSummary{EnvoyEvents: 10, LabEvents: 10, Agree: 10}, 4321, ""},
		{"agree.log", "problems-events.jsonl", 0, MatchSummary{EnvoyEvents: 10, LabEvents: 10, Agree: 10}, 4321, ""},
		{"override.log", "override-events.jsonl", 0, MatchSummary{EnvoyEvents: 10, LabEvents: 6, Agree: 5, Disagree: 1, OnlyEnvoy: 4}, 4321, "consecutive_5xx"},
		// Replayed as the finding says, with consecutive_5xx 3, the
		// override day agrees throughout.
		{"override.log", "override-events.jsonl", 3, MatchSummary{EnvoyEvents: 10, LabEvents: 10, Agree: 10}, 4321, ""},
	} {
		t.Run(tc.events+"/"+strconv.Itoa(int(tc.consecutive5xx)), func(t *testing.T) {
			log, events := compareDayFiles(t, tc.log, tc.events)
			cfg := c.Outlier
			if tc.consecutive5xx != 0 {
				cfg.Consecutive5xx = tc.consecutive5xx
			}
			cmp, err := Compare(log, events, Options{Config: cfg, PanicThreshold: c.PanicThreshold, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if cmp.Summary != tc.want || cmp.TickPhaseMs != tc.phase {
				t.Errorf("summary %+v, phase %d\nwant    %+v, %d", cmp.Summary, cmp.TickPhaseMs, tc.want, tc.phase)
			}
			for _, p := range cmp.Events {
				if p.Match == Agree && (p.Envoy == nil || p.Lab == nil || *p.DeltaMs != 0) {
					t.Errorf("agreement %+v", p)
				}
			}
			if tc.field == "" {
				if len(cmp.Findings) != 0 {
					t.Errorf("findings %+v", cmp.Findings)
				}
				return
			}
			if len(cmp.Findings) != 1 || cmp.Findings[0].Field != tc.field ||
				!strings.Contains(cmp.Findings[0].Text, "after 3 5xx responses in a row (event-log lines 1, 2, 8), where this config's consecutive_5xx is 5") {
				t.Errorf("findings %+v", cmp.Findings)
			}
		})
	}
}

// Each of the override day's disagreements says why, from the log.
func TestCompareOverrideReasons(t *testing.T) {
	c := compareConfig(t)
	log, events := compareDayFiles(t, "override.log", "override-events.jsonl")
	cmp, err := Compare(log, events, Options{Config: c.Outlier, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		match      Match
		line       int
		field, why string
	}
	var got []row
	for _, p := range cmp.Events {
		if p.Match == Agree {
			continue
		}
		got = append(got, row{p.Match, p.Envoy.Line, p.Field, strings.Join(p.Why, " ")})
	}
	want := []row{
		{OnlyEnvoy, 1, "consecutive_5xx", "The log shows 3 5xx responses in a row on 10.0.0.5:8080 up to 02:00:20.963; consecutive_5xx is 5 here. Envoy ejected at 3: it ran with consecutive_5xx = 3"},
		{OnlyEnvoy, 2, "consecutive_5xx", "The log shows 3 5xx responses in a row on 10.0.0.2:8080 up to 02:00:46.003"},
		{OnlyEnvoy, 3, "", "It ends Envoy's ejection of line 1"},
		{OnlyEnvoy, 5, "", "It ends Envoy's ejection of line 2"},
		{Disagree, 8, "consecutive_5xx", "Envoy ejected 10.0.0.5:8080 on consecutive_5xx, the lab on success_rate"},
	}
	if len(got) != len(want) {
		t.Fatalf("disagreements %+v", got)
	}
	for i, w := range want {
		if g := got[i]; g.match != w.match || g.line != w.line || g.field != w.field || !strings.Contains(g.why, w.why) {
			t.Errorf("%d: %+v\nwant %+v", i, g, w)
		}
	}
}

// sixHostsCase is sixHosts' log, a cap that lets one of its hosts out,
// and an Envoy event of "search" at ms after t0.
func sixHostsCase(t *testing.T) (*Log, engine.Config, func(line int, ms int64, host string, a eventlog.Action, detector string, enforced bool) eventlog.Event) {
	t.Helper()
	log, err := ParseLog(strings.NewReader(sixHosts()))
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.DefaultConfig()
	cfg.MaxEjectionPercent = 20
	return log, cfg, func(line int, ms int64, host string, a eventlog.Action, detector string, enforced bool) eventlog.Event {
		return eventlog.Event{Line: line, Time: t0.Add(time.Duration(ms) * time.Millisecond), Cluster: "search", Host: host, Action: a, Detector: detector, Enforced: enforced, NumEjections: 1}
	}
}

// Synthetic pairs for what the generated days do not show.
func TestComparePairs(t *testing.T) {
	log, cfg, ev := sixHostsCase(t)
	for _, tc := range []struct {
		name   string
		cfg    func(*engine.Config)
		events []eventlog.Event
		want   []Match
		field  string
		why    string
	}{
		// The lab ejects 10.0.0.5 at 20.902 s and returns it at 60 s.
		{"gateway enforced by Envoy, 0% here", nil, []eventlog.Event{
			ev(1, 20902, "10.0.0.5:8080", eventlog.Eject, "consecutive_gateway_failure", true),
			ev(2, 20902, "10.0.0.5:8080", eventlog.Eject, "consecutive_5xx", true),
			ev(3, 60000, "10.0.0.5:8080", eventlog.Uneject, "", false),
		}, []Match{Disagree, Agree, Agree}, "enforcing_consecutive_gateway_failure", "enforcing_consecutive_gateway_failure is 0% here, which draws nothing"},
		{"Envoy's cap let it out, the lab's refused it", func(c *engine.Config) { c.MaxEjectionPercent = 10 }, []eventlog.Event{
			ev(1, 20902, "10.0.0.5:8080", eventlog.Eject, "consecutive_5xx", true),
		}, []Match{OnlyEnvoy}, "max_ejection_percent", "The lab's cap refused it: 100·(0+1)/6 = 16.67% is over max_ejection_percent 10%. The lab counts 6 hosts"},
		{"no return in Envoy's log", nil, []eventlog.Event{
			ev(1, 20902, "10.0.0.5:8080", eventlog.Eject, "consecutive_5xx", true),
		}, []Match{Agree, OnlyLab, OnlyLab}, "consecutive_gateway_failure", "Envoy writes an EJECT line with enforced false for a detection it does not enforce"},
		{"a return missing from Envoy's log", nil, []eventlog.Event{
			ev(1, 20902, "10.0.0.5:8080", eventlog.Eject, "consecutive_gateway_failure", false),
			ev(2, 20902, "10.0.0.5:8080", eventlog.Eject, "consecutive_5xx", true),
		}, []Match{Agree, Agree, OnlyLab}, "", "Envoy's event log has no return of 10.0.0.5:8080 within an interval of 02:01:00.000, though Envoy ejected it too (line 2)"},
		{"before the log begins", nil, []eventlog.Event{
			ev(1, -5000, "10.0.0.1:8080", eventlog.Eject, "consecutive_5xx", true),
			ev(2, 20902, "10.0.0.5:8080", eventlog.Eject, "consecutive_gateway_failure", false),
			ev(3, 20902, "10.0.0.5:8080", eventlog.Eject, "consecutive_5xx", true),
			ev(4, 60000, "10.0.0.5:8080", eventlog.Uneject, "", false),
		}, []Match{OnlyEnvoy, Agree, Agree, Agree}, "", "It is before the access log begins (02:00:00.000)."},
		// Two returns of 10.0.0.1 put Envoy's ticks on the lab's; the
		// third is six seconds off them.
		{"a return six seconds early", nil, []eventlog.Event{
			ev(1, 20902, "10.0.0.5:8080", eventlog.Eject, "consecutive_gateway_failure", false),
			ev(2, 20902, "10.0.0.5:8080", eventlog.Eject, "consecutive_5xx", true),
			ev(3, 30000, "10.0.0.1:8080", eventlog.Uneject, "", false),
			ev(4, 40000, "10.0.0.1:8080", eventlog.Uneject, "", false),
			ev(5, 54000, "10.0.0.5:8080", eventlog.Uneject, "", false),
		}, []Match{Agree, Agree, OnlyEnvoy, OnlyEnvoy, Disagree}, "base_ejection_time", "Envoy returned 10.0.0.5:8080 at 02:00:54.000, the lab at 02:01:00.000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			cmp, err := Compare(log, &eventlog.Log{Cluster: "search", Events: tc.events}, Options{Config: c, PanicThreshold: 50, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			var got []Match
			found := false
			for _, p := range cmp.Events {
				got = append(got, p.Match)
				if p.Match != Agree && p.Field == tc.field && strings.Contains(strings.Join(p.Why, " "), tc.why) {
					found = true
				}
			}
			if strings.Join(matchStrings(got), ",") != strings.Join(matchStrings(tc.want), ",") || !found {
				for _, p := range cmp.Events {
					t.Logf("%s %s field %q: %v", p.Match, p.Host, p.Field, p.Why)
				}
				t.Errorf("matches %v, want %v with field %q saying %q", got, tc.want, tc.field, tc.why)
			}
		})
	}
}

func matchStrings(ms []Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out
}

// Envoy's timer phase is the residue most tick events share; a return at
// a health check (off the ticks) is outvoted, and without tick events the
// lab ticks from the log's first second.
func TestTickPhase(t *testing.T) {
	start := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	ev := func(ms int64, a eventlog.Action, detector string) eventlog.Event {
		return eventlog.Event{Time: start.Add(time.Duration(ms) * time.Millisecond), Action: a, Detector: detector}
	}
	for _, tc := range []struct {
		name   string
		events []eventlog.Event
		phase  int64
		used   int
	}{
		{"none", []eventlog.Event{ev(20902, eventlog.Eject, "consecutive_5xx")}, 0, 0},
		{"returns and a success-rate ejection", []eventlog.Event{ev(54321, eventlog.Uneject, ""), ev(64322, eventlog.Eject, "success_rate"), ev(94319, eventlog.Uneject, "")}, 4321, 3},
		{"a health-check return is outvoted", []eventlog.Event{ev(54321, eventlog.Uneject, ""), ev(57000, eventlog.Uneject, ""), ev(84330, eventlog.Uneject, "")}, 4330, 2},
		{"drift across the interval's end", []eventlog.Event{ev(59990, eventlog.Uneject, ""), ev(70010, eventlog.Uneject, ""), ev(80005, eventlog.Uneject, "")}, 5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			phase, used := tickPhase(tc.events, start, 10_000)
			if phase != tc.phase || used != tc.used {
				t.Errorf("phase %d from %d, want %d from %d", phase, used, tc.phase, tc.used)
			}
		})
	}
}

// The cluster's hosts from Envoy's /clusters join the log's: with ten,
// Envoy's default cap (10%) lets 10.0.0.5 out, where six refuse it.
func TestRunWithClusterHosts(t *testing.T) {
	log, err := ParseLog(strings.NewReader(sixHosts()))
	if err != nil {
		t.Fatal(err)
	}
	idle := []string{"10.0.0.7:8080", "10.0.0.8:8080", "10.0.0.5:8080", "10.0.0.9:8080", "10.0.0.10:8080"}
	res, err := Run(log, Options{Config: engine.DefaultConfig(), PanicThreshold: 50, Seed: 1, Hosts: idle})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Hosts); n != 10 || res.Hosts[6] != "10.0.0.7:8080" || res.Summary.Ejections != 1 || res.Summary.Overflows != 0 {
		t.Errorf("hosts %v, summary %+v", res.Hosts, res.Summary)
	}
	if want := "Hosts are the cluster's 10: the 6 the log names and 4 more from Envoy's /clusters"; !strings.HasPrefix(res.Summary.Caveats[0], want) {
		t.Errorf("caveat %q", res.Summary.Caveats[0])
	}
	if p, err := Plan(log, Options{Config: engine.DefaultConfig(), Hosts: idle}); err != nil || p.Hosts != 10 {
		t.Errorf("plan %+v (%v)", p, err)
	}
}

// A finding needs every disagreeing ejection on the detector at one
// count: Envoy ejecting 10.0.0.5 after the third of its five 503 says
// consecutive_5xx = 3; one more ejection, of a host the log shows no
// failure on, leaves the lab without a finding.
func TestFindingNeedsEveryEjection(t *testing.T) {
	log, cfg, event := sixHostsCase(t)
	ev := func(line int, ms int64, host string) eventlog.Event {
		return event(line, ms, host, eventlog.Eject, "consecutive_5xx", true)
	}
	third := ev(2, 20502, "10.0.0.5:8080")
	for _, tc := range []struct {
		name     string
		events   []eventlog.Event
		findings int
	}{
		{"at the third 503", []eventlog.Event{third}, 1},
		{"and a host without failures", []eventlog.Event{ev(1, 5000, "10.0.0.1:8080"), third}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmp, err := Compare(log, &eventlog.Log{Cluster: "search", Events: tc.events}, Options{Config: cfg, PanicThreshold: 50, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(cmp.Findings) != tc.findings {
				t.Fatalf("findings %+v", cmp.Findings)
			}
			p := cmp.Events[len(tc.events)-1]
			if p.Match != Disagree || p.Field != "consecutive_5xx" || *p.DeltaMs != 400 {
				t.Errorf("the third 503's ejection: %+v", p)
			}
			if tc.findings == 1 && !strings.Contains(cmp.Findings[0].Text, "Envoy ran with consecutive_5xx = 3") {
				t.Errorf("finding %q", cmp.Findings[0].Text)
			}
		})
	}
}
