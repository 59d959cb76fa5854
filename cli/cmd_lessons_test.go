package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outlierlab/engine/course"
	"outlierlab/lessons"
)

// lessonDir writes lesson files into a temporary directory for -dir.
func lessonDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tinyLesson claims h5 is ejected at 40 s once the cap is raised to 34,
// and that the same check fails at the default 10%: both true.
const tinyLesson = `---
id: tiny
title: Tiny
summary: A tiny lesson.
order: 1
minutes: 2
goals: ["Know one thing."]
preset: search-cache
start: {max_ejection_percent: "10"}
controls: [max_ejection_percent]
steps:
  - id: raise
    text: "Raise the cap to 34."
    charts: [chart-lanes]
    settings: {max_ejection_percent: "34"}
    check: {kind: ejected, host: h5, at: 40s}
predict: {before_step: raise, question: "Ejected?", choices: ["yes", "no"], answer: 0, reveal: "Yes."}
quiz:
  - {question: "One?", choices: ["a", "b"], answer: 0, explain: "Because."}
  - {question: "Two?", choices: ["a", "b"], answer: 1, explain: "Because."}
ending:
  settings: [{name: max_ejection_percent, default: "10"}]
  stats: [ejections_overflow]
  rule: "Raise the cap."
  exercise: {text: "Your hosts."}
---

Body.
`

// lowerCap is a second step whose check is only the ejection: the cap of
// 34 the step before it leads to already ejects h5, so it would tick
// before the learner lowers the cap.
const lowerCap = `  - id: lower
    text: "Lower the cap to 17."
    charts: [chart-lanes]
    settings: {max_ejection_percent: "17"}
    check: {kind: ejected, host: h5, at: 40s}
predict:`

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Dispatch(append([]string{"lessons"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestLessonsList(t *testing.T) {
	t.Parallel()
	code, out, errb := runCmd(t)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{" 1. consecutive", " 3. cap ", "12. capstone", "13. grpc", "14. mesh", "14 lessons, "} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
}

// The built-in lessons: one line per step and state, every one as
// claimed, exit 0.
func TestLessonsCheck(t *testing.T) {
	t.Parallel()
	ls, err := course.Load(lessons.FS)
	if err != nil {
		t.Fatal(err)
	}
	want := len(course.Report(ls, nil))
	code, out, errb := runCmd(t, "-check")
	if code != 0 {
		t.Errorf("exit %d: %s (the lines not ok follow)", code, errb)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != want+1 {
		t.Fatalf("%d lines, want %d checks and a summary", len(lines), want)
	}
	for _, line := range lines[:want] {
		if !strings.HasPrefix(line, "ok   ") {
			t.Errorf("not ok: %s", line)
		}
	}
	if !strings.Contains(out, "ok   cap/cap-34 seed 1 intended(max_ejection_percent=34): pass, claimed pass: h5 eject (success_rate) at 40 s: 1") ||
		!strings.Contains(out, "ok   cap/cap-34 seed 1 start: fail, claimed fail: h5 eject (success_rate) at 40 s: 0") {
		t.Errorf("the cap lesson's lines are missing or changed:\n%s", out)
	}
}

// -seeds checks every lesson on each seed given; the seeds are checked
// before anything runs.
func TestLessonsCheckSeeds(t *testing.T) {
	t.Parallel()
	dir := lessonDir(t, map[string]string{"tiny.md": tinyLesson})
	code, out, errb := runCmd(t, "-check", "-dir", dir, "-seeds", "2-4")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errb, out)
	}
	for _, want := range []string{"tiny/raise seed 2 intended", "tiny/raise seed 3 start", "tiny/raise seed 4 start", "6 checks, 6 ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "seed 1 ") || strings.Contains(out, "seed 5 ") {
		t.Errorf("seeds outside 2-4 checked:\n%s", out)
	}
	for _, tc := range []struct{ arg, err string }{
		{"0", `-seeds: "0" is not a seed`},
		{"5-2", `-seeds: "5-2": the range ends before it starts`},
		{"1,x", `-seeds: "x" is not a seed`},
		{"1-", `-seeds: "" is not a seed`},
		{"1-5000", "-seeds: more than 1000 seeds"},
	} {
		code, _, errb := runCmd(t, "-check", "-dir", dir, "-seeds", tc.arg)
		if code != 2 || !strings.Contains(errb, tc.err) {
			t.Errorf("-seeds %s: exit %d, stderr %q; want 2 and %q", tc.arg, code, errb, tc.err)
		}
	}
}

// -sweep folds the seeds' lines: one line per claim, one per ranged
// check, and a summary; it takes more seeds than a check that keeps every
// line, and needs -check and -seeds.
func TestLessonsSweep(t *testing.T) {
	t.Parallel()
	dir := lessonDir(t, map[string]string{"tiny.md": tinyLesson})
	code, out, errb := runCmd(t, "-check", "-sweep", "-dir", dir, "-seeds", "1-3")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errb, out)
	}
	inOrder(t, "stdout", out, []string{"ok   tiny/raise intended: holds on 3 of 3 seeds", "ok   tiny/raise start: holds on 3 of 3 seeds",
		"swept 3 seeds: 2 claims, 0 fail on some seed; 0 ranged checks, 0 crossed or with a bound crossed more often than 1 run in 10000"})
	if !strings.Contains(errb, "swept 3 of 3 seeds") {
		t.Errorf("no progress on stderr: %q", errb)
	}
	wrong := strings.Replace(tinyLesson, `start: {max_ejection_percent: "10"}`, `start: {max_ejection_percent: "20"}`, 1)
	code, out, _ = runCmd(t, "-check", "-sweep", "-dir", lessonDir(t, map[string]string{"tiny.md": wrong}), "-seeds", "1-2")
	if code != 1 || !strings.Contains(out, "FAIL tiny/raise start: fails on 2 of 2 seeds (1, 2): pass, claimed fail: h5 ejected at 40 s: yes") {
		t.Errorf("a claim that fails: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"-sweep"}, {"-sweep", "-seeds", "1-3"}, {"-check", "-sweep"}} {
		if code, _, errb := runCmd(t, args...); code != 2 || !strings.Contains(errb, "-sweep goes with -check and -seeds") {
			t.Errorf("%v: exit %d, %q", args, code, errb)
		}
	}
	if _, err := parseSeedsUpTo("1-5000", seedLimit(true)); err != nil {
		t.Errorf("a sweep of 5000 seeds: %v", err)
	}
}

func TestParseSeeds(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"1": "[1]", "1-5": "[1 2 3 4 5]", "3,1,3": "[3 1]", "1-3,7, 9": "[1 2 3 7 9]"} {
		got, err := parseSeeds(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("parseSeeds(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
}

func TestLessonsCheckExitCodes(t *testing.T) {
	t.Parallel()
	wrongClaim := strings.Replace(tinyLesson, `settings: {max_ejection_percent: "34"}`, `settings: {max_ejection_percent: "16"}`, 1)
	startPasses := strings.Replace(tinyLesson, `start: {max_ejection_percent: "10"}`, `start: {max_ejection_percent: "20"}`, 1)
	malformed := strings.Replace(tinyLesson, "minutes: 2\n", "", 1)
	tests := []struct {
		name     string
		args     func(t *testing.T) []string
		code     int
		out, err string
	}{
		{"claims hold", func(t *testing.T) []string {
			return []string{"-check", "-dir", lessonDir(t, map[string]string{"tiny.md": tinyLesson})}
		}, 0, "2 checks, 2 ok, 0 not as the lessons claim", ""},
		{"a later step's check already holds: exit 1", func(t *testing.T) []string {
			return []string{"-check", "-dir", lessonDir(t, map[string]string{"tiny.md": strings.Replace(tinyLesson, "predict:", lowerCap, 1)})}
		}, 1, "FAIL tiny/lower seed 1 after raise(max_ejection_percent=34): pass, claimed fail: h5 ejected at 40 s: yes", ""},
		{"intended settings fail: exit 1", func(t *testing.T) []string {
			return []string{"-check", "-dir", lessonDir(t, map[string]string{"tiny.md": wrongClaim})}
		}, 1, "FAIL tiny/raise seed 1 intended(max_ejection_percent=16): fail, claimed pass: h5 ejected at 40 s: no", ""},
		{"the check passes at the start: exit 1", func(t *testing.T) []string {
			return []string{"-check", "-dir", lessonDir(t, map[string]string{"tiny.md": startPasses})}
		}, 1, "FAIL tiny/raise seed 1 start: pass, claimed fail: h5 ejected at 40 s: yes", ""},
		{"a lesson without an ending: exit 1", func(t *testing.T) []string {
			unended := tinyLesson[:strings.Index(tinyLesson, "ending:")] + tinyLesson[strings.Index(tinyLesson, "---\n\nBody"):]
			return []string{"-check", "-dir", lessonDir(t, map[string]string{"tiny.md": unended})}
		}, 1, "FAIL tiny.md: missing ending", ""},
		{"malformed lesson: exit 2 naming the file", func(t *testing.T) []string {
			return []string{"-check", "-dir", lessonDir(t, map[string]string{"tiny.md": malformed})}
		}, 2, "", "tiny.md: missing minutes"},
		{"malformed lesson fails the listing too", func(t *testing.T) []string {
			return []string{"-dir", lessonDir(t, map[string]string{"tiny.md": malformed})}
		}, 2, "", "tiny.md: missing minutes"},
		{"one lesson", func(t *testing.T) []string { return []string{"-check", "-lesson", "consecutive"} }, -1, "ok   consecutive/gateway-detected seed 1", ""},
		{"unknown lesson", func(t *testing.T) []string { return []string{"-lesson", "nope"} }, 2, "", `no lesson "nope"`},
		{"stray argument", func(t *testing.T) []string { return []string{"cap"} }, 2, "", "usage: outlierlab lessons"},
		{"bad flag", func(t *testing.T) []string { return []string{"-chek"} }, 2, "", "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errb := runCmd(t, tc.args(t)...)
			if tc.code >= 0 && code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, out, errb)
			}
			if !strings.Contains(out, tc.out) || !strings.Contains(errb, tc.err) {
				t.Fatalf("stdout %q stderr %q; want %q / %q", out, errb, tc.out, tc.err)
			}
		})
	}
}
