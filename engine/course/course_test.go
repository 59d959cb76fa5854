package course

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"testing/fstest"
)

// minimal is a valid lesson; the malformed cases below each break one
// thing in it.
const minimal = `---
id: tiny
title: Tiny
summary: A tiny lesson.
order: 1
minutes: 2
goals: ["Know one thing."]
preset: search-cache
start:
  max_ejection_percent: "10"
controls: [max_ejection_percent, hosts]
steps:
  - id: look
    text: "Step to 40 s."
    charts: [chart-lanes]
    check: {kind: event, event: overflow, host: h5, at: 40s}
    passes_before: "looking step: the overflow is there from the start"
  - id: raise
    text: "Raise the cap to 34."
    charts: [chart-lanes, chart-counters]
    controls: [max_ejection_percent]
    settings:
      max_ejection_percent: "34"
    check: {kind: ejected, host: h5, at: 40s}
predict:
  before_step: raise
  question: "Ejected?"
  choices: ["yes", "no"]
  answer: 0
  reveal: "Yes."
quiz:
  - {question: "One?", choices: ["a", "b"], answer: 0, explain: "Because."}
  - {question: "Two?", choices: ["a", "b"], answer: 1, explain: "Because."}
---

The threshold at 40 s was {{threshold@40s}}.
`

func TestLoadMinimal(t *testing.T) {
	ls, err := Load(fstest.MapFS{"tiny.md": {Data: []byte(minimal)}})
	if err != nil {
		t.Fatal(err)
	}
	l := ls[0]
	if l.ID != "tiny" || l.File != "tiny.md" || len(l.Steps) != 2 || l.Steps[0].MustFailBefore() || !l.Steps[1].MustFailBefore() || l.SeedOrDefault() != 1 {
		t.Fatalf("parsed %+v", l)
	}
	if !strings.Contains(l.Markdown, "{{threshold@40s}}") {
		t.Errorf("body: %q", l.Markdown)
	}
	set, err := Settings(l, "raise")
	if err != nil || set["max_ejection_percent"] != "34" {
		t.Errorf("Settings(raise) = %v, %v", set, err)
	}
	if _, err := Settings(l, "nope"); err == nil {
		t.Error("Settings of an unknown step succeeded")
	}
	// The minimal lesson's own checks hold, the way the course's do.
	for _, line := range Report(ls, nil) {
		if !line.OK() {
			t.Errorf("%s", line)
		}
	}
}

// A malformed lesson fails Load with an error that names the file and the
// problem.
func TestLoadMalformed(t *testing.T) {
	cases := []struct {
		name   string
		file   string // the file name to store it under
		edit   func(string) string
		wantIn string
	}{
		{"no front matter", "tiny.md", func(s string) string { return strings.TrimPrefix(s, "---\n") }, "does not start with a front matter block"},
		{"unclosed front matter", "tiny.md", func(s string) string { return strings.Replace(s, "\n---\n", "\n", 1) }, "front matter block is not closed"},
		{"unknown key", "tiny.md", func(s string) string { return strings.Replace(s, "minutes: 2", "minutes: 2\nduration: 5", 1) }, `unknown field "duration"`},
		{"unknown key in a step", "tiny.md", func(s string) string {
			return strings.Replace(s, "    text: \"Step to 40 s.\"", "    text: \"Step to 40 s.\"\n    hint: x", 1)
		}, `unknown field "hint"`},
		{"duplicate key", "tiny.md", func(s string) string { return strings.Replace(s, "minutes: 2", "minutes: 2\nminutes: 3", 1) }, `key "minutes" already set in map`},
		{"bad YAML", "tiny.md", func(s string) string {
			return strings.Replace(s, "goals: [\"Know one thing.\"]", "goals: [\"Know one thing.\"", 1)
		}, "front matter:"},
		{"id does not match file", "other.md", func(s string) string { return s }, `id "tiny" does not match the file name (want "other")`},
		{"missing id", "tiny.md", func(s string) string { return strings.Replace(s, "id: tiny\n", "", 1) }, "missing id"},
		{"missing title", "tiny.md", func(s string) string { return strings.Replace(s, "title: Tiny\n", "", 1) }, "missing title"},
		{"missing minutes", "tiny.md", func(s string) string { return strings.Replace(s, "minutes: 2\n", "", 1) }, "missing minutes"},
		{"missing goals", "tiny.md", func(s string) string { return strings.Replace(s, "goals: [\"Know one thing.\"]\n", "", 1) }, "missing goals"},
		{"unknown preset", "tiny.md", func(s string) string { return strings.Replace(s, "preset: search-cache", "preset: search-cash", 1) }, `unknown preset "search-cash" (presets: search-cache`},
		{"unknown setting", "tiny.md", func(s string) string {
			return strings.Replace(s, "  max_ejection_percent: \"10\"", "  max_ejection_pct: \"10\"", 1)
		}, `start: unknown setting "max_ejection_pct"`},
		{"bad setting value", "tiny.md", func(s string) string {
			return strings.Replace(s, "max_ejection_percent: \"34\"", "max_ejection_percent: \"340\"", 1)
		}, "steps[1] (raise).settings: max_ejection_percent"},
		{"bad knob value", "tiny.md", func(s string) string {
			return strings.Replace(s, "  max_ejection_percent: \"10\"", "  hosts: \"500\"", 1)
		}, "start: hosts"},
		{"unknown control", "tiny.md", func(s string) string {
			return strings.Replace(s, "controls: [max_ejection_percent, hosts]", "controls: [max_ejection_percent, host]", 1)
		}, `controls[1]: unknown setting "host"`},
		{"a step without charts", "tiny.md", func(s string) string { return strings.Replace(s, "    charts: [chart-lanes]\n", "", 1) }, "steps[0] (look).charts: missing (the charts the step is about, its key chart first: chart-sr, "},
		{"an unknown chart", "tiny.md", func(s string) string {
			return strings.Replace(s, "charts: [chart-lanes, chart-counters]", "charts: [chart-lanes, chart-latency]", 1)
		}, `steps[1] (raise).charts[1]: unknown chart "chart-latency" (charts: chart-sr, chart-lanes,`},
		{"a chart twice", "tiny.md", func(s string) string {
			return strings.Replace(s, "charts: [chart-lanes, chart-counters]", "charts: [chart-lanes, chart-lanes]", 1)
		}, `steps[1] (raise).charts[1]: "chart-lanes" is listed twice`},
		{"the compare strip without compare_strip", "tiny.md", func(s string) string {
			return strings.Replace(s, "charts: [chart-lanes, chart-counters]", "charts: [chart-compare]", 1)
		}, `steps[1] (raise).charts[0]: "chart-compare" shows only in a lesson with compare_strip: true`},
		{"an unknown figure", "tiny.md", func(s string) string {
			return strings.Replace(s, "charts: [chart-lanes, chart-counters]", "charts: [chart-lanes, chart-counters]\n    figure: streak", 1)
		}, `steps[1] (raise).figure: unknown figure "streak" (figures: streaks)`},
		{"a control the lesson does not show", "tiny.md", func(s string) string {
			return strings.Replace(s, "controls: [max_ejection_percent]\n", "controls: [max_ejection_percent, interval]\n", 1)
		}, `steps[1] (raise).controls[1]: "interval" is not a control of the lesson (its controls, or a setting a step sets or checks: max_ejection_percent, hosts)`},
		{"a control twice", "tiny.md", func(s string) string {
			return strings.Replace(s, "controls: [max_ejection_percent]\n", "controls: [max_ejection_percent, max_ejection_percent]\n", 1)
		}, `steps[1] (raise).controls[1]: "max_ejection_percent" is listed twice`},
		{"malformed check", "tiny.md", func(s string) string {
			return strings.Replace(s, "{kind: ejected, host: h5, at: 40s}", "{kind: ejected, at: 40s}", 1)
		}, "steps[1] (raise).check (ejected): needs host"},
		{"unknown check kind", "tiny.md", func(s string) string {
			return strings.Replace(s, "{kind: ejected, host: h5, at: 40s}", "{kind: kicked, host: h5, at: 40s}", 1)
		}, `unknown kind "kicked"`},
		{"bare number time", "tiny.md", func(s string) string { return strings.Replace(s, "host: h5, at: 40s}", "host: h5, at: 40}", 1) }, `quoted duration like "40s"`},
		{"passes_before without a reason", "tiny.md", func(s string) string {
			return strings.Replace(s, `passes_before: "looking step: the overflow is there from the start"`, `passes_before: " "`, 1)
		}, "steps[0] (look): passes_before needs a reason"},
		{"the old fails_at_start", "tiny.md", func(s string) string {
			return strings.Replace(s, "    check: {kind: ejected, host: h5, at: 40s}\n", "    check: {kind: ejected, host: h5, at: 40s}\n    fails_at_start: true\n", 1)
		}, `steps[1] (raise): fails_at_start is gone: delete it`},
		{"setting check on an unknown setting", "tiny.md", func(s string) string {
			return strings.Replace(s, "{kind: ejected, host: h5, at: 40s}", "{kind: setting, name: cap, min: 34}", 1)
		}, `steps[1] (raise).check (setting): unknown setting "cap"`},
		{"duplicate step id", "tiny.md", func(s string) string { return strings.Replace(s, "id: raise", "id: look", 1) }, `steps[1]: id "look" is used twice`},
		{"predict before an unknown step", "tiny.md", func(s string) string { return strings.Replace(s, "before_step: raise", "before_step: rise", 1) }, `predict: before_step "rise" is not a step id`},
		{"predict answer out of range", "tiny.md", func(s string) string { return strings.Replace(s, "  answer: 0\n  reveal", "  answer: 2\n  reveal", 1) }, "predict: answer 2 is not a choice index (0–1)"},
		{"one quiz question", "tiny.md", func(s string) string {
			return strings.Replace(s, "  - {question: \"Two?\", choices: [\"a\", \"b\"], answer: 1, explain: \"Because.\"}\n", "", 1)
		}, "quiz has 1 questions; want 2 or 3"},
		{"quiz without explanation", "tiny.md", func(s string) string { return strings.Replace(s, "answer: 1, explain: \"Because.\"", "answer: 1", 1) }, "quiz[1]: missing explain"},
		{"unknown placeholder", "tiny.md", func(s string) string { return strings.Replace(s, "{{threshold@40s}}", "{{treshold@40s}}", 1) }, `body: placeholder {{treshold@40s}}: unknown name "treshold"`},
		{"placeholder with a bad time", "tiny.md", func(s string) string { return strings.Replace(s, "{{threshold@40s}}", "{{threshold@soon}}", 1) }, "threshold needs a tick time like @40s"},
		{"placeholder in a step", "tiny.md", func(s string) string {
			return strings.Replace(s, "Raise the cap to 34.", "Raise the cap from {{cap}}.", 1)
		}, `steps[1] (raise).text: placeholder {{cap}}`},
		{"an after-prediction block never closed", "tiny.md", func(s string) string { return s + "\n::: after-prediction\nThe answer.\n" }, `line 38: "::: after-prediction" is never closed (a line ":::" ends it)`},
		{"a stray block close", "tiny.md", func(s string) string { return s + "\n:::\n" }, `line 38: ":::" closes no block`},
		{"nested after-prediction blocks", "tiny.md", func(s string) string {
			return s + "\n::: after-prediction\nA.\n::: after-prediction\nB.\n:::\n:::\n"
		}, `line 40: "::: after-prediction" inside the block opened at line 38`},
		{"an unknown block", "tiny.md", func(s string) string { return s + "\n::: spoiler\nA.\n:::\n" }, `line 38: unknown block "::: spoiler"`},
		{"an empty after-prediction block", "tiny.md", func(s string) string { return s + "\n::: after-prediction\n\n:::\n" }, `line 38: the "::: after-prediction" block is empty`},
		{"empty body", "tiny.md", func(s string) string { return s[:strings.LastIndex(s, "---\n")+4] }, "no body after its front matter"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(fstest.MapFS{tc.file: {Data: []byte(tc.edit(minimal))}})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			var le *LessonError
			if !errors.As(err, &le) || le.File != tc.file {
				t.Errorf("error %v does not name the file %s", err, tc.file)
			}
			if !strings.HasPrefix(err.Error(), tc.file+": ") || !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("got  %q\nwant %q prefixed by the file name", err, tc.wantIn)
			}
		})
	}
}

// Two files with the same order: the error names both; every malformed
// file is reported, not only the first.
func TestLoadAcrossFiles(t *testing.T) {
	second := strings.Replace(minimal, "id: tiny", "id: second", 1)
	_, err := Load(fstest.MapFS{"tiny.md": {Data: []byte(minimal)}, "second.md": {Data: []byte(second)}})
	if err == nil || !strings.Contains(err.Error(), "tiny.md: order 1 is already used by second.md") {
		t.Errorf("order collision: %v", err)
	}
	bad1 := strings.Replace(minimal, "title: Tiny\n", "", 1)
	bad2 := strings.Replace(second, "minutes: 2\n", "", 1)
	_, err = Load(fstest.MapFS{"tiny.md": {Data: []byte(bad1)}, "second.md": {Data: []byte(bad2)}})
	if err == nil || !strings.Contains(err.Error(), "tiny.md: missing title") || !strings.Contains(err.Error(), "second.md: missing minutes") {
		t.Errorf("two bad files: %v", err)
	}
	if _, err := Load(fstest.MapFS{"README.txt": {Data: []byte("x")}}); err == nil {
		t.Error("an FS without lessons loaded")
	}
}

// engine/course is engine code: it must not reach the web stack or
// markdown rendering (the web layer renders lessons).
func TestImportBoundary(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", "outlierlab/engine/course").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{"net/http", "github.com/a-h/templ", "github.com/go-chi/", "github.com/starfederation/", "github.com/yuin/goldmark", "github.com/go-echarts/", "outlierlab/web"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f) {
				t.Errorf("engine/course depends on %s", dep)
			}
		}
	}
}

// threeSteps is minimal with a third step, cap-17, whose check is only an
// outcome: the cap of 34 that the step before it leads to gives the same
// ejection, so the check ticks before the learner sets 17. The checker
// must say so; a setting check in it makes it hold.
const threeSteps = `  - id: cap-17
    text: "Now the smallest cap that lets h5 go: 17."
    charts: [chart-lanes]
    settings:
      max_ejection_percent: "17"
    check: {kind: ejected, host: h5, at: 40s}
predict:`

func TestReportBeforeStates(t *testing.T) {
	src := strings.Replace(minimal, "predict:", threeSteps, 1)
	ls, err := Load(fstest.MapFS{"tiny.md": {Data: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	before, err := Before(ls[0], "cap-17")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range before {
		names = append(names, st.Name)
	}
	// look leads to the start's own settings: the same run, listed once.
	if got := strings.Join(names, ", "); got != "start, after raise" {
		t.Errorf("states before cap-17: %s", got)
	}
	lines := Report(ls, []uint64{1, 2})
	var got []string
	for _, l := range lines {
		got = append(got, l.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"ok   tiny/look seed 1 intended(as start): pass, claimed pass: h5 overflow at 40 s: 1",
		"ok   tiny/look seed 1 before: not checked, passes_before: looking step: the overflow is there from the start",
		"ok   tiny/raise seed 2 intended(max_ejection_percent=34): pass, claimed pass: h5 ejected at 40 s: yes",
		"ok   tiny/raise seed 2 start: fail, claimed fail: h5 ejected at 40 s: no",
		"ok   tiny/cap-17 seed 1 start: fail, claimed fail",
		"FAIL tiny/cap-17 seed 1 after raise(max_ejection_percent=34): pass, claimed fail: h5 ejected at 40 s: yes",
		"FAIL tiny/cap-17 seed 2 after raise(max_ejection_percent=34): pass, claimed fail",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("report lacks %q:\n%s", want, all)
		}
	}
	// Seed order within a lesson: seed 1's lines, then seed 2's.
	if i, j := strings.Index(all, "tiny/cap-17 seed 1"), strings.Index(all, "tiny/look seed 2"); i < 0 || j < i {
		t.Errorf("lines out of order:\n%s", all)
	}

	// The step asks for the learner's own action: the cap at 17.
	fixed := strings.Replace(src, "    check: {kind: ejected, host: h5, at: 40s}\npredict:",
		"    check: {all: [{kind: ejected, host: h5, at: 40s}, {kind: setting, name: max_ejection_percent, min: 17, max: 17}]}\npredict:", 1)
	ls, err = Load(fstest.MapFS{"tiny.md": {Data: []byte(fixed)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range Report(ls, []uint64{1, 2}) {
		if !line.OK() {
			t.Errorf("%s", line)
		}
	}
}

// The body's after-prediction blocks: cut out in order, their markers
// dropped; markers in fenced code are text.
func TestBodyParts(t *testing.T) {
	body := "Before.\n\n::: after-prediction\nThe answer: {{threshold@40s}}.\n:::\n\nMiddle.\n\n```\n:::\n```\n\n  ::: after-prediction\nMore.\n  :::\n"
	ls, err := Load(fstest.MapFS{"tiny.md": {Data: []byte(strings.SplitAfter(minimal, "\n---\n")[0] + body)}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ls[0].BodyParts() {
		got = append(got, fmt.Sprintf("%v:%q", p.AfterPrediction, strings.TrimSpace(p.Markdown)))
	}
	want := []string{`false:"Before."`, `true:"The answer: {{threshold@40s}}."`, "false:\"Middle.\\n\\n```\\n:::\\n```\"", `true:"More."`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("parts\n got %v\nwant %v", got, want)
	}
	if parts := (&Lesson{Markdown: "Plain."}).BodyParts(); len(parts) != 1 || parts[0].AfterPrediction {
		t.Errorf("a body without blocks: %+v", parts)
	}
}
