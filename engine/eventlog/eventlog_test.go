package eventlog

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	datav3 "github.com/envoyproxy/go-control-plane/envoy/data/cluster/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

const testdata = "../../testdata/whatif/compare"

// Lines as Envoy writes them (logEject / logUneject with proto field
// names and primitives always printed), and what the reader makes of them.
func TestParseLine(t *testing.T) {
	u := func(v uint32) *uint32 { return &v }
	secs := func(v uint64) *uint64 { return &v }
	at := time.Date(2026, 11, 30, 2, 1, 4, 321_000_000, time.UTC)
	for _, tc := range []struct {
		name, line string
		want       Event
	}{
		{"success-rate ejection",
			`{"type":"SUCCESS_RATE","timestamp":"2026-11-30T02:01:04.321Z","cluster_name":"search","upstream_url":"10.0.0.3:8080","action":"EJECT","num_ejections":1,"enforced":true,"eject_success_rate_event":{"host_success_rate":85,"cluster_average_success_rate":97,"cluster_success_rate_ejection_threshold":86}}`,
			Event{Time: at, Cluster: "search", Host: "10.0.0.3:8080", Action: Eject, Detector: "success_rate", Enforced: true, NumEjections: 1,
				SuccessRate: &SuccessRate{Host: 85, ClusterAverage: u(97), Threshold: u(86)}}},
		{"unenforced gateway detection, lowerCamelCase keys and a tcp:// URL",
			`{"type":"CONSECUTIVE_GATEWAY_FAILURE","timestamp":"2026-11-30T02:01:04.321Z","secsSinceLastAction":"77","clusterName":"search","upstreamUrl":"tcp://10.0.0.5:8080","action":"EJECT","numEjections":1,"enforced":false,"ejectConsecutiveEvent":{}}`,
			Event{Time: at, Cluster: "search", Host: "10.0.0.5:8080", Action: Eject, Detector: "consecutive_gateway_failure", NumEjections: 1, SecsSinceLastAction: secs(77)}},
		{"failure percentage by enum number",
			`{"type":5,"timestamp":"2026-11-30T02:01:04.321Z","cluster_name":"search","upstream_url":"10.0.0.3:8080","action":0,"num_ejections":2,"enforced":true,"eject_failure_percentage_event":{"host_success_rate":12}}`,
			Event{Time: at, Cluster: "search", Host: "10.0.0.3:8080", Action: Eject, Detector: "failure_percentage", Enforced: true, NumEjections: 2, SuccessRate: &SuccessRate{Host: 12}}},
		{"return: its CONSECUTIVE_5XX type means nothing",
			`{"type":"CONSECUTIVE_5XX","timestamp":"2026-11-30T02:01:04.321Z","secs_since_last_action":"32","cluster_name":"search","upstream_url":"10.0.0.5:8080","action":"UNEJECT","num_ejections":1,"enforced":false}`,
			Event{Time: at, Cluster: "search", Host: "10.0.0.5:8080", Action: Uneject, NumEjections: 1, SecsSinceLastAction: secs(32)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warn, p := parseLine([]byte(tc.line))
			if p != nil || warn != nil {
				t.Fatalf("problem %+v, warning %+v", p, warn)
			}
			if !sameEvent(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func sameEvent(a, b Event) bool {
	eq := func(x, y *uint32) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	if (a.SuccessRate == nil) != (b.SuccessRate == nil) || (a.SecsSinceLastAction == nil) != (b.SecsSinceLastAction == nil) {
		return false
	}
	if a.SuccessRate != nil && (a.SuccessRate.Host != b.SuccessRate.Host || !eq(a.SuccessRate.ClusterAverage, b.SuccessRate.ClusterAverage) || !eq(a.SuccessRate.Threshold, b.SuccessRate.Threshold)) {
		return false
	}
	if a.SecsSinceLastAction != nil && *a.SecsSinceLastAction != *b.SecsSinceLastAction {
		return false
	}
	a.SuccessRate, b.SuccessRate, a.SecsSinceLastAction, b.SecsSinceLastAction = nil, nil, nil, nil
	return a == b
}

// Lines the reader sets aside (or reads with a warning), and why: never
// a guess at what the line meant.
func TestParseLineProblems(t *testing.T) {
	const ok = `"timestamp":"2026-11-30T02:01:04.321Z","cluster_name":"search","upstream_url":"10.0.0.5:8080"`
	for _, tc := range []struct {
		name, line, kind, reason string
	}{
		{"cut short", `{"type":"CONSECUTIVE_5XX",`, KindBadLine, "not a JSON object: unexpected end of JSON input"},
		{"a text line", `2026-11-30 ejected 10.0.0.5`, KindBadLine, "not a JSON object: invalid character"},
		{"unknown action", `{"type":"CONSECUTIVE_5XX",` + ok + `,"action":"DRAIN"}`, KindUnknownAction, `action "DRAIN" is not one of EJECT, UNEJECT`},
		{"unknown action number", `{"type":"CONSECUTIVE_5XX",` + ok + `,"action":7}`, KindUnknownAction, `action 7 is not one of EJECT, UNEJECT`},
		{"unknown type", `{"type":"LATENCY",` + ok + `,"action":"EJECT","eject_consecutive_event":{}}`, KindUnknownAction, `type "LATENCY" is not one of CONSECUTIVE_5XX, CONSECUTIVE_GATEWAY_FAILURE`},
		{"no action: EJECT would be a guess", `{"type":"CONSECUTIVE_5XX",` + ok + `}`, KindBadLine, `no "action" field`},
		{"an EJECT without type", `{` + ok + `,"action":"EJECT"}`, KindBadLine, `no "type" field`},
		{"no host", `{"type":"CONSECUTIVE_5XX","timestamp":"2026-11-30T02:01:04.321Z","cluster_name":"search","action":"UNEJECT"}`, KindBadLine, `no "upstream_url" field`},
		{"a bad timestamp", `{"type":"CONSECUTIVE_5XX","timestamp":"yesterday","cluster_name":"search","upstream_url":"10.0.0.5:8080","action":"UNEJECT"}`, KindBadLine, "not an envoy.data.cluster.v3.OutlierDetectionEvent"},
		{"an EJECT without its sub-event", `{"type":"CONSECUTIVE_5XX",` + ok + `,"action":"EJECT"}`, KindBadLine, "invalid event: invalid OutlierDetectionEvent.Event: value is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, p := parseLine([]byte(tc.line))
			if p == nil || p.Kind != tc.kind || !strings.Contains(p.Reason, tc.reason) {
				t.Errorf("problem %+v, want %s %q", p, tc.kind, tc.reason)
			}
		})
	}
	e, warn, p := parseLine([]byte(`{"type":"CONSECUTIVE_5XX",` + ok + `,"action":"UNEJECT","worker_id":3}`))
	if p != nil || warn == nil || warn.Kind != KindUnknownField || !strings.Contains(warn.Reason, `unknown field "worker_id" (read without it)`) || e.Action != Uneject {
		t.Errorf("unknown field: %+v, warning %+v, problem %+v", e, warn, p)
	}
}

// The generated event logs are Envoy's lines: read through the proto
// types and written again, each is the same bytes.
func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"agree-events.jsonl", "override-events.jsonl"} {
		data, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
		for i, line := range lines {
			var pe datav3.OutlierDetectionEvent
			if err := protojson.Unmarshal(line, &pe); err != nil {
				t.Fatalf("%s line %d: %v", name, i+1, err)
			}
			again, err := Line(&pe)
			if err != nil || !bytes.Equal(again, line) {
				t.Errorf("%s line %d:\n read %s\nwrote %s (%v)", name, i+1, line, again, err)
			}
		}
		if len(lines) != 10 {
			t.Errorf("%s: %d lines", name, len(lines))
		}
	}
}

// problems-events.jsonl is the agree day's ten events with a line cut
// short (2), an unknown action (4), another cluster's event (6) and an
// unknown field on one of Envoy's own lines (7).
func TestParseFile(t *testing.T) {
	for _, tc := range []struct {
		file, cluster string
		events        int
		counts        Counts
		lines         []int
		err           string
	}{
		{"agree-events.jsonl", "", 10, Counts{}, nil, ""},
		{"problems-events.jsonl", "", 10, Counts{BadLines: 1, UnknownActions: 1, UnknownFields: 1, OtherCluster: 1}, []int{2, 4, 6, 7}, ""},
		{"problems-events.jsonl", "payments", 1, Counts{BadLines: 1, UnknownActions: 1, UnknownFields: 1, OtherCluster: 10}, []int{1, 2, 3, 4, 5, 7, 7, 8, 9, 10, 11, 12, 13}, ""},
		{"agree-events.jsonl", "checkout", 0, Counts{OtherCluster: 10}, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
			`no usable event in the event log (10 lines, none of cluster "checkout"; 0 bad, 0 with an unknown action, 10 of another cluster)`},
	} {
		t.Run(tc.file+"/"+tc.cluster, func(t *testing.T) {
			f, err := os.Open(filepath.Join(testdata, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			log, err := Parse(f, tc.cluster)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var lines []int
			for _, p := range log.Problems {
				lines = append(lines, p.Line)
			}
			if len(log.Events) != tc.events || log.Counts != tc.counts || !slices.Equal(lines, tc.lines) {
				t.Errorf("%d events, counts %+v, problem lines %v\nwant %d, %+v, %v", len(log.Events), log.Counts, lines, tc.events, tc.counts, tc.lines)
			}
		})
	}
}

// Whatever a line holds, Parse counts it or reads it; it never panics,
// and a kept event has a host, a cluster and an action.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"problems-events.jsonl", "override-events.jsonl"} {
		data, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"action":null,"type":[]}`))
	f.Add([]byte("[1]\n{}\n\"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		log, err := Parse(bytes.NewReader(data), "")
		if err != nil {
			return
		}
		for _, e := range log.Events {
			if e.Host == "" || e.Cluster == "" || (e.Action != Eject && e.Action != Uneject) {
				t.Errorf("kept %+v", e)
			}
		}
		if log.Counts.Skipped()+len(log.Events) != log.Lines {
			t.Errorf("%d lines, %d kept, counts %+v", log.Lines, len(log.Events), log.Counts)
		}
	})
}
