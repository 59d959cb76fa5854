package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeCommands runs each `go run .` line of the README's "Other
// commands" and "What Envoy did" sections as written (globs expanded as a shell would, quotes removed):
// every one must exit 0, or 1 where the README says so. A command that names a file the repository does
// not have fails here (issue 25), and so does one that reaches outside
// the repository (../shared is not in every clone; issue 35). `lessons
// -check` is left to TestEveryCheck, which runs the same check.
func TestReadmeCommands(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, section := range []string{"## Other commands", "## What Envoy did beside what the lab says"} {
		_, rest, ok := strings.Cut(string(readme), section)
		if !ok {
			t.Fatalf("README has no section %q", section)
		}
		for _, line := range strings.Split(rest, "\n")[1:] {
			if strings.HasPrefix(line, "## ") {
				break
			}
			lines = append(lines, line)
		}
	}
	ran := 0
	for _, line := range lines {
		cmd, comment, _ := strings.Cut(line, "#")
		fields := shellFields(cmd)
		if len(fields) < 3 || fields[0] != "go" || fields[1] != "run" || fields[2] != "." || (len(fields) > 3 && fields[3] == "lessons") {
			continue
		}
		var args []string
		for _, f := range fields[3:] {
			if strings.Contains(f, "../") {
				t.Errorf("%s: %s is outside the repository (a clone may not have it)", strings.TrimSpace(cmd), f)
			}
			if m, _ := filepath.Glob(f); strings.ContainsAny(f, "*?[") && len(m) > 0 {
				args = append(args, m...)
				continue
			}
			args = append(args, f)
		}
		var out, errb bytes.Buffer
		want := 0
		if strings.Contains(comment, "exit 1 when") && strings.HasSuffix(strings.TrimSpace(comment), "as here") {
			want = 1 // the README says this example exits 1
		}
		if code := Dispatch(args, &out, &errb); code != want {
			t.Errorf("%s: exit %d, want %d\n%s", strings.TrimSpace(cmd), code, want, errb.String())
		}
		t.Logf("%s: %d bytes", strings.TrimSpace(cmd), out.Len())
		ran++
	}
	if ran < 11 {
		t.Errorf("ran %d README commands, want the sections' 11 or more", ran)
	}
}

// shellFields splits a command line as sh does for the README's lines:
// on spaces, with '…' quoting.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
