package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"outlierlab/engine/replay"
)

func TestWhatifCommand(t *testing.T) {
	t.Parallel()
	badConfig := writeTrace(t, "name: search\noutlier_detection:\n  max_ejection_percent: 120\n")
	garbage := writeTrace(t, "not a log line\nnor this one\n")
	badEvents := writeTrace(t, "not an event\n{\"action\":\"DRAIN\"}\n")
	foreign := writeTrace(t, `{"type":"CONSECUTIVE_5XX","timestamp":"2026-11-30T02:00:31.003Z","cluster_name":"payments","upstream_url":"10.0.1.7:9090","action":"UNEJECT","num_ejections":1,"enforced":false}`+"\n")
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"envoy log, text", []string{"-log", "testdata/whatif/envoy.log", "-config", "testdata/whatif/cluster.yaml"}, 0,
			"02:00:20.902       20.9 s  eject     10.0.0.5:8080            consecutive_5xx", ""},
		{"envoy log shows unparsed lines with their numbers", []string{"-log", "testdata/whatif/envoy.log", "-config", "testdata/whatif/cluster.yaml"}, 0,
			"2 of 146 lines did not parse:\n  line 35: 7 fields", ""},
		{"Envoy's defaults refuse one host of six", []string{"-log", "testdata/whatif/envoy.log"}, 0, "overflow  10.0.0.5:8080            consecutive_5xx", ""},
		{"istio json with a DestinationRule", []string{"-log", "testdata/whatif/istio.jsonl", "-config", "testdata/import/destination-rule.yaml"}, 0,
			"26 requests were retried: a log line shows only the last attempt, so their 39 earlier attempts", ""},
		{"the DestinationRule's notes", []string{"-log", "testdata/whatif/istio.jsonl", "-config", "testdata/import/destination-rule.yaml"}, 0,
			"config: testdata/import/destination-rule.yaml (istio_destination_rule)\n  note: spec.trafficPolicy.outlierDetection.minHealthPercent", ""},
		{"no -log", []string{"-config", "testdata/whatif/cluster.yaml"}, 2, "", "-log is required"},
		{"bad format", []string{"-log", "testdata/whatif/envoy.log", "-format", "xml"}, 2, "", `-format "xml" is not one of text, json`},
		{"bad config names file and field", []string{"-log", "testdata/whatif/envoy.log", "-config", badConfig}, 2, "", badConfig + ": max_ejection_percent: 120 is out of range (allowed 0–100)"},
		{"missing log", []string{"-log", "testdata/whatif/nope.log"}, 2, "", "no such file"},
		{"nothing parses", []string{"-log", garbage}, 2, "", garbage + ": the log has no request to replay (2 lines, 2 did not parse)"},
		{"unknown cluster", []string{"-log", "testdata/whatif/istio.jsonl", "-cluster", "outbound|80||x"}, 2, "", `cluster "outbound|80||x": no request in the log`},
		// -events: Envoy's event log beside the replay (cmd_whatif_events.go).
		{"agree day: every event matched", []string{"-log", "testdata/whatif/compare/agree.log", "-events", "testdata/whatif/compare/agree-events.jsonl", "-config", "testdata/whatif/compare/cluster.yaml"}, 0,
			"matched (Envoy 10 events, the lab 10): agree 10, disagree 0, only Envoy 0, only the lab 0\n", ""},
		{"the timer's phase", []string{"-log", "testdata/whatif/compare/agree.log", "-events", "testdata/whatif/compare/agree-events.jsonl", "-config", "testdata/whatif/compare/cluster.yaml"}, 0,
			"Envoy's interval timer fires 4.321 s past the log's first second, every 10 s (from 6 of its events)", ""},
		{"override day names the field", []string{"-log", "testdata/whatif/compare/override.log", "-events", "testdata/whatif/compare/override-events.jsonl", "-config", "testdata/whatif/compare/cluster.yaml"}, 0,
			"Envoy ran with consecutive_5xx = 3, from a runtime override (outlier_detection.consecutive_5xx)", ""},
		{"override day's counts", []string{"-log", "testdata/whatif/compare/override.log", "-events", "testdata/whatif/compare/override-events.jsonl", "-config", "testdata/whatif/compare/cluster.yaml"}, 0,
			"agree 5, disagree 1, only Envoy 4, only the lab 0", ""},
		{"problems: shown with line numbers, warned of, exit 0", []string{"-log", "testdata/whatif/compare/agree.log", "-events", "testdata/whatif/compare/problems-events.jsonl", "-config", "testdata/whatif/compare/cluster.yaml"}, 0,
			"  line 2: not a JSON object: unexpected end of JSON input\n  line 4: action \"DRAIN\" is not one of EJECT, UNEJECT\n  line 6: cluster \"payments\", not \"search\"\n",
			"warning: testdata/whatif/compare/problems-events.jsonl: of 13 lines, 3 set aside and 1 read without fields Envoy's proto lacks: line 2 (bad_line); line 4 (unknown_action); line 6 (other_cluster); line 7 (unknown_field);"},
		{"nothing usable: exit 2 with the lines", []string{"-log", "testdata/whatif/compare/agree.log", "-events", badEvents}, 2, "",
			"no usable event in the event log (2 lines; 1 bad, 1 with an unknown action, 0 of another cluster)\n  line 1: not a JSON object"},
		{"only another cluster's events: exit 2", []string{"-log", "testdata/whatif/compare/agree.log", "-events", foreign, "-config", "testdata/whatif/compare/cluster.yaml"}, 2, "",
			`none of cluster "search"; 0 bad, 0 with an unknown action, 1 of another cluster)` + "\n  line 1: cluster \"payments\", not \"search\""},
		{"a config dump: the cluster by name", []string{"-log", "testdata/whatif/compare/agree.log", "-events", "testdata/whatif/compare/agree-events.jsonl", "-config", "testdata/admin/config_dump.json", "-cluster", "search"}, 0,
			"config: testdata/admin/config_dump.json (envoy_cluster)\n  note: read from the config dump's static_clusters", ""},
		{"a config dump's match", []string{"-log", "testdata/whatif/compare/agree.log", "-events", "testdata/whatif/compare/agree-events.jsonl", "-config", "testdata/admin/config_dump.json", "-cluster", "search"}, 0,
			"agree 10, disagree 0, only Envoy 0, only the lab 0", ""},
		{"a config dump without -cluster", []string{"-log", "testdata/whatif/compare/agree.log", "-config", "testdata/admin/config_dump.json"}, 2, "",
			"testdata/admin/config_dump.json: the dump has 2 clusters; choose one by name"},
		{"/clusters: ten hosts let one out at the default cap", []string{"-log", "testdata/whatif/envoy.log", "-clusters", "testdata/admin/clusters.json", "-cluster", "search"}, 0,
			"02:00:20.902       20.9 s  eject     10.0.0.5:8080            consecutive_5xx", ""},
		{"/clusters: the note", []string{"-log", "testdata/whatif/envoy.log", "-clusters", "testdata/admin/clusters.json", "-cluster", "search"}, 0,
			`note: testdata/admin/clusters.json: cluster "search" has 10 hosts; ejected when the admin was asked (failed_outlier_check): 10.0.0.5:8080`, ""},
		{"/clusters: a cluster it lacks", []string{"-log", "testdata/whatif/envoy.log", "-clusters", "testdata/admin/clusters.json", "-cluster", "payments"}, 2, "",
			`testdata/admin/clusters.json: "payments" is not a cluster of /clusters (allowed "outbound|9080||reviews.default.svc.cluster.local", "search")`},
		{"missing event log", []string{"-log", "testdata/whatif/compare/agree.log", "-events", "testdata/whatif/compare/nope.jsonl"}, 2, "", "nope.jsonl: open"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Dispatch(append([]string{"whatif"}, tc.args...), &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Fatalf("exit %d (want %d)\nstdout %s\nstderr %s\nwant %q / %q", code, tc.code, out.String(), errb.String(), tc.out, tc.err)
			}
		})
	}
}

// -format json is the replay output format ({"events": [...]}) plus the
// summary and the frames.
func TestWhatifJSON(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Dispatch([]string{"whatif", "-log", "testdata/whatif/envoy.log", "-config", "testdata/whatif/cluster.yaml", "-format", "json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got struct {
		Config struct {
			Source string `json:"source"`
		} `json:"config"`
		Events []replay.Event `json:"events"`
		Frames []struct {
			TMs int64 `json:"t_ms"`
		} `json:"frames"`
		Summary struct {
			Unparsed int `json:"unparsed"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Config.Source != "envoy_cluster" || len(got.Events) != 3 || got.Events[1] != (replay.Event{AtMs: 20902, Host: "10.0.0.5:8080", Event: "eject", Detector: "consecutive_5xx"}) ||
		len(got.Frames) != 6 || got.Frames[5].TMs != 60000 || got.Summary.Unparsed != 2 {
		t.Errorf("json output: %+v", got)
	}
}
