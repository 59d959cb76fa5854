package cli

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The load test starts this program's serve as a child process. Under
// `go test` the program is the test binary: with asMainEnv set it runs the
// command its arguments name instead of the tests.
const asMainEnv = "OUTLIERLAB_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	// The tests read the repository's files by their paths from its root
	// (testdata/…, README.md, deploy/…, ../shared), as the README's
	// commands do.
	if err := os.Chdir(".."); err != nil {
		panic(err)
	}
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(Dispatch(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// A small load test end to end: a child serve, streams opened, commands
// redrawn, the server's memory read from its own process, nothing lost.
// The child keeps its workshops in a directory of its own, never the
// user's default one (a `make run` may hold it): with $HOME here, nothing
// appears under it.
func TestLoadtestSmall(t *testing.T) {
	t.Setenv(asMainEnv, "1")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("OUTLIERLAB_DATA_DIR", "")
	var out, errb bytes.Buffer
	if code := runLoadtest([]string{"-streams", "6", "-movers", "2", "-duration", "1s"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("the load test's server wrote in $HOME: %v", entries)
	}
	text := out.String()
	for _, re := range []string{
		`server: http://127\.0\.0\.1:\d+ \(pid \d+\), soft memory limit 400 MiB`,
		`opened 6 streams`,
		`after moving: server RSS \d+ MiB, heap [\d.]+ MiB; clients RSS \d+ MiB`,
		`commands (\d+), redrawn \d+`,
		`dropped streams 0, lost commands \(204, no redraw in 5 s\) 0, refused commands 0`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("no %q in:\n%s", re, text)
		}
	}
	if strings.Contains(text, "commands 0,") {
		t.Errorf("no command was sent:\n%s", text)
	}
}

// A child serve that cannot start says why, at once: the load test does
// not wait 30 s for an address that will never come. (Its data directory
// is its own, so a `make run` holding the user's is never in the way.)
func TestLoadtestChildFails(t *testing.T) {
	t.Setenv(asMainEnv, "1")
	start := time.Now()
	srv, err := startLoadServer(1, 400, "-max-rooms", "0")
	if err == nil {
		srv.stop()
		t.Fatal("a child with -max-rooms 0 started")
	}
	if !strings.Contains(err.Error(), "-max-rooms: 0 is out of range") || !strings.Contains(err.Error(), "exit status 2") {
		t.Errorf("the error does not say why: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v to say so", d)
	}
}

func TestLoadtestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-streams", "0"}, {"-streams", "6", "-movers", "7"}, {"-duration", "500ms"},
		{"-every", "1ms"}, {"-memory-limit", "-1"}, {"extra"},
	} {
		if code := runLoadtest(args, io.Discard, io.Discard); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// The heavy clients' part end to end: each kind is sent and answered
// (the answers by status), the movers' redraws timed meanwhile.
func TestLoadtestHeavy(t *testing.T) {
	t.Setenv(asMainEnv, "1")
	var out, errb bytes.Buffer
	if code := runLoadtest([]string{"-light", "-streams", "2", "-movers", "1", "-duration", "2s", "-heavy", "2", "-heavy-kinds", "compare,lab"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	text := out.String()
	for _, re := range []string{
		`opened 2 streams with the preset's settings`,
		`command→redraw p50 `,
		`heavy clients 2:\n  compare  (200|503) ×\d+`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("no %q in:\n%s", re, text)
		}
	}
	if code := runLoadtest([]string{"-heavy-kinds", "nope"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("an unknown kind: exit %d, want 2", code)
	}
}
