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

// FuzzParseCluster checks the import of whole clusters and
// DestinationRules: no panic, every error field-named, every accepted
// cluster read back the same from its own YAML.
func FuzzParseCluster(f *testing.F) {
	for _, seed := range []string{
		"name: a\ncircuit_breakers: {thresholds: [{priority: HIGH, max_retries: 9}, {max_retries: 7, retry_budget: {}}]}\nlb_policy: RANDOM\noutlier_detection: {}\n",
		"name: a\ntransport_socket: {name: t, typed_config: {'@type': type.googleapis.com/acme.X, k: 1}}\noutlier_detection: {consecutive_5xx: 2}\ncommon_lb_config: {healthy_panic_threshold: {value: 12.5}}\n",
		`{"cluster": {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "a", "outlier_detection": {}}}`,
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: r}\nspec:\n  host: r\n  trafficPolicy:\n    connectionPool: {http: {maxRetries: 4}}\n    retryBudget: {percent: 30}\n    loadBalancer: {simple: RANDOM}\n    outlierDetection: {consecutive5xxErrors: 3, interval: 1m, minHealthPercent: 20, splitExternalLocalOriginErrors: true, consecutiveLocalOriginFailures: 2}\n",
		"host: r\ntrafficPolicy: {outlierDetection: {baseEjectionTime: 1h}}\nsubsets: [{name: v1, trafficPolicy: {outlierDetection: {}}}]\n",
		"kind: DestinationRule\n",
		"trafficPolicy: 3\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCluster(data)
		if err != nil {
			if len(FieldErrors(err)) == 0 {
				t.Fatalf("error %q (%T) holds no *FieldError", err, err)
			}
			return
		}
		again, err := ParseCluster([]byte(c.YAML()))
		if err != nil || !again.Equal(c) {
			t.Fatalf("Cluster.YAML does not read back: %v\n%s\n got %+v\nwant %+v", err, c.YAML(), again, c)
		}
	})
}
