package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestWhatifEventsCommand(t *testing.T) {
	const dir = "testdata/whatif/compare/"
	cfg := []string{"-config", dir + "cluster.yaml"}
	garbage := writeTrace(t, "not an event\n{\"action\":\"DRAIN\"}\n")
	foreign := writeTrace(t, `{"type":"CONSECUTIVE_5XX","timestamp":"2026-11-30T02:00:31.003Z","cluster_name":"payments","upstream_url":"10.0.1.7:9090","action":"UNEJECT","num_ejections":1,"enforced":false}`+"\n")
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"agree day: every event matched", append([]string{"-log", dir + "agree.log", "-events", dir + "agree-events.jsonl"}, cfg...), 0,
			"matched (Envoy 10 events, the lab 10): agree 10, disagree 0, only Envoy 0, only the lab 0\n", ""},
		{"the timer's phase", append([]string{"-log", dir + "agree.log", "-events", dir + "agree-events.jsonl"}, cfg...), 0,
			"Envoy's interval timer fires 4.321 s past the log's first second, every 10 s (from 6 of its events)", ""},
		{"override day names the field", append([]string{"-log", dir + "override.log", "-events", dir + "override-events.jsonl"}, cfg...), 0,
			"Envoy ran with consecutive_5xx = 3, from a runtime override (outlier_detection.consecutive_5xx)", ""},
		{"override day's counts", append([]string{"-log", dir + "override.log", "-events", dir + "override-events.jsonl"}, cfg...), 0,
			"agree 5, disagree 1, only Envoy 4, only the lab 0", ""},
		{"problems: shown with line numbers, warned of, exit 0", append([]string{"-log", dir + "agree.log", "-events", dir + "problems-events.jsonl"}, cfg...), 0,
			"  line 2: not a JSON object: unexpected end of JSON input\n  line 4: action \"DRAIN\" is not one of EJECT, UNEJECT\n  line 6: cluster \"payments\", not \"search\"\n",
			"warning: " + dir + "problems-events.jsonl: 4 of 13 lines not read as Envoy wrote them: line 2 (bad_line); line 4 (unknown_action); line 6 (other_cluster); line 7 (unknown_field);"},
		{"nothing usable: exit 2 with the lines", []string{"-log", dir + "agree.log", "-events", garbage}, 2, "",
			"no usable event in the event log (2 lines; 1 bad, 1 with an unknown action, 0 of another cluster)\n  line 1: not a JSON object"},
		{"only another cluster's events: exit 2", append([]string{"-log", dir + "agree.log", "-events", foreign}, cfg...), 2, "",
			`none of cluster "search"; 0 bad, 0 with an unknown action, 1 of another cluster)` + "\n  line 1: cluster \"payments\", not \"search\""},
		{"missing event log", []string{"-log", dir + "agree.log", "-events", dir + "nope.jsonl"}, 2, "", "nope.jsonl: open"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := dispatch(append([]string{"whatif"}, tc.args...), &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Fatalf("exit %d (want %d)\nstdout %s\nstderr %s\nwant %q / %q", code, tc.code, out.String(), errb.String(), tc.out, tc.err)
			}
		})
	}
}

// -format json: per-event match, a summary of counts, the findings and
// the event log's problems.
func TestWhatifEventsJSON(t *testing.T) {
	var out, errb bytes.Buffer
	const dir = "testdata/whatif/compare/"
	if code := dispatch([]string{"whatif", "-log", dir + "override.log", "-events", dir + "override-events.jsonl", "-config", dir + "cluster.yaml", "-format", "json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got struct {
		EventLog struct {
			Cluster string `json:"cluster"`
			Events  int    `json:"events"`
		} `json:"event_log"`
		Comparison struct {
			TickPhaseMs int64 `json:"tick_phase_ms"`
			Events      []struct {
				Match string `json:"match"`
				Host  string `json:"host"`
				Envoy *struct {
					Line     int    `json:"line"`
					Kind     string `json:"kind"`
					Detector string `json:"detector"`
				} `json:"envoy"`
				Field string   `json:"field"`
				Why   []string `json:"why"`
			} `json:"events"`
			Summary  map[string]int `json:"summary"`
			Findings []struct {
				Field string `json:"field"`
			} `json:"findings"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	c := got.Comparison
	want := map[string]int{"envoy_events": 10, "lab_events": 6, "agree": 5, "disagree": 1, "only_envoy": 4, "only_lab": 0}
	if got.EventLog.Cluster != "search" || got.EventLog.Events != 10 || c.TickPhaseMs != 4321 || len(c.Events) != 10 || len(c.Findings) != 1 || c.Findings[0].Field != "consecutive_5xx" {
		t.Errorf("json: %+v", got)
	}
	for k, v := range want {
		if c.Summary[k] != v {
			t.Errorf("summary %s = %d, want %d", k, c.Summary[k], v)
		}
	}
	if e := c.Events[0]; e.Match != "only_envoy" || e.Envoy == nil || e.Envoy.Line != 1 || e.Envoy.Kind != "eject" || e.Field != "consecutive_5xx" || len(e.Why) != 1 {
		t.Errorf("first event %+v", e)
	}
}
