package envoyconf

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"outlierlab/engine"
)

func TestEmptyDocumentIsEnvoyDefaults(t *testing.T) {
	for _, in := range []string{"", "  \n", "{}", "null", "# just a comment\n", "outlier_detection: {}", "name: c\noutlier_detection: {}\n"} {
		got, err := ParseYAML([]byte(in))
		if err != nil {
			t.Errorf("ParseYAML(%q): %v", in, err)
			continue
		}
		if got != engine.DefaultConfig() {
			t.Errorf("ParseYAML(%q) = %+v, want engine.DefaultConfig()", in, got)
		}
	}
	for _, in := range []string{"", "{}", `{"outlier_detection": {}}`} {
		got, err := ParseJSON([]byte(in))
		if err != nil || got != engine.DefaultConfig() {
			t.Errorf("ParseJSON(%q) = %+v, %v; want defaults", in, got, err)
		}
	}
	got, err := FromProto(nil)
	if err != nil || got != engine.DefaultConfig() {
		t.Errorf("FromProto(nil) = %+v, %v; want defaults", got, err)
	}
	got, err = FromProto(&clusterv3.OutlierDetection{})
	if err != nil || got != engine.DefaultConfig() {
		t.Errorf("FromProto(empty) = %+v, %v; want defaults", got, err)
	}
}

// fieldRows has one row per OutlierDetection field, each with a value that
// differs from Envoy's default, and what it must change in engine.Config.
var fieldRows = []struct {
	field string
	value string // YAML
	want  func(*engine.Config)
}{
	{"consecutive_5xx", "7", func(c *engine.Config) { c.Consecutive5xx = 7 }},
	{"interval", "2.5s", func(c *engine.Config) { c.IntervalMs = 2500 }},
	{"base_ejection_time", "45s", func(c *engine.Config) { c.BaseEjectionTimeMs = 45000 }},
	{"max_ejection_percent", "34", func(c *engine.Config) { c.MaxEjectionPercent = 34 }},
	{"enforcing_consecutive_5xx", "33", func(c *engine.Config) { c.EnforcingConsecutive5xx = 33 }},
	{"enforcing_success_rate", "44", func(c *engine.Config) { c.EnforcingSuccessRate = 44 }},
	{"success_rate_minimum_hosts", "3", func(c *engine.Config) { c.SuccessRateMinimumHosts = 3 }},
	{"success_rate_request_volume", "20", func(c *engine.Config) { c.SuccessRateRequestVolume = 20 }},
	{"success_rate_stdev_factor", "1000", func(c *engine.Config) { c.SuccessRateStdevFactor = 1000 }},
	{"consecutive_gateway_failure", "9", func(c *engine.Config) { c.ConsecutiveGatewayFailure = 9 }},
	{"enforcing_consecutive_gateway_failure", "100", func(c *engine.Config) { c.EnforcingConsecutiveGatewayFailure = 100 }},
	{"split_external_local_origin_errors", "true", func(c *engine.Config) { c.SplitExternalLocalOriginErrors = true }},
	{"consecutive_local_origin_failure", "2", func(c *engine.Config) { c.ConsecutiveLocalOriginFailure = 2 }},
	{"enforcing_consecutive_local_origin_failure", "50", func(c *engine.Config) { c.EnforcingConsecutiveLocalOriginFailure = 50 }},
	{"enforcing_local_origin_success_rate", "60", func(c *engine.Config) { c.EnforcingLocalOriginSuccessRate = 60 }},
	{"failure_percentage_threshold", "70", func(c *engine.Config) { c.FailurePercentageThreshold = 70 }},
	{"enforcing_failure_percentage", "80", func(c *engine.Config) { c.EnforcingFailurePercentage = 80 }},
	{"enforcing_failure_percentage_local_origin", "90", func(c *engine.Config) { c.EnforcingFailurePercentageLocalOrigin = 90 }},
	{"failure_percentage_minimum_hosts", "4", func(c *engine.Config) { c.FailurePercentageMinimumHosts = 4 }},
	{"failure_percentage_request_volume", "25", func(c *engine.Config) { c.FailurePercentageRequestVolume = 25 }},
	{"max_ejection_time", "120s", func(c *engine.Config) { c.MaxEjectionTimeMs = 120000 }},
	{"max_ejection_time_jitter", "0.25s", func(c *engine.Config) { c.MaxEjectionTimeJitterMs = 250 }},
	{"successful_active_health_check_uneject_host", "false", func(c *engine.Config) { c.SuccessfulActiveHealthCheckUnejectHost = false }},
	{"always_eject_one_host", "true", func(c *engine.Config) { c.AlwaysEjectOneHost = true }},
	{"detect_degraded_hosts", "true", func(c *engine.Config) { c.DetectDegradedHosts = true }},
}

func TestEveryFieldIsMapped(t *testing.T) {
	covered := map[string]bool{}
	for _, row := range fieldRows {
		covered[row.field] = true
		t.Run(row.field, func(t *testing.T) {
			want := engine.DefaultConfig()
			row.want(&want)
			if want == engine.DefaultConfig() {
				t.Fatalf("row value %s equals the default; pick another", row.value)
			}
			got, err := ParseYAML([]byte(row.field + ": " + row.value))
			if err != nil {
				t.Fatalf("ParseYAML: %v", err)
			}
			if got != want {
				t.Errorf("ParseYAML(%s: %s)\n got %+v\nwant %+v", row.field, row.value, got, want)
			}
			// The same field by its lowerCamel JSON name, which protojson
			// (and Envoy) also accept.
			fd, _ := LookupField(row.field)
			camel := string(fields().byName[fd.Name].desc.JSONName())
			got, err = ParseJSON([]byte(`{"` + camel + `": ` + jsonValue(fd.Kind, row.value) + `}`))
			if err != nil || got != want {
				t.Errorf("ParseJSON(%s) = %+v, %v; want %+v", camel, got, err, want)
			}
			// -set uses the same path.
			got, err = ApplyFields(engine.DefaultConfig(), map[string]string{row.field: row.value})
			if err != nil || got != want {
				t.Errorf("ApplyFields(%s=%s) = %+v, %v; want %+v", row.field, row.value, got, err, want)
			}
		})
	}
	for _, name := range FieldNames() {
		if !covered[name] {
			t.Errorf("field %s has no row in fieldRows", name)
		}
	}
}

func jsonValue(kind Kind, v string) string {
	if kind == Duration {
		return `"` + v + `"`
	}
	return v
}

func TestDurationsTruncateToMilliseconds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1.5s", 1500},
		{"0.0015s", 1},
		{"0.0019s", 1},
		{"0.001s", 1},
		{"10.9999999s", 10999},
		{"3s", 3000},
		{"9223372036.999999999s", 9223372036999},
	} {
		got, err := ParseYAML([]byte("interval: " + tc.in))
		if err != nil {
			t.Errorf("interval %s: %v", tc.in, err)
			continue
		}
		if got.IntervalMs != tc.want {
			t.Errorf("interval %s = %d ms, want %d", tc.in, got.IntervalMs, tc.want)
		}
	}
}

func TestDefaultMaxEjectionTimeFollowsBase(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantMax int64
	}{
		{"base_ejection_time: 400s", 400000},
		{"base_ejection_time: 10s", 300000},
		{"base_ejection_time: 300.5s", 300500},
		{"base_ejection_time: 400s\nmax_ejection_time: 400s", 400000},
		{"base_ejection_time: 10s\nmax_ejection_time: 10s", 10000},
		// Envoy compares the truncated milliseconds: 30000 ≥ 30000.
		{"base_ejection_time: 30.0009s\nmax_ejection_time: 30.0001s", 30000},
	} {
		got, err := ParseYAML([]byte(tc.in))
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got.MaxEjectionTimeMs != tc.wantMax {
			t.Errorf("%q: max_ejection_time = %d ms, want %d", tc.in, got.MaxEjectionTimeMs, tc.wantMax)
		}
	}
}

// errorRows are inputs Envoy refuses. Each error must name the field in
// snake_case and say what is allowed.
func errorRows() []struct{ name, in, field, wantAll string } {
	rows := []struct{ name, in, field, wantAll string }{
		{"max_ejection_percent 101", "max_ejection_percent: 101", "max_ejection_percent", "101|out of range|0–100"},
		{"failure_percentage_threshold 101", "failure_percentage_threshold: 101", "failure_percentage_threshold", "101|0–100"},
		{"interval 0s", "interval: 0s", "interval", "0s|> 0s"},
		{"interval negative", "interval: -1s", "interval", "-1s|> 0s"},
		{"interval negative fraction", "interval: -0.5s", "interval", "-0.5s|> 0s"},
		{"base_ejection_time 0s", "base_ejection_time: 0s", "base_ejection_time", "0s|> 0s"},
		{"base_ejection_time negative", "base_ejection_time: -30s", "base_ejection_time", "-30s|> 0s"},
		{"max_ejection_time 0s", "max_ejection_time: 0s", "max_ejection_time", "0s|> 0s"},
		{"jitter negative", "max_ejection_time_jitter: -1s", "max_ejection_time_jitter", "-1s|≥ 0s"},
		{"interval beyond Envoy's ms limit", "interval: 9223372037s", "interval", "≤ 9223372036s"},
		{"interval sub-millisecond", "interval: 0.0005s", "interval", "0.0005s|≥ 0.001s"},
		{"max below base", "base_ejection_time: 30s\nmax_ejection_time: 10s", "max_ejection_time", "10s|below base_ejection_time 30s|≥ base_ejection_time"},
		{"max below default base", "max_ejection_time: 29s", "max_ejection_time", "29s|below base_ejection_time 30s"},
		{"unknown field", "foo: 1", "foo", "unknown field|consecutive_5xx, interval, base_ejection_time"},
		{"typo", "consecutive_5x: 3", "consecutive_5x", `did you mean "consecutive_5xx"`},
		{"string for a number", `consecutive_5xx: "abc"`, "consecutive_5xx", `"abc" is not a number|0–4294967295`},
		{"negative number", "consecutive_5xx: -1", "consecutive_5xx", "-1 is out of range|0–4294967295"},
		{"fraction", "success_rate_request_volume: 1.5", "success_rate_request_volume", "1.5 is not a whole number"},
		{"beyond uint32", "consecutive_5xx: 4294967296", "consecutive_5xx", "out of range|0–4294967295"},
		{"1500ms", "interval: 1500ms", "interval", `"1500ms" is not a valid duration|"1.5s"`},
		{"bare number duration", "base_ejection_time: 30", "base_ejection_time", `30 is not a valid duration|"30s"`},
		{"bool as string", "always_eject_one_host: maybe", "always_eject_one_host", `"maybe" is not a boolean|true or false`},
		{"bool as number", "split_external_local_origin_errors: 1", "split_external_local_origin_errors", "1 is not a boolean"},
		{"same field twice", "consecutive_5xx: 3\nconsecutive5xx: 4", "consecutive_5xx", "set twice"},
		{"malformed YAML", "interval: [1s", "", "not valid YAML|line 1"},
		{"not a mapping", "- 1\n- 2", "", "a list is not a mapping"},
		{"cluster without outlier_detection", "name: backend\ntype: STRICT_DNS", "outlier_detection", "is missing|outlier_detection: {}"},
		{"cluster with null outlier_detection", "name: backend\noutlier_detection:\n", "outlier_detection", "is empty"},
		{"cluster with bad outlier field", "name: backend\noutlier_detection:\n  max_ejection_percent: 101\n", "max_ejection_percent", "0–100"},
		{"panic threshold above 100", "outlier_detection: {}\ncommon_lb_config:\n  healthy_panic_threshold:\n    value: 101", "common_lb_config.healthy_panic_threshold.value", "101|0–100"},
		{"panic threshold negative", "outlier_detection: {}\ncommon_lb_config: {healthy_panic_threshold: {value: -1}}", "common_lb_config.healthy_panic_threshold.value", "-1|0–100"},
		{"panic threshold not a number", "outlier_detection: {}\ncommon_lb_config: {healthy_panic_threshold: {value: high}}", "common_lb_config.healthy_panic_threshold.value", `"high" is not a number`},
		{"panic threshold unknown field", "outlier_detection: {}\ncommon_lb_config: {healthy_panic_threshold: {percent: 3}}", "common_lb_config.healthy_panic_threshold.percent", "unknown field|value"},
	}
	// Every percentage that PGV limits with lte 100 (all enforcing_*,
	// max_ejection_percent, failure_percentage_threshold) refuses 101.
	for _, f := range Fields() {
		if f.Kind == Uint32 && f.Max == 100 {
			rows = append(rows, struct{ name, in, field, wantAll string }{f.Name + " 101", f.Name + ": 101", f.Name, "101 is out of range|(allowed 0–100)"})
		}
	}
	return rows
}

func TestErrorsNameTheFieldAndTheAllowedRange(t *testing.T) {
	for _, tc := range errorRows() {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseClusterYAML([]byte(tc.in))
			if err == nil {
				t.Fatalf("ParseClusterYAML(%q) succeeded, want an error", tc.in)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %q (%T) is not a *FieldError", err, err)
			}
			if fe.Field != tc.field {
				t.Errorf("Field = %q, want %q (error: %s)", fe.Field, tc.field, err)
			}
			msg := err.Error()
			if tc.field != "" && !strings.HasPrefix(msg, tc.field+": ") {
				t.Errorf("error %q does not start with %q", msg, tc.field+": ")
			}
			for _, want := range strings.Split(tc.wantAll, "|") {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			if strings.ContainsAny(fe.Field, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
				t.Errorf("Field %q is not snake_case", fe.Field)
			}
		})
	}
}

func TestEveryProblemIsReported(t *testing.T) {
	in := "interval: 1.5s\nmax_ejection_percent: 200\nenforcing_success_rate: 300\nbogus: 1\nconsecutive_5xx: abc\nbase_ejection_time: 0s\n"
	_, err := ParseYAML([]byte(in))
	got := map[string]bool{}
	for _, fe := range FieldErrors(err) {
		got[fe.Field] = true
	}
	for _, want := range []string{"max_ejection_percent", "enforcing_success_rate", "bogus", "consecutive_5xx", "base_ejection_time"} {
		if !got[want] {
			t.Errorf("no error for %s in:\n%v", want, err)
		}
	}
	if len(got) != 5 {
		t.Errorf("got errors for %v, want exactly 5 fields", got)
	}
}

func TestValidationErrorsUnwrapToPGV(t *testing.T) {
	_, err := ParseYAML([]byte("enforcing_consecutive_5xx: 101"))
	var ve clusterv3.OutlierDetectionValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%v does not unwrap to OutlierDetectionValidationError", err)
	}
	if ve.Field() != "EnforcingConsecutive_5Xx" {
		t.Errorf("PGV field = %q", ve.Field())
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "enforcing_consecutive_5xx" {
		t.Errorf("FieldError = %+v, want enforcing_consecutive_5xx", fe)
	}
}

func TestJSONSyntaxErrorSaysWhere(t *testing.T) {
	_, err := ParseJSON([]byte("{\n  \"interval\": \"1s\"\n  \"consecutive_5xx\": 3\n}"))
	if err == nil || !strings.Contains(err.Error(), "not valid JSON: line 3, column 3") {
		t.Errorf("got %v, want a JSON syntax error at line 3, column 3", err)
	}
	_, err = ParseJSON([]byte(`{"interval": "1s"} {}`))
	if err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("trailing data: got %v", err)
	}
}

func TestClusterDocuments(t *testing.T) {
	yamlCluster := `
name: backend
connect_timeout: 0.25s
type: STRICT_DNS
lb_policy: ROUND_ROBIN
common_lb_config:
  healthy_panic_threshold:
    value: 33.5
outlier_detection:
  consecutive_5xx: 3
  interval: 5s
`
	cfg, threshold, err := ParseClusterYAML([]byte(yamlCluster))
	if err != nil {
		t.Fatal(err)
	}
	want := engine.DefaultConfig()
	want.Consecutive5xx = 3
	want.IntervalMs = 5000
	if cfg != want || threshold != 33.5 {
		t.Errorf("got %+v, %v; want %+v, 33.5", cfg, threshold, want)
	}
	if got, err := ParseYAML([]byte(yamlCluster)); err != nil || got != want {
		t.Errorf("ParseYAML(cluster) = %+v, %v", got, err)
	}
	// JSON with the lowerCamel names protojson accepts, and no threshold.
	cfg, threshold, err = ParseClusterYAML([]byte(`{"name": "b", "outlierDetection": {"maxEjectionPercent": 50}, "commonLbConfig": {}}`))
	if err != nil || cfg.MaxEjectionPercent != 50 || threshold != DefaultHealthyPanicThreshold {
		t.Errorf("camelCase cluster: %+v, %v, %v", cfg, threshold, err)
	}
	// A bare outlier_detection object has Envoy's default threshold.
	if _, threshold, err = ParseClusterYAML([]byte("consecutive_5xx: 2")); err != nil || threshold != 50 {
		t.Errorf("bare object: threshold %v, %v", threshold, err)
	}
	if _, threshold, err = ParseClusterYAML([]byte("outlier_detection: {}\ncommon_lb_config: {healthy_panic_threshold: {value: 0}}")); err != nil || threshold != 0 {
		t.Errorf("threshold 0: %v, %v", threshold, err)
	}
}

func TestFromProto(t *testing.T) {
	cfg, err := FromProto(&clusterv3.OutlierDetection{
		Consecutive_5Xx:       wrapperspb.UInt32(0),
		BaseEjectionTime:      durationpb.New(400e9),
		MaxEjectionTimeJitter: &durationpb.Duration{Nanos: 1_500_000},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Consecutive5xx != 0 || cfg.BaseEjectionTimeMs != 400000 || cfg.MaxEjectionTimeMs != 400000 || cfg.MaxEjectionTimeJitterMs != 1 {
		t.Errorf("FromProto = %+v", cfg)
	}
	// A Duration whose seconds and nanos disagree in sign is not a valid
	// Duration at all (PGV's "value is not a valid duration").
	_, err = FromProto(&clusterv3.OutlierDetection{Interval: &durationpb.Duration{Seconds: 1, Nanos: -1}})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "interval" || !strings.Contains(err.Error(), "not a valid duration") {
		t.Errorf("invalid Duration: %v", err)
	}
	_, err = FromProto(&clusterv3.OutlierDetection{MaxEjectionPercent: wrapperspb.UInt32(101), Interval: durationpb.New(0)})
	if n := len(FieldErrors(err)); n != 2 {
		t.Errorf("want 2 errors, got %d: %v", n, err)
	}
}

// conformanceConfigs returns the "config" object of every trace in
// ../shared/conformance, if the folder is there.
func conformanceConfigs(tb testing.TB) map[string][]byte {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "conformance", "*.json"))
	if more, _ := filepath.Glob("/work/shared/conformance/*.json"); len(files) == 0 {
		files = more
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var trace struct {
			Config json.RawMessage `json:"config"`
		}
		if err := json.Unmarshal(data, &trace); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		if trace.Config != nil {
			out[filepath.Base(f)] = trace.Config
		}
	}
	return out
}

func TestConformanceConfigsParse(t *testing.T) {
	configs := conformanceConfigs(t)
	if len(configs) == 0 {
		t.Skip("no conformance traces found")
	}
	for name, cfgJSON := range configs {
		a, err := ParseJSON(cfgJSON)
		if err != nil {
			t.Errorf("%s: ParseJSON: %v", name, err)
			continue
		}
		b, err := ParseYAML(cfgJSON)
		if err != nil || a != b {
			t.Errorf("%s: ParseYAML = %+v, %v; ParseJSON = %+v", name, b, err, a)
		}
	}
}

// Envoy truncates durations to whole ms; the part below the ms is kept for
// the gRPC dialect (grpc-go reads the proto as a time.Duration), survives
// ApplyFields' round trip, and is written back by ToProto.
func TestSubMillisecondKeptForGRPC(t *testing.T) {
	cfg, err := ParseJSON([]byte(`{"interval":"0.9995s","base_ejection_time":"1.0000005s","max_ejection_time":"300.000001s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IntervalMs != 999 || cfg.BaseEjectionTimeMs != 1000 || cfg.MaxEjectionTimeMs != 300000 {
		t.Errorf("Envoy's ms: %d %d %d", cfg.IntervalMs, cfg.BaseEjectionTimeMs, cfg.MaxEjectionTimeMs)
	}
	if cfg.GRPCIntervalNs() != 999_500_000 || cfg.GRPCBaseEjectionTimeNs() != 1_000_000_500 || cfg.GRPCMaxEjectionTimeNs() != 300_000_001_000 {
		t.Errorf("grpc-go's ns: %d %d %d", cfg.GRPCIntervalNs(), cfg.GRPCBaseEjectionTimeNs(), cfg.GRPCMaxEjectionTimeNs())
	}
	again, err := ApplyFields(cfg, map[string]string{"max_ejection_percent": "20"})
	if err != nil {
		t.Fatal(err)
	}
	if again.GRPCBaseEjectionTimeNs() != 1_000_000_500 || again.GRPCIntervalNs() != 999_500_000 {
		t.Errorf("after ApplyFields: %d %d", again.GRPCIntervalNs(), again.GRPCBaseEjectionTimeNs())
	}
	set, err := ApplyFields(engine.DefaultConfig(), map[string]string{"base_ejection_time": "0.9995s"})
	if err != nil {
		t.Fatal(err)
	}
	if set.BaseEjectionTimeMs != 999 || set.GRPCBaseEjectionTimeNs() != 999_500_000 {
		t.Errorf("-set base_ejection_time=0.9995s: %d ms, %d ns", set.BaseEjectionTimeMs, set.GRPCBaseEjectionTimeNs())
	}
}
