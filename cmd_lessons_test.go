package main

import (
	"bytes"
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
    settings: {max_ejection_percent: "34"}
    check: {kind: ejected, host: h5, at: 40s}
    fails_at_start: true
predict: {before_step: raise, question: "Ejected?", choices: ["yes", "no"], answer: 0, reveal: "Yes."}
quiz:
  - {question: "One?", choices: ["a", "b"], answer: 0, explain: "Because."}
  - {question: "Two?", choices: ["a", "b"], answer: 1, explain: "Because."}
---

Body.
`

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := dispatch(append([]string{"lessons"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestLessonsList(t *testing.T) {
	code, out, errb := runCmd(t)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{" 1. consecutive", " 3. cap ", "12. capstone", "12 lessons, "} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
}

// The built-in lessons: one line per check, every one as claimed, exit 0.
func TestLessonsCheck(t *testing.T) {
	ls, err := course.Load(lessons.FS)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, l := range ls {
		for _, s := range l.Steps {
			want++
			if s.Fails() {
				want++
			}
		}
	}
	code, out, errb := runCmd(t, "-check")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errb, out)
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
	if !strings.Contains(out, "ok   cap/cap-34 intended(max_ejection_percent=34): pass, claimed pass: h5 eject (success_rate) at 40 s: 1") ||
		!strings.Contains(out, "ok   cap/cap-34 start: fail, claimed fail: h5 eject (success_rate) at 40 s: 0") {
		t.Errorf("the cap lesson's lines are missing or changed:\n%s", out)
	}
}

func TestLessonsCheckExitCodes(t *testing.T) {
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
		{"intended settings fail: exit 1", func(t *testing.T) []string {
			return []string{"-check", "-dir", lessonDir(t, map[string]string{"tiny.md": wrongClaim})}
		}, 1, "FAIL tiny/raise intended(max_ejection_percent=16): fail, claimed pass: h5 ejected at 40 s: no", ""},
		{"fails_at_start check passes at start: exit 1", func(t *testing.T) []string {
			return []string{"-check", "-dir", lessonDir(t, map[string]string{"tiny.md": startPasses})}
		}, 1, "FAIL tiny/raise start: pass, claimed fail: h5 ejected at 40 s: yes", ""},
		{"malformed lesson: exit 2 naming the file", func(t *testing.T) []string {
			return []string{"-check", "-dir", lessonDir(t, map[string]string{"tiny.md": malformed})}
		}, 2, "", "tiny.md: missing minutes"},
		{"malformed lesson fails the listing too", func(t *testing.T) []string {
			return []string{"-dir", lessonDir(t, map[string]string{"tiny.md": malformed})}
		}, 2, "", "tiny.md: missing minutes"},
		{"one lesson", func(t *testing.T) []string { return []string{"-check", "-lesson", "cap"} }, 0, "ok   cap/overflow", ""},
		{"unknown lesson", func(t *testing.T) []string { return []string{"-lesson", "nope"} }, 2, "", `no lesson "nope"`},
		{"stray argument", func(t *testing.T) []string { return []string{"cap"} }, 2, "", "usage: outlierlab lessons"},
		{"bad flag", func(t *testing.T) []string { return []string{"-chek"} }, 2, "", "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errb := runCmd(t, tc.args(t)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, out, errb)
			}
			if !strings.Contains(out, tc.out) || !strings.Contains(errb, tc.err) {
				t.Fatalf("stdout %q stderr %q; want %q / %q", out, errb, tc.out, tc.err)
			}
		})
	}
}
