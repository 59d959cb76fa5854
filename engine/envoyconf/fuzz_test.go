package envoyconf

import (
	"errors"
	"testing"
)

// FuzzParseYAML checks that no input panics, that every error is a
// field-named *FieldError, and that every accepted config survives
// ClusterYAML → ParseClusterYAML unchanged.
func FuzzParseYAML(f *testing.F) {
	for _, cfg := range conformanceConfigs(f) {
		f.Add(cfg)
	}
	for _, seed := range []string{
		"",
		"{}",
		"consecutive_5xx: 3\ninterval: 1.5s\nbase_ejection_time: 400s\n",
		"max_ejection_percent: 101\nenforcing_success_rate: 101\n",
		"interval: 0.0015s\nmax_ejection_time_jitter: 0.0005s\n",
		"base_ejection_time: 30s\nmax_ejection_time: 10s\n",
		"interval: 1500ms\n",
		"consecutive_5xx: abc\nfoo: 1\n",
		"name: c\noutlier_detection:\n  split_external_local_origin_errors: true\ncommon_lb_config:\n  healthy_panic_threshold:\n    value: 20\n",
		`{"outlierDetection": {"maxEjectionTime": "9223372036.999s", "baseEjectionTime": "9223372036s"}}`,
		"always_eject_one_host: true\ndetect_degraded_hosts: true\nsuccessful_active_health_check_uneject_host: false\n",
		"interval: [",
		"- a\n- b\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseYAML(data)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %q (%T) is not a *FieldError", err, err)
			}
			if len(FieldErrors(err)) == 0 {
				t.Fatalf("FieldErrors(%q) is empty", err)
			}
			return
		}
		text := ClusterYAML(cfg, "fuzz", 50, 3)
		again, threshold, err := ParseClusterYAML([]byte(text))
		if err != nil {
			t.Fatalf("ClusterYAML output does not parse: %v\n%s", err, text)
		}
		if again != cfg || threshold != 50 {
			t.Fatalf("round trip changed the config:\n got %+v\nwant %+v\n%s", again, cfg, text)
		}
	})
}
