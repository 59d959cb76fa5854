package envoyconf

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"outlierlab/engine"
)

func TestApplyFields(t *testing.T) {
	base := engine.DefaultConfig()
	base.Consecutive5xx = 3
	for _, tc := range []struct {
		name string
		set  map[string]string
		want func(*engine.Config)
	}{
		{"nothing", nil, func(*engine.Config) {}},
		{"number", map[string]string{"max_ejection_percent": "34"}, func(c *engine.Config) { c.MaxEjectionPercent = 34 }},
		{"spaces", map[string]string{"max_ejection_percent": " 34 "}, func(c *engine.Config) { c.MaxEjectionPercent = 34 }},
		{"duration", map[string]string{"base_ejection_time": "30s", "interval": "1.5s"}, func(c *engine.Config) { c.IntervalMs = 1500 }},
		{"bool", map[string]string{"always_eject_one_host": "true"}, func(c *engine.Config) { c.AlwaysEjectOneHost = true }},
		{"empty resets to Envoy's default", map[string]string{"consecutive_5xx": ""}, func(c *engine.Config) { c.Consecutive5xx = 5 }},
		{"derived max follows base", map[string]string{"base_ejection_time": "400s"}, func(c *engine.Config) {
			c.BaseEjectionTimeMs, c.MaxEjectionTimeMs = 400000, 400000
		}},
		{"explicit max with base", map[string]string{"base_ejection_time": "400s", "max_ejection_time": "500s"}, func(c *engine.Config) {
			c.BaseEjectionTimeMs, c.MaxEjectionTimeMs = 400000, 500000
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := base
			tc.want(&want)
			got, err := ApplyFields(base, tc.set)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestApplyFieldsPinnedMaxIsChecked(t *testing.T) {
	base := engine.DefaultConfig()
	base.MaxEjectionTimeMs = 200000 // not the default for base 30s, so it stays
	_, err := ApplyFields(base, map[string]string{"base_ejection_time": "400s"})
	if err == nil || !strings.Contains(err.Error(), "max_ejection_time: 200s is below base_ejection_time 400s") {
		t.Errorf("got %v", err)
	}
}

func TestApplyFieldsErrors(t *testing.T) {
	for _, tc := range []struct {
		set     map[string]string
		field   string
		wantAll string
	}{
		{map[string]string{"foo": "1"}, "foo", "unknown field|consecutive_5xx, interval"},
		{map[string]string{"MaxEjectionPercent": "1"}, "MaxEjectionPercent", `unknown field, did you mean "max_ejection_percent"?`},
		{map[string]string{"consecutive_5xx": "abc"}, "consecutive_5xx", `consecutive_5xx: "abc" is not a number (allowed 0–4294967295)`},
		{map[string]string{"consecutive_5xx": "-1"}, "consecutive_5xx", "-1 is out of range"},
		{map[string]string{"max_ejection_percent": "101"}, "max_ejection_percent", "max_ejection_percent: 101 is out of range (allowed 0–100)"},
		{map[string]string{"interval": "1500ms"}, "interval", `"1500ms" is not a valid duration|write "1.5s" for 1500ms`},
		{map[string]string{"interval": "30"}, "interval", `write "30s" for 30 seconds`},
		{map[string]string{"interval": "0s"}, "interval", "(allowed > 0s)"},
		{map[string]string{"always_eject_one_host": "yes"}, "always_eject_one_host", `"yes" is not a boolean (allowed true or false)`},
		{map[string]string{"max_ejection_time": "10s"}, "max_ejection_time", "max_ejection_time: 10s is below base_ejection_time 30s (allowed ≥ base_ejection_time)"},
	} {
		_, err := ApplyFields(engine.DefaultConfig(), tc.set)
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%v: error %v is not a *FieldError", tc.set, err)
			continue
		}
		if fe.Field != tc.field {
			t.Errorf("%v: Field = %q, want %q", tc.set, fe.Field, tc.field)
		}
		for _, want := range strings.Split(tc.wantAll, "|") {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: error %q does not contain %q", tc.set, err, want)
			}
		}
	}
	_, err := ApplyFields(engine.DefaultConfig(), map[string]string{"a": "1", "interval": "x", "max_ejection_percent": "101"})
	if n := len(FieldErrors(err)); n != 1 {
		// Unknown names are reported before any value is looked at.
		t.Errorf("got %d errors, want 1: %v", n, err)
	}
	_, err = ApplyFields(engine.DefaultConfig(), map[string]string{"interval": "x", "max_ejection_percent": "101"})
	if n := len(FieldErrors(err)); n != 2 {
		t.Errorf("got %d errors, want 2: %v", n, err)
	}
}

func TestToProtoFromProtoRoundTrip(t *testing.T) {
	cfgs := []engine.Config{engine.DefaultConfig()}
	for _, row := range fieldRows {
		c := engine.DefaultConfig()
		row.want(&c)
		cfgs = append(cfgs, c)
	}
	big := engine.DefaultConfig()
	big.BaseEjectionTimeMs = 9223372036999 // beyond time.Duration's range, within Envoy's
	big.MaxEjectionTimeMs = big.BaseEjectionTimeMs
	cfgs = append(cfgs, big)
	for _, c := range cfgs {
		got, err := FromProto(ToProto(c))
		if err != nil || got != c {
			t.Errorf("FromProto(ToProto(%+v)) = %+v, %v", c, got, err)
		}
	}
}

const defaultClusterYAML = `name: outlierlab
circuit_breakers:
  thresholds:
  - max_retries: 3
outlier_detection:
  consecutive_5xx: 5
  interval: 10s
  base_ejection_time: 30s
  max_ejection_percent: 10
  enforcing_consecutive_5xx: 100
  enforcing_success_rate: 100
  success_rate_minimum_hosts: 5
  success_rate_request_volume: 100
  success_rate_stdev_factor: 1900
  consecutive_gateway_failure: 5
  enforcing_consecutive_gateway_failure: 0
  split_external_local_origin_errors: false
  consecutive_local_origin_failure: 5
  enforcing_consecutive_local_origin_failure: 100
  enforcing_local_origin_success_rate: 100
  failure_percentage_threshold: 85
  enforcing_failure_percentage: 0
  enforcing_failure_percentage_local_origin: 0
  failure_percentage_minimum_hosts: 5
  failure_percentage_request_volume: 50
  max_ejection_time: 300s
  max_ejection_time_jitter: 0s
  successful_active_health_check_uneject_host: true
  always_eject_one_host: false
  detect_degraded_hosts: false
common_lb_config:
  healthy_panic_threshold:
    value: 50
`

func TestClusterYAML(t *testing.T) {
	if got := ClusterYAML(engine.DefaultConfig(), "", 50, 3); got != defaultClusterYAML {
		t.Errorf("ClusterYAML(defaults):\n%s\nwant:\n%s", got, defaultClusterYAML)
	}
	odd := engine.DefaultConfig()
	odd.IntervalMs = 1500
	odd.MaxEjectionTimeJitterMs = 1
	odd.SplitExternalLocalOriginErrors = true
	for _, tc := range []struct {
		cfg       engine.Config
		name      string
		threshold float64
	}{
		{engine.DefaultConfig(), "backend", 50},
		{odd, "yes", 0},
		{odd, "my cluster: with colon", 33.3},
		{odd, "123", 100},
	} {
		text := ClusterYAML(tc.cfg, tc.name, tc.threshold, 3)
		if !strings.Contains(text, "interval: "+formatMs(tc.cfg.IntervalMs)+"\n") {
			t.Errorf("interval not written as seconds:\n%s", text)
		}
		var cluster struct {
			Name string `json:"name"`
		}
		if err := yaml.Unmarshal([]byte(text), &cluster); err != nil || cluster.Name != tc.name {
			t.Errorf("name %q reads back as %q, %v", tc.name, cluster.Name, err)
		}
		got, threshold, err := ParseClusterYAML([]byte(text))
		if err != nil || got != tc.cfg || threshold != tc.threshold {
			t.Errorf("round trip of\n%s\n= %+v, %v, %v; want %+v, %v", text, got, threshold, err, tc.cfg, tc.threshold)
		}
	}
}
