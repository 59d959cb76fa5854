package cli

import (
	"bytes"
	"encoding/json"
	"testing"
)

// -format json: per-event match, a summary of counts, the findings and
// the event log's problems.
func TestWhatifEventsJSON(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	const dir = "testdata/whatif/compare/"
	if code := Dispatch([]string{"whatif", "-log", dir + "override.log", "-events", dir + "override-events.jsonl", "-config", dir + "cluster.yaml", "-format", "json"}, &out, &errb); code != 0 {
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
