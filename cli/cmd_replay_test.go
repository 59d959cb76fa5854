package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTrace(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const passingTrace = `{"name":"ok","config":{"max_ejection_percent":100},"hosts":["h0"],
 "steps":[{"at_ms":0,"http":{"host":"h0","code":500,"times":5}},{"at_ms":0,"snapshot":"s"}],
 "expect":{"events":[{"at_ms":0,"host":"h0","event":"eject","detector":"consecutive_5xx"}],
           "snapshots":[{"label":"s","at_ms":0,"ejected":["h0"],"stats":{"ejections_active":1}}]}}`

func TestReplayCommand(t *testing.T) {
	t.Parallel()
	failing := strings.Replace(passingTrace, `"ejections_active":1`, `"ejections_active":2`, 1)
	tests := []struct {
		name     string
		args     func(t *testing.T) []string
		code     int
		out, err string
	}{
		{"prints one JSON line per trace", func(t *testing.T) []string { return []string{writeTrace(t, passingTrace)} }, 0, `"event":"eject"`, ""},
		{"check passes", func(t *testing.T) []string { return []string{"-check", writeTrace(t, passingTrace)} }, 0, "ok ", ""},
		{"check diff exits 1", func(t *testing.T) []string { return []string{"-check", writeTrace(t, failing)} }, 1, `snapshot "s": ejections_active expected 2, got 1`, ""},
		{"malformed trace exits 2 naming file and field", func(t *testing.T) []string {
			return []string{writeTrace(t, `{"hosts":["h0"],"steps":[{"at_ms":0,"http":{"host":"h0","code":7}}]}`)}
		}, 2, "", "trace.json: steps[0].http.code: 7 is out of range"},
		{"malformed config exits 2", func(t *testing.T) []string {
			return []string{"-check", writeTrace(t, `{"config":{"max_ejection_percent":101},"hosts":[],"steps":[]}`)}
		}, 2, "", "max_ejection_percent"},
		// A grpc trace is read as grpc-go's xDS client reads the block
		// (outlierConfigFromCluster): what only Envoy refuses is replayed,
		// with a note; what grpc-go NACKs exits 2.
		{"grpc takes max below base", func(t *testing.T) []string {
			return []string{writeTrace(t, `{"dialect":"grpc","config":{"base_ejection_time":"30s","max_ejection_time":"10s"},"hosts":["h0"],"steps":[{"at_ms":10000,"tick":true}]}`)}
		}, 0, `"notes":["max_ejection_time: 10s is below base_ejection_time 30s (allowed ≥ base_ejection_time); Envoy refuses the cluster; grpc-go accepts it`, ""},
		{"grpc refuses a negative duration", func(t *testing.T) []string {
			return []string{writeTrace(t, `{"dialect":"grpc","config":{"interval":"-1s"},"hosts":["h0"],"steps":[{"at_ms":10000,"tick":true}]}`)}
		}, 2, "", "interval: -1s is negative (allowed ≥ 0s); grpc-go's xDS client NACKs the cluster"},
		{"missing file exits 2", func(t *testing.T) []string { return []string{"/nonexistent/x.json"} }, 2, "", "/nonexistent/x.json"},
		{"no files is a usage error", func(t *testing.T) []string { return nil }, 2, "", "usage: outlierlab replay"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Dispatch(append([]string{"replay"}, tc.args(t)...), &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Fatalf("stdout %q stderr %q; want %q / %q", out.String(), errb.String(), tc.out, tc.err)
			}
		})
	}
}

// The plain output is the documented format: one object per trace per line.
func TestReplayOutputIsJSONLines(t *testing.T) {
	t.Parallel()
	p := writeTrace(t, passingTrace)
	var out, errb bytes.Buffer
	if code := Dispatch([]string{"replay", p, p}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	var v struct {
		Name      string
		Events    []map[string]any
		Snapshots []struct {
			Label   string
			Ejected []string
			Stats   map[string]uint64
		}
	}
	if err := json.Unmarshal([]byte(lines[0]), &v); err != nil {
		t.Fatal(err)
	}
	if v.Name != "ok" || len(v.Events) != 1 || v.Snapshots[0].Stats["ejections_enforced_consecutive_5xx"] != 1 {
		t.Fatalf("unexpected output %+v", v)
	}
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Dispatch([]string{"frobnicate"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "frobnicate"`) || !strings.Contains(errb.String(), "usage:") {
		t.Fatalf("exit %d stderr %q", code, errb.String())
	}
}

// serve is the default command with its flags too (`outlierlab -addr …`,
// as help says); help's columns fit the longest name (issue 25).
func TestDefaultCommandFlags(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Dispatch([]string{"-max-tabs", "0"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "serve: -max-tabs: 0 is out of range") {
		t.Errorf("flags without a command: exit %d stderr %q", code, errb.String())
	}
	out.Reset()
	if code := Dispatch([]string{"-h"}, &out, &errb); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
	col := -1
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "  ") {
			continue
		}
		name := strings.Fields(line)[0]
		at := strings.Index(line[2+len(name):], strings.Fields(line[2+len(name):])[0]) + 2 + len(name)
		if col == -1 {
			col = at
		}
		if at != col {
			t.Errorf("help: %q's summary starts at column %d, others at %d", name, at, col)
		}
	}
}
