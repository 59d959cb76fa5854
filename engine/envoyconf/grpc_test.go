package envoyconf

import (
	"strings"
	"testing"
)

// Every block grpc-go takes and Envoy refuses gets a note naming Envoy's
// reason and what grpc-go does instead, from the grpc-go function it rests
// on; a block Envoy loads gets none; what grpc-go refuses is an error.
func TestGRPCNotes(t *testing.T) {
	for _, tc := range []struct {
		config string
		notes  []string // one per note, each a part of it
		err    string
	}{
		{config: `{}`},
		{config: `{"interval":"1.0005s"}`}, // Envoy truncates to 1 s and loads it
		{config: `{"base_ejection_time":"30s","max_ejection_time":"10s"}`,
			notes: []string{"max_ejection_time: 10s is below base_ejection_time 30s (allowed ≥ base_ejection_time); Envoy refuses the cluster; grpc-go accepts it and ejects for at most base_ejection_time: intervalTimerAlgorithm caps"}},
		{config: `{"interval":"0s"}`,
			notes: []string{"interval: 0s is out of range (allowed > 0s); Envoy refuses the cluster; grpc-go accepts 0s (outlierConfigFromCluster asks only ≥ 0): intervalTimerAlgorithm re-arms its timer with afterFunc(0)"}},
		{config: `{"base_ejection_time":"0s","max_ejection_time":"0s"}`,
			notes: []string{"base_ejection_time: 0s is out of range (allowed > 0s); Envoy refuses the cluster; grpc-go accepts 0s (outlierConfigFromCluster asks only ≥ 0): every ejection lasts min(0 × multiplier, max(0, max_ejection_time)) = 0",
				"max_ejection_time: 0s is out of range (allowed > 0s); Envoy refuses the cluster; grpc-go accepts 0s (outlierConfigFromCluster asks only ≥ 0) and uses base_ejection_time instead"}},
		{config: `{"interval":"0.0005s"}`,
			notes: []string{"interval: 0.0005s is below 1ms: Envoy truncates durations to whole milliseconds, which would make it 0 (allowed ≥ 0.001s); the lab refuses it under Envoy; grpc-go accepts it and keeps the nanoseconds (outlierConfigFromCluster reads the Duration with AsDuration): its sweep timer runs every 0.0005s"}},
		{config: `{"max_ejection_time":"315576000000s"}`,
			notes: []string{"max_ejection_time: 315576000000s is out of range (allowed ≤ 9223372036s); Envoy refuses the cluster; grpc-go accepts it (durationpb's CheckValid allows up to 315576000000s) and AsDuration reads it as the longest time.Duration"}},
		{config: `{"enforcing_consecutive_5xx":150,"max_ejection_time_jitter":"-2s"}`,
			notes: []string{"enforcing_consecutive_5xx: 150 is out of range (allowed 0–100); Envoy refuses the cluster; grpc-go accepts it: its xDS client does not read this field (outlierConfigFromCluster)",
				"max_ejection_time_jitter: -2s is out of range (allowed ≥ 0s); Envoy refuses the cluster; grpc-go accepts it: its xDS client does not read this field"}},
		{config: `{"interval":"-1s","max_ejection_percent":101}`,
			err: "interval: -1s is negative (allowed ≥ 0s); grpc-go's xDS client NACKs the cluster for it (outlierConfigFromCluster)\nmax_ejection_percent: 101 is out of range (allowed 0–100); grpc-go's xDS client NACKs"},
		{config: `{"outlier_detection":{},"connect_timeout":"1s"}`, err: "is a whole Envoy cluster, not an outlier_detection object"},
		{config: `{"consecutive_5xx_typo":1}`, err: "consecutive_5xx_typo: unknown field"},
	} {
		cfg, err := ParseJSONGRPC([]byte(tc.config))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.config, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v, grpc-go accepts it", tc.config, err)
			continue
		}
		notes := GRPCNotes(cfg)
		if len(notes) != len(tc.notes) {
			t.Errorf("%s: notes %q, want %d", tc.config, notes, len(tc.notes))
			continue
		}
		for i, n := range notes {
			if !strings.Contains(n.Error(), tc.notes[i]) {
				t.Errorf("%s: note %q, want it to contain %q", tc.config, n.Error(), tc.notes[i])
			}
		}
		if envoyErr := CheckEnvoy(cfg); (envoyErr == nil) != (len(tc.notes) == 0) {
			t.Errorf("%s: CheckEnvoy %v with %d notes", tc.config, envoyErr, len(notes))
		}
	}
}
