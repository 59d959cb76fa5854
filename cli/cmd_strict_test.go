package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Issue 15, defect 5: the command line refuses what it used to accept.
func TestStrictCommandLine(t *testing.T) {
	t.Parallel()
	unnamed := strings.Replace(passingTrace, `"name":"ok",`, "", 1)
	for _, c := range []struct {
		name string
		run  func([]string, io.Writer, io.Writer) int
		args func(t *testing.T) []string
		code int
		out  string
		err  string
	}{
		{"serve -addr nonsense", runServe, func(*testing.T) []string { return []string{"-addr", "nonsense"} }, 2, "", `-addr: "nonsense" is not HOST:PORT`},
		{"serve -addr bad port", runServe, func(*testing.T) []string { return []string{"-addr", "127.0.0.1:99999"} }, 2, "", "-addr:"},
		{"serve extra", runServe, func(*testing.T) []string { return []string{"extra"} }, 2, "", "serve takes no arguments"},
		{"serve -log-format xml", runServe, func(*testing.T) []string { return []string{"-log-format", "xml"} }, 2, "", `-log-format: "xml" is not a format (allowed text, json)`},
		{"replay {}", runReplay, func(t *testing.T) []string { return []string{writeTrace(t, `{}`)} }, 2, "", "steps: the trace has no steps"},
		{"replay -check {}", runReplay, func(t *testing.T) []string { return []string{"-check", writeTrace(t, `{}`)} }, 2, "", "steps: the trace has no steps"},
		{"replay no hosts", runReplay, func(t *testing.T) []string { return []string{writeTrace(t, `{"steps":[{"at_ms":0,"tick":true}]}`)} }, 2, "", "hosts: missing, and no step adds a host"},
		{"replay -check unnamed", runReplay, func(t *testing.T) []string { return []string{"-check", writeTrace(t, unnamed)} }, 0, `trace.json: (the trace has no "name")`, ""},
		{"lessons -dir /missing", runLessons, func(*testing.T) []string { return []string{"-dir", "/missing-lessons-dir"} }, 2, "", "-dir /missing-lessons-dir: not a directory"},
		{"lessons -dir empty", runLessons, func(t *testing.T) []string { return []string{"-dir", t.TempDir()} }, 2, "", "-dir /"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := c.run(c.args(t), &out, &errb)
			if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.err) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout ~ %q, stderr ~ %q", code, out.String(), errb.String(), c.code, c.out, c.err)
			}
		})
	}
}
