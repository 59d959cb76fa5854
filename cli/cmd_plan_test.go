package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// onePlan is a plan of one scene asking whether h5 is ejected at 40 s
// once the cap is 34; answer is what the author expects.
func onePlan(answer string) string {
	return `---
title: One
summary: One scene.
minutes: 5
scenes:
  - id: raise
    title: Raise the cap
    minutes: 3
    lesson: cap
    step: cap-34
    cursor: 30s
    notes: "Failed searches fall to {{failure_pct@30s-end = 0.6..1}}%."
    question: {kind: ejected, host: h5, at: 40s, answer: "` + answer + `"}
---
`
}

// Every exit path of `plan`: 0 when the plans hold, 1 naming the scene,
// the seed and the engine's answer (or the run's number), 2 naming every
// bad field with its line, or a bad flag.
func TestPlanCommand(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		args  []string
		code  int
		// out and errOut are lines the output must hold, in order.
		out    []string
		errOut []string
	}{
		{name: "the shipped plans, listed", args: []string{}, code: 0,
			out: []string{"lightning  15 min  Outlier detection in 15 minutes (lightning.md)",
				"   1. one-bad-host         3 min  One host fails a third of its searches  asks: Is h5 ejected at 40 s?",
				"production  60 min  Outlier detection in production (production.md)"}},
		{name: "a plan that holds", files: map[string]string{"one.md": onePlan("yes")}, args: []string{"-check", "-seeds", "1-3", "one.md"}, code: 0,
			out: []string{"ok   one/raise: 7 of 7 checks hold on 3 seeds", "7 checks, 7 ok, 0 not as the plans claim"}},
		{name: "a wrong answer", files: map[string]string{"one.md": onePlan("no")}, args: []string{"-check", "-seeds", "2", "one.md"}, code: 1,
			out: []string{`FAIL one/raise seed 2 question "Is h5 ejected at 40 s?": the engine answers "yes", the plan expects "no" (the frame at 40 s)`,
				"FAIL one/raise: 2 of 3 checks hold on 1 seeds", "3 checks, 2 ok, 1 not as the plans claim"}},
		{name: "a number the run does not show", files: map[string]string{"one.md": strings.Replace(onePlan("yes"), "0.6..1", "2..3", 1)}, args: []string{"-check", "-seeds", "1", "one.md"}, code: 1,
			out: []string{"FAIL one/raise seed 1 notes {{failure_pct@30s-end = 2..3}}: the run shows 0.83, the notes state 2..3"}},
		{name: "malformed: every field named", files: map[string]string{
			"one.md": strings.Replace(strings.Replace(onePlan("maybe"), "minutes: 3", "minutes: lots", 1), "host: h5", "host: h6", 1),
			"two.md": "---\ntitle: Two\n---\n"},
			args: []string{"-check", "one.md", "two.md"}, code: 2,
			errOut: []string{
				`outlierlab plan: one.md:8: scenes[0] (raise).minutes: "lots" is not a whole number from 1 to 120`,
				`one.md:13: scenes[0] (raise).question.host: "h6" is not a host of this run (allowed h0–h5)`,
				`one.md:13: scenes[0] (raise).question.answer: "maybe" is not an answer to "ejected" (allowed yes, no)`,
				`two.md:2: summary: missing (one line for the list of plans)`,
				`two.md:2: minutes: missing (the workshop's length, 1–600)`,
				`two.md:2: scenes: missing (a list of scenes, at least one)`}},
		{name: "a challenge scene, listed", files: map[string]string{"one.md": strings.Replace(onePlan("yes"), "    cursor: 30s\n", "    cursor: 30s\n    challenge: search-cap\n", 1)}, args: []string{"one.md"}, code: 0,
			out: []string{"   1. raise                3 min  Raise the cap  asks: Is h5 ejected at 40 s?  challenge: search-cap"}},
		{name: "a challenge that is not there", files: map[string]string{"one.md": strings.Replace(onePlan("yes"), "    cursor: 30s\n", "    cursor: 30s\n    challenge: search-cop\n", 1)}, args: []string{"-check", "one.md"}, code: 2,
			errOut: []string{`outlierlab plan: one.md:12: scenes[0] (raise).challenge: "search-cop" is not a challenge (allowed bad-deploy, buggy-endpoint, burst, search-cap, two-bad-hosts)`}},
		{name: "a file that is not there", args: []string{"nothere.md"}, code: 2,
			errOut: []string{"outlierlab plan: nothere.md: cannot be read (no such file or directory)"}},
		{name: "a sweep: a line per claim and per band", files: map[string]string{"one.md": onePlan("yes")}, args: []string{"-check", "-sweep", "-seeds", "1-3", "one.md"}, code: 0,
			out: []string{`ok   one/raise question "Is h5 ejected at 40 s?": holds on 3 of 3 seeds`,
				"swept 3 seeds: 3 claims, 0 fail on some seed; 1 ranged checks, 0 crossed or with a bound crossed more often than 1 run in 10000"}},
		{name: "a sweep: a number the run does not show", files: map[string]string{"one.md": strings.Replace(onePlan("yes"), "0.6..1", "0.6..0.82", 1)}, args: []string{"-check", "-sweep", "-seeds", "1-3", "one.md"}, code: 1,
			out:    []string{"FAIL one/raise notes {{failure_pct@30s-end = 0.6..0.82}}: fails on 1 of 3 seeds (1): the run shows 0.83, the notes state 0.6..0.82"},
			errOut: []string{"outlierlab plan: 2 of 3 claims hold on every seed, 0 of 1 ranged checks keep their tails"}},
		{name: "a number written as text", files: map[string]string{"one.md": strings.Replace(onePlan("yes"), "Failed searches fall", "From 30 s, 5xx on h5 and p99 aside, failed searches fall", 1)}, args: []string{"-check", "-seeds", "1", "one.md"}, code: 1,
			out: []string{"FAIL one/raise notes' plain-text numbers: \"30 s\" written as text, checked by nothing: write a number about the run as a placeholder, stated ({{hosts = 6}}) or live, and a formula in code (`100 × (0 + 1) / 6`)"}},
		{name: "a sweep without -check", args: []string{"-sweep"}, code: 2,
			errOut: []string{"outlierlab plan: -sweep goes with -check (plan -check -sweep -seeds 1-2000)"}},
		{name: "bad seeds", args: []string{"-check", "-seeds", "0"}, code: 2,
			errOut: []string{`outlierlab plan: -seeds: "0" is not a seed (a whole number from 1; write N, A-B or A,B,C)`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.files != nil {
				t.Chdir(lessonDir(t, c.files))
			}
			var out, errOut bytes.Buffer
			code := runPlan(c.args, &out, &errOut)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out.String(), errOut.String())
			}
			inOrder(t, "stdout", out.String(), c.out)
			inOrder(t, "stderr", errOut.String(), c.errOut)
		})
	}
}

// inOrder checks that text has each of lines as a whole line, in order.
func inOrder(t *testing.T, what, text string, lines []string) {
	t.Helper()
	got := strings.Split(text, "\n")
	i := 0
	for _, want := range lines {
		for i < len(got) && got[i] != want {
			i++
		}
		if i == len(got) {
			t.Errorf("%s lacks the line (in order)\n  %s\n%s", what, want, text)
			return
		}
	}
}

// The README's example plan is a plan: it parses, and its answers and
// stated numbers hold (seeds 1–5; the shipped plans are held to 1–50).
func TestReadmePlanExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Workshop plans")
	if !ok {
		t.Fatal(`README has no "Workshop plans" section`)
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	if !ok {
		t.Fatal("the section has no ```yaml block")
	}
	block, _, _ = strings.Cut(block, "```")
	t.Chdir(lessonDir(t, map[string]string{"example.md": block}))
	var out, errOut bytes.Buffer
	if code := runPlan([]string{"-check", "-seeds", "1-5", "example.md"}, &out, &errOut); code != 0 {
		t.Errorf("plan -check on the README's example: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	inOrder(t, "stdout", out.String(), []string{"ok   example/cap-34: 26 of 26 checks hold on 5 seeds", "ok   example/panic: 5 of 5 checks hold on 5 seeds"})
}
