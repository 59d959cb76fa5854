package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestLintCommand(t *testing.T) {
	cluster := "name: search\noutlier_detection:\n  interval: 10s\ncommon_lb_config:\n  healthy_panic_threshold: {value: 50}\n"
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTrace(t, tc.body)
			var out, errb bytes.Buffer
			code := dispatch(append(append([]string{"lint"}, tc.args...), p), &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Fatalf("exit %d (want %d)\nstdout %s\nstderr %s\nwant %q / %q", code, tc.code, out.String(), errb.String(), tc.out, tc.err)
			}
		})
	}
}
