package grpcgo

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/balancer"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
)

// odParser is grpc-go's own parser of the outlier_detection_experimental
// config (internal/xds/balancer/outlierdetection/balancer.go, ParseConfig),
// taken from the balancer registry as the channel takes it.
func odParser(t *testing.T) balancer.ConfigParser {
	t.Helper()
	b := balancer.Get("outlier_detection_experimental")
	if b == nil {
		t.Fatal("outlier_detection_experimental is not registered")
	}
	p, ok := b.(balancer.ConfigParser)
	if !ok {
		t.Fatal("outlier_detection_experimental has no ParseConfig")
	}
	return p
}

// lbConfig is the LBConfig ParseConfig returns, as it marshals itself
// (its fields carry json tags; a zero value is omitted).
type lbConfig struct {
	Interval, BaseEjectionTime, MaxEjectionTime string
	MaxEjectionPercent                          uint32
	SuccessRateEjection                         *struct {
		StdevFactor, EnforcementPercentage, MinimumHosts, RequestVolume uint32
	}
	FailurePercentageEjection *struct {
		Threshold, EnforcementPercentage, MinimumHosts, RequestVolume uint32
	}
}

// durationNs reads iserviceconfig.Duration's JSON ("30s", "0.000500s",
// "9223372036.854775807s"; "" is the omitted zero) in nanoseconds.
func durationNs(t *testing.T, s string) int64 {
	t.Helper()
	if s == "" {
		return 0
	}
	sec, frac, _ := strings.Cut(strings.TrimSuffix(s, "s"), ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	ns := n * 1e9
	if frac != "" {
		f, err := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		if err != nil {
			t.Fatalf("duration %q: %v", s, err)
		}
		ns += f
	}
	return ns
}

// A block is read as grpc-go reads it: the engine's gRPC dialect
// (envoyconf.ParseJSONGRPC) refuses exactly what grpc-go refuses and holds
// what grpc-go holds. grpc-go's side is its xDS translation of the block
// (scenario.grpcConfig, mirroring outlierConfigFromCluster) handed to its
// real ParseConfig, which repeats every check outlierConfigFromCluster
// makes on the fields it translates. Two rows rest on
// outlierConfigFromCluster alone (xdsOnly): it NACKs a
// failure_percentage_threshold above 100 even when failure percentage is
// off, before the field is dropped from the translation, so ParseConfig
// never sees it. That function is in an internal package, read (v1.85.0,
// internal/xds/xdsclient/xdsresource/unmarshal_cds.go) and not run here.
func TestBlocksAsGRPCGoParsesThem(t *testing.T) {
	parser := odParser(t)
	for _, tc := range []struct {
		name, config string
		refused      bool
		xdsOnly      bool
	}{
		// intervalTimerAlgorithm takes max(base, max): Envoy's
		// DetectorImpl::create refuses max below base.
		{name: "max below base", config: `{"base_ejection_time":"30s","max_ejection_time":"10s"}`},
		// outlierConfigFromCluster / ParseConfig: durations only ≥ 0.
		{name: "base and max 0s", config: `{"base_ejection_time":"0s","max_ejection_time":"0s"}`},
		{name: "interval 0s", config: `{"interval":"0s"}`},
		// AsDuration keeps what Envoy truncates to whole milliseconds.
		{name: "sub-millisecond interval", config: `{"interval":"0.0005s"}`},
		{name: "sub-millisecond parts", config: `{"interval":"10.0000005s","base_ejection_time":"1.000000001s","max_ejection_time":"2.5s"}`},
		// CheckValid allows up to 315576000000 s; AsDuration saturates.
		{name: "longest Duration", config: `{"max_ejection_time":"315576000000s"}`},
		// Fields outlierConfigFromCluster never reads.
		{name: "enforcing_consecutive_5xx 150", config: `{"enforcing_consecutive_5xx":150}`},
		{name: "negative jitter", config: `{"max_ejection_time_jitter":"-1s"}`},
		{name: "consecutive fields and switches", config: `{"consecutive_5xx":0,"enforcing_consecutive_gateway_failure":200,"always_eject_one_host":true,"detect_degraded_hosts":true,"split_external_local_origin_errors":true}`},
		// Which algorithms run: success rate unless enforcing_success_rate
		// is 0, failure percentage only when enforcing_failure_percentage
		// is set and not 0 (A50, quoted in outlierConfigFromCluster).
		{name: "failure percentage on", config: `{"enforcing_success_rate":0,"enforcing_failure_percentage":30,"failure_percentage_threshold":0,"failure_percentage_minimum_hosts":0,"failure_percentage_request_volume":0}`},
		{name: "no-op", config: `{"enforcing_success_rate":0}`},
		{name: "success rate fields", config: `{"success_rate_stdev_factor":0,"success_rate_minimum_hosts":0,"success_rate_request_volume":4294967295,"enforcing_success_rate":1}`},
		// Refused: "must be >= 0" and "must be <= 100".
		{name: "negative base", config: `{"base_ejection_time":"-1s"}`, refused: true},
		{name: "negative interval", config: `{"interval":"-0.000000001s"}`, refused: true},
		{name: "negative max", config: `{"max_ejection_time":"-5s"}`, refused: true},
		{name: "max_ejection_percent 101", config: `{"max_ejection_percent":101}`, refused: true},
		{name: "enforcing_success_rate 101", config: `{"enforcing_success_rate":101}`, refused: true},
		{name: "enforcing_failure_percentage 101", config: `{"enforcing_failure_percentage":101}`, refused: true},
		{name: "failure_percentage_threshold 101, failure percentage on", config: `{"enforcing_failure_percentage":100,"failure_percentage_threshold":101}`, refused: true},
		{name: "failure_percentage_threshold 101, failure percentage off", config: `{"failure_percentage_threshold":101}`, refused: true, xdsOnly: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, engErr := envoyconf.ParseJSONGRPC([]byte(tc.config))
			if (engErr != nil) != tc.refused {
				t.Fatalf("engine: %v, want refused %v", engErr, tc.refused)
			}
			sc := scenario{name: tc.name, config: tc.config}
			od, err := sc.grpcConfig()
			if err != nil {
				t.Fatal(err)
			}
			od["childPolicy"] = []any{map[string]any{"round_robin": map[string]any{}}}
			raw, _ := json.Marshal(od)
			parsed, grpcErr := parser.ParseConfig(raw)
			if tc.xdsOnly {
				if grpcErr != nil {
					t.Fatalf("ParseConfig refused a block outlierConfigFromCluster alone refuses: %v", grpcErr)
				}
				return
			}
			if (grpcErr != nil) != tc.refused {
				t.Fatalf("grpc-go's ParseConfig(%s): %v; the engine: %v", raw, grpcErr, engErr)
			}
			if tc.refused {
				return
			}
			b, err := json.Marshal(parsed)
			if err != nil {
				t.Fatal(err)
			}
			var got lbConfig
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			checkHolds(t, cfg, got, string(b))
		})
	}
}

// checkHolds compares what the engine holds for a block with what
// grpc-go's ParseConfig returned: the durations to the nanosecond, the
// ejection cap as intervalTimerAlgorithm takes it (max(base, max): for an
// unset max grpc-go holds 300 s where Envoy's default is max(300 s,
// base), the same cap), max_ejection_percent, and each algorithm, on or
// off, with its fields.
func checkHolds(t *testing.T, cfg engine.Config, got lbConfig, raw string) {
	t.Helper()
	type held struct {
		what      string
		grpc, eng any
	}
	base := durationNs(t, got.BaseEjectionTime)
	want := []held{
		{"interval", durationNs(t, got.Interval), cfg.GRPCIntervalNs()},
		{"base_ejection_time", base, cfg.GRPCBaseEjectionTimeNs()},
		{"max(base, max_ejection_time)", max(base, durationNs(t, got.MaxEjectionTime)), max(cfg.GRPCBaseEjectionTimeNs(), cfg.GRPCMaxEjectionTimeNs())},
		{"max_ejection_percent", got.MaxEjectionPercent, cfg.MaxEjectionPercent},
		{"success rate on", got.SuccessRateEjection != nil, cfg.GRPCSuccessRate()},
		{"failure percentage on", got.FailurePercentageEjection != nil, cfg.GRPCFailurePercentage()},
	}
	if sr := got.SuccessRateEjection; sr != nil {
		want = append(want, []held{
			{"stdevFactor", sr.StdevFactor, cfg.SuccessRateStdevFactor},
			{"success rate enforcementPercentage", sr.EnforcementPercentage, cfg.EnforcingSuccessRate},
			{"success rate minimumHosts", sr.MinimumHosts, cfg.SuccessRateMinimumHosts},
			{"success rate requestVolume", sr.RequestVolume, cfg.SuccessRateRequestVolume},
		}...)
	}
	if fp := got.FailurePercentageEjection; fp != nil {
		want = append(want, []held{
			{"threshold", fp.Threshold, cfg.FailurePercentageThreshold},
			{"failure percentage enforcementPercentage", fp.EnforcementPercentage, cfg.EnforcingFailurePercentage},
			{"failure percentage minimumHosts", fp.MinimumHosts, cfg.FailurePercentageMinimumHosts},
			{"failure percentage requestVolume", fp.RequestVolume, cfg.FailurePercentageRequestVolume},
		}...)
	}
	for _, w := range want {
		if fmt.Sprint(w.grpc) != fmt.Sprint(w.eng) {
			t.Errorf("%s: grpc-go holds %v, the engine %v (grpc-go's config %s)", w.what, w.grpc, w.eng, raw)
		}
	}
}
