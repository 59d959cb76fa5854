package replay

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// grpcConfigTrace is a gRPC-dialect trace over six hosts with failure
// percentage alone (threshold 20, volume 50): h0 fails a third of its 50
// calls in the intervals listed, every other host answers all 50 OK, and
// a tick closes each interval k at (k+1)·10 s, up to 110 s.
func grpcConfigTrace(clock, fields string, bad ...int) string {
	var steps []string
	for k := range 11 {
		at := k*10000 + 5000
		for h := range 6 {
			fail := 0
			if h == 0 && slices.Contains(bad, k) {
				fail = 16
			}
			if fail > 0 {
				steps = append(steps, fmt.Sprintf(`{"at_ms":%d,"ext":{"host":"h%d","result":"request_failed","times":%d}}`, at, h, fail))
			}
			steps = append(steps, fmt.Sprintf(`{"at_ms":%d,"ext":{"host":"h%d","result":"request_success","times":%d}}`, at, h, 50-fail))
		}
		steps = append(steps, fmt.Sprintf(`{"at_ms":%d,"tick":true}`, (k+1)*10000))
	}
	if clock != "" {
		clock = `"clock":"` + clock + `",`
	}
	return `{"dialect":"grpc",` + clock + `"config":{"enforcing_success_rate":0,"enforcing_failure_percentage":100,` +
		`"failure_percentage_threshold":20,"failure_percentage_request_volume":50` + fields + `},` +
		`"hosts":["h0","h1","h2","h3","h4","h5"],"steps":[` + strings.Join(steps, ",") + `]}`
}

// A grpc trace's config is read as grpc-go reads the proto: what only
// Envoy refuses is accepted and replayed as grpc-go runs it, with a note
// saying what Envoy would do; what grpc-go's xDS client NACKs is refused
// (exit 2 in replay). Each row names the grpc-go function it rests on
// (google.golang.org/grpc v1.85.0); conformance/grpcgo checks the same
// rows against grpc-go's own ParseConfig and its balancer.
func TestGRPCConfigAsGRPCGoReadsIt(t *testing.T) {
	for _, tc := range []struct {
		name, clock, fields string
		bad                 []int
		// events, "AT HOST EVENT", when grpc-go accepts; err when it
		// refuses; note is in the output's notes.
		events    []string
		err, note string
	}{
		{
			// intervalTimerAlgorithm: min(base·multiplier, max(base, max)):
			// a max_ejection_time of 10 s below base 30 s means 30 s, so
			// both ejections last 30 s; back at the first tick strictly
			// after (exact clock).
			name: "max below base", fields: `,"base_ejection_time":"30s","max_ejection_time":"10s"`, bad: []int{0, 5},
			events: []string{"10000 h0 eject", "50000 h0 uneject", "60000 h0 eject", "100000 h0 uneject"},
			note:   "max_ejection_time: 10s is below base_ejection_time 30s (allowed ≥ base_ejection_time); Envoy refuses the cluster; grpc-go accepts it and ejects for at most base_ejection_time",
		},
		{
			// outlierConfigFromCluster asks only ≥ 0: with base = max = 0 an
			// ejection lasts 0, so the host is back at the first sweep whose
			// now() is after the ejecting sweep's start: the next one on an
			// exact clock ...
			name: "base and max 0s, exact clock", fields: `,"base_ejection_time":"0s","max_ejection_time":"0s"`, bad: []int{0},
			events: []string{"10000 h0 eject", "20000 h0 uneject"},
			note:   "base_ejection_time: 0s is out of range (allowed > 0s); Envoy refuses the cluster; grpc-go accepts 0s",
		},
		{
			// ... and the very sweep that ejected it on a real one.
			name: "base and max 0s, real clock", clock: "real", fields: `,"base_ejection_time":"0s","max_ejection_time":"0s"`, bad: []int{0},
			events: []string{"10000 h0 eject", "10000 h0 uneject"},
		},
		{
			// AsDuration keeps the nanoseconds; a replay's ticks are its
			// steps', so the sweeps are the trace's.
			name: "sub-millisecond interval", fields: `,"interval":"0.0005s"`, bad: []int{0},
			events: []string{"10000 h0 eject", "50000 h0 uneject"},
			note:   "interval: 0.0005s is below 1ms",
		},
		{
			// outlierConfigFromCluster does not read enforcing_consecutive_5xx
			// nor max_ejection_time_jitter: any value changes nothing.
			name: "fields grpc-go does not read", fields: `,"enforcing_consecutive_5xx":150,"max_ejection_time_jitter":"-1s"`, bad: []int{0},
			events: []string{"10000 h0 eject", "50000 h0 uneject"},
			note:   "enforcing_consecutive_5xx: 150 is out of range (allowed 0–100); Envoy refuses the cluster; grpc-go accepts it: its xDS client does not read this field",
		},
		{
			// outlierConfigFromCluster: "must be >= 0".
			name: "negative base_ejection_time", fields: `,"base_ejection_time":"-1s"`,
			err: "config: base_ejection_time: -1s is negative (allowed ≥ 0s); grpc-go's xDS client NACKs the cluster for it (outlierConfigFromCluster)",
		},
		{
			// outlierConfigFromCluster: "must be <= 100".
			name: "max_ejection_percent above 100", fields: `,"max_ejection_percent":101`,
			err: "config: max_ejection_percent: 101 is out of range (allowed 0–100); grpc-go's xDS client NACKs the cluster",
		},
		{
			name: "enforcing_failure_percentage above 100", fields: `,"enforcing_failure_percentage":150`,
			err: "enforcing_failure_percentage: 150 is out of range (allowed 0–100); grpc-go's xDS client NACKs",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := grpcConfigTrace(tc.clock, tc.fields, tc.bad...)
			if tc.name == "enforcing_failure_percentage above 100" {
				src = strings.Replace(src, `"enforcing_failure_percentage":100,`, "", 1)
			}
			tr, err := ParseBytes([]byte(src))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			out, err := Run(tr)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("grpc-go accepts this config; replay refused it: %v", err)
			}
			var got []string
			for _, e := range out.Events {
				got = append(got, fmt.Sprintf("%d %s %s", e.AtMs, e.Host, e.Event))
			}
			if !slices.Equal(got, tc.events) {
				t.Errorf("events %q, want %q", got, tc.events)
			}
			if !strings.Contains(strings.Join(out.Notes, "\n"), tc.note) {
				t.Errorf("notes %q, want one with %q", out.Notes, tc.note)
			}
		})
	}
}

// The same configs are Envoy's to refuse in an envoy trace, with no word
// of grpc-go.
func TestEnvoyTraceRefusesWhatGRPCTakes(t *testing.T) {
	for _, cfg := range []string{`{"base_ejection_time":"30s","max_ejection_time":"10s"}`, `{"base_ejection_time":"0s","max_ejection_time":"0s"}`,
		`{"interval":"0.0005s"}`, `{"enforcing_consecutive_5xx":150}`, `{"max_ejection_time_jitter":"-1s"}`} {
		tr, err := ParseBytes([]byte(`{"config":` + cfg + `,"hosts":["h0"],"steps":[{"at_ms":10000,"tick":true}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(tr); err == nil || strings.Contains(err.Error(), "grpc-go") {
			t.Errorf("%s under Envoy: %v, want Envoy's refusal alone", cfg, err)
		}
	}
}
