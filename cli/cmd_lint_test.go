package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestLintCommand(t *testing.T) {
	t.Parallel()
	cluster := "name: search\noutlier_detection:\n  interval: 10s\ncommon_lb_config:\n  healthy_panic_threshold: {value: 50}\n"
	istio, err := os.ReadFile("testdata/lint/istio-destination-rule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rule, err := os.ReadFile("testdata/import/destination-rule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		body     string
		code     int
		out, err string
	}{
		{"six hosts at the default cap", []string{"-hosts", "6", "-rps", "600"}, cluster, 1, "problem  max_ejection_percent: the cap refuses every ejection: 100·(0+1)/6 = 16.7% > 10%", ""},
		{"a cap that fits", []string{"-hosts", "6", "-rps", "600"}, "max_ejection_percent: 34\n", 0, "admits 2 of 6", ""},
		{"malformed yaml", []string{"-hosts", "6"}, "outlier_detection: {max_ejection_percent: 101}\n", 2, "", "max_ejection_percent: 101 is out of range (allowed 0–100)"},
		{"hosts out of range", []string{"-hosts", "0"}, cluster, 2, "", "-hosts: 0 is out of range (allowed 1–10000)"},
		{"panic threshold out of range", []string{"-hosts", "6", "-panic-threshold", "120"}, cluster, 2, "", "-panic-threshold: 120 is out of range"},
		{"rps NaN", []string{"-hosts", "6", "-rps", "NaN"}, cluster, 2, "", "-rps: NaN is out of range (allowed 0–1e9)"},
		{"rps infinite", []string{"-hosts", "6", "-rps", "+Inf"}, cluster, 2, "", "-rps: +Inf is out of range (allowed 0–1e9)"},
		{"panic threshold NaN", []string{"-hosts", "6", "-panic-threshold", "NaN"}, cluster, 2, "", "-panic-threshold: NaN is out of range (allowed 0–100)"},
		{"empty file", []string{"-hosts", "6"}, "", 2, "", ": no outlier_detection settings found"},
		{"blank file", []string{"-hosts", "6"}, "\n  \n", 2, "", ": no outlier_detection settings found"},
		{"comments only", []string{"-hosts", "6"}, "# outlier_detection:\n#   max_ejection_percent: 50\n", 2, "", ": no outlier_detection settings found"},
		{"explicit defaults are linted", []string{"-hosts", "10"}, "outlier_detection: {}\n", 0, "admits 1 of 10", ""},
		// Istio's cluster: success rate detects only, panic is off, and a 100%
		// cap can take every host out.
		{"istio cluster", []string{"-hosts", "6", "-rps", "600"}, string(istio), 0, "info     enforcing_success_rate: success rate is detection-only", ""},
		{"istio cluster: no healthy upstream", []string{"-hosts", "6", "-rps", "600"}, string(istio), 0, `warning  healthy_panic_threshold: panic is disabled (healthy_panic_threshold 0`, ""},
		// Success rate cannot run on 4 hosts, but Istio never enforces it:
		// that is information, not a problem (exit 0, not 1).
		{"istio cluster of four hosts", []string{"-hosts", "4", "-rps", "600"}, string(istio), 0, "info     success_rate_minimum_hosts: success rate never runs", ""},
		{"panic threshold flag overrides the file", []string{"-hosts", "6", "-rps", "600", "-panic-threshold", "50"}, string(istio), 0, "warning  max_ejection_percent: ejecting 4 of 6 hosts puts the cluster in panic", ""},
		// A DestinationRule is read as istiod translates it; its notes come first.
		{"istio destination rule", []string{"-hosts", "6", "-rps", "600"}, string(rule), 0, "note     spec.trafficPolicy.outlierDetection.minHealthPercent: unset (0), so istiod turns panic off", ""},
		{"istio destination rule: the translated config is linted", []string{"-hosts", "6", "-rps", "600"}, string(rule), 0, "info     enforcing_success_rate: success rate is detection-only", ""},
		// A mesh: 20 pods share 1 000 req/s, each proxy counting its own.
		{"mesh: per-client volume", []string{"-hosts", "6", "-rps", "1000", "-clients", "20"}, "outlier_detection: {enforcing_success_rate: 100}\n", 1, "problem  success_rate_request_volume: success rate never runs in any of the 20 clients", ""},
		{"clients out of range", []string{"-hosts", "6", "-clients", "0"}, cluster, 2, "", "-clients: 0 is out of range (allowed 1–100000)"},
		{"istio destination rule with a bad field", []string{"-hosts", "6"}, "host: r\ntrafficPolicy:\n  outlierDetection: {maxEjectionPercent: 120}\n", 2, "", "trafficPolicy.outlierDetection.maxEjectionPercent: 120 is out of range (allowed 0–100)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTrace(t, tc.body)
			var out, errb bytes.Buffer
			code := Dispatch(append(append([]string{"lint"}, tc.args...), p), &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Fatalf("exit %d (want %d)\nstdout %s\nstderr %s\nwant %q / %q", code, tc.code, out.String(), errb.String(), tc.out, tc.err)
			}
		})
	}
}
