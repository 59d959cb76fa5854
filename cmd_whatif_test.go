package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"outlierlab/engine/replay"
)

func TestWhatifCommand(t *testing.T) {
	badConfig := writeTrace(t, "name: search\noutlier_detection:\n  max_ejection_percent: 120\n")
	garbage := writeTrace(t, "not a log line\nnor this one\n")
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

// -format json is the replay output format ({"events": [...]}) plus the
// summary and the frames.
func TestWhatifJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"whatif", "-log", "testdata/whatif/envoy.log", "-config", "testdata/whatif/cluster.yaml", "-format", "json"}, &out, &errb); code != 0 {
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
