package plan_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"outlierlab/engine/course"
	"outlierlab/engine/plan"
	"outlierlab/engine/scenario"
	"outlierlab/lessons"
	"outlierlab/plans"
)

var loadLessons = sync.OnceValues(func() ([]course.Lesson, error) { return course.Load(lessons.FS) })

func theLessons(t *testing.T) []course.Lesson {
	t.Helper()
	ls, err := loadLessons()
	if err != nil {
		t.Fatalf("loading the lessons: %v", err)
	}
	return ls
}

// head is a valid plan's top; tests add scenes under it.
const head = "---\ntitle: T\nsummary: S\nminutes: 10\nscenes:\n"

// okScene is a valid scene: the cap lesson's cap-34 step, asked about
// h5 at 40 s (line 6 of the file is its "- id").
const okScene = `  - id: raise
    title: Raise the cap
    minutes: 3
    lesson: cap
    step: cap-34
    cursor: 30s
    question: {kind: ejected, host: h5, at: 40s, answer: "yes"}
`

// parse reads text as plans/demo.md; a plan built on head is closed with
// its "---" line when it has none.
func parse(t *testing.T, text string) (plan.Plan, error) {
	t.Helper()
	if strings.HasPrefix(text, head) && !strings.Contains(text, "\n---\n") {
		text += "---\n"
	}
	return plan.Parse("plans/demo.md", []byte(text), theLessons(t))
}

// Every bad field of a file is named, each with its line and its path:
// the whole list, in file order, exactly.
func TestParseNamesEveryBadField(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []string
	}{
		{"no front matter", "# Demo\n",
			[]string{`plans/demo.md:1: does not start with a front matter block (a line "---")`}},
		{"yaml syntax", "---\ntitle: [a\n---\n",
			[]string{`plans/demo.md:2: front matter: did not find expected ',' or ']'`}},
		{"top level", "---\ntitle: T\nminutes: 0\nlength: 4\n---\n",
			[]string{
				`plans/demo.md:4: length: unknown field (allowed title, summary, minutes, scenes)`,
				`plans/demo.md:2: summary: missing (one line for the list of plans)`,
				`plans/demo.md:3: minutes: "0" is not a whole number from 1 to 600`,
				`plans/demo.md:2: scenes: missing (a list of scenes, at least one)`,
			}},
		{"scene fields", head + `  - id: Bad_ID
    minutes: 3
    preset: search-cache
    cursor: 400s
    explore_minutes: 5
    colour: red
`, []string{
			`plans/demo.md:11: scenes[0].colour: unknown field (allowed id, title, minutes, preset, lesson, step, settings, inject, cursor, play, notes, question, spotlight, explore_minutes, challenge)`,
			`plans/demo.md:6: scenes[0].id: "Bad_ID" is not an id (lower-case letters, digits and -)`,
			`plans/demo.md:6: scenes[0] (Bad_ID).title: missing (what the projector and attendees see)`,
			`plans/demo.md:10: scenes[0] (Bad_ID).explore_minutes: 5 is longer than the scene's 3 minutes`,
			`plans/demo.md:9: scenes[0] (Bad_ID).cursor: 400 s is after the run's last frame (300 s)`,
		}},
		{"lesson and step", head + `  - {id: a, title: A, minutes: 1, lesson: caps}
  - {id: b, title: B, minutes: 1, lesson: cap, step: cap-35}
  - {id: c, title: C, minutes: 1, step: cap-34}
  - {id: d, title: D, minutes: 1, preset: search-cache, lesson: cap}
  - {id: e, title: E, minutes: 1}
`, []string{
			`plans/demo.md:6: scenes[0] (a).lesson: "caps" is not a lesson (allowed consecutive, success-rate, cap, ejection-time, failure-percentage, panic, app-errors, active-health, retries, slow-hosts, small-fleets, capstone, grpc, mesh)`,
			`plans/demo.md:7: scenes[1] (b).step: "cap-35" is not a step of lesson cap (allowed overflow, cap-34, cap-17, always-one, ten-hosts, safety)`,
			`plans/demo.md:8: scenes[2] (c).step: a step needs its lesson`,
			`plans/demo.md:9: scenes[3] (d).lesson: give preset or lesson, not both`,
			`plans/demo.md:10: scenes[4] (e).preset: missing: give preset (search-cache, dead-host, shared-dependency, two-bad-hosts, burst, app-errors, active-hc-undo, bad-deploy, slow-host, small-fleet, flapping, locality-failover, cap-empties-level) or lesson (and step)`,
		}},
		{"settings and inject", head + `  - id: a
    title: A
    minutes: 1
    preset: search-cache
    settings: {max_ejection_percent: "101"}
  - id: b
    title: B
    minutes: 1
    preset: search-cache
    inject: [h9@60s]
  - id: c
    title: C
    minutes: 1
    preset: search-cache
    settings: {colour: red}
`, []string{
			`plans/demo.md:10: scenes[0] (a).settings: max_ejection_percent: 101 is out of range (allowed 0–100)`,
			`plans/demo.md:15: scenes[1] (b).inject: inject: h9@60s: h9 is not a host of this cluster (allowed h0–h5)`,
			`plans/demo.md:20: scenes[2] (c).settings.colour: unknown setting (an outlier_detection field by its Envoy name, or a scenario knob)`,
		}},
		{"question", head + `  - id: a
    title: A
    minutes: 1
    preset: search-cache
    cursor: 50s
    question: {kind: ejected, host: h6, at: 40s, answer: "maybe", text: "Is it?"}
  - id: b
    title: B
    minutes: 1
    preset: search-cache
    question: {kind: out, at: 400s, answer: "7", host: h1}
  - id: c
    title: C
    minutes: 1
    preset: search-cache
    question: {kind: poll, at: 40s}
`, []string{
			`plans/demo.md:11: scenes[0] (a).question.at: 40 s is not after the scene's cursor (50 s): the room would show the answer before asking`,
			`plans/demo.md:11: scenes[0] (a).question.host: "h6" is not a host of this run (allowed h0–h5)`,
			`plans/demo.md:11: scenes[0] (a).question.answer: "maybe" is not an answer to "ejected" (allowed yes, no)`,
			`plans/demo.md:11: scenes[0] (a).question.text: an ejected question takes none: the room words it (Is h6 ejected at 40 s?)`,
			`plans/demo.md:16: scenes[1] (b).question.at: 400 s is after the run's last frame (300 s)`,
			`plans/demo.md:16: scenes[1] (b).question.answer: "7" is not a number of hosts (allowed 0–6)`,
			`plans/demo.md:16: scenes[1] (b).question.host: an out question takes no host`,
			`plans/demo.md:21: scenes[2] (c).question.kind: "poll" is not a kind of question (allowed ejected, out, choice)`,
		}},
		{"choice question", head + `  - id: a
    title: A
    minutes: 1
    preset: search-cache
    question:
      kind: choice
      at: 40s
      text: "Which?"
      choices:
        - {text: "One", check: {kind: ejected, at: 40s}}
        - {text: "One", check: {kind: sometimes, at: 40s}}
        - {text: "Two"}
      answer: "Three"
`, []string{
			`plans/demo.md:15: scenes[0] (a).question.choices[0].check (ejected): needs host (a host as the frames name it, like "h5")`,
			`plans/demo.md:16: scenes[0] (a).question.choices[1].text: "One" is already choices[0]'s`,
			`plans/demo.md:16: scenes[0] (a).question.choices[1].check: unknown kind "sometimes" (want one of ejected, not_ejected, ejected_hosts, event, stat, clients, success_rate, host, share, panic, no_panic, setting)`,
			`plans/demo.md:17: scenes[0] (a).question.choices[2].check: missing (the check that holds on the run when this choice is right; engine/course's kinds)`,
			`plans/demo.md:18: scenes[0] (a).question.answer: "Three" is not a choice (allowed "One", "One", "Two")`,
		}},
		{"notes, spotlight, play, duplicates", head + okScene + `  - id: raise
    title: Again
    minutes: 8
    preset: search-cache
    play: {from: 30s}
    spotlight: {host: h8, from: 10s, size: 3}
    notes: "{{threshold@40s = }} and {{colour}} and {{mean"
`, []string{
			`plans/demo.md:17: scenes[1] (raise).play.to: missing (where the play stops, like 90s or end)`,
			`plans/demo.md:19: scenes[1] (raise).notes: {{threshold@40s =}}: nothing stated after "=" (a value like 52.3, or a band like 0.5..1.5)`,
			`plans/demo.md:19: scenes[1] (raise).notes: {{colour}}: unknown name "colour" (known: ` + strings.Join(course.PlaceholderNames(), ", ") + `)`,
			`plans/demo.md:19: scenes[1] (raise).notes: unbalanced {{ }}`,
			`plans/demo.md:18: scenes[1] (raise).spotlight.size: unknown field (allowed host, from, to)`,
			`plans/demo.md:18: scenes[1] (raise).spotlight.host: "h8" is not a host of this run (allowed h0–h5)`,
			`plans/demo.md:13: scenes[1].id: "raise" is already scenes[0]'s`,
			`plans/demo.md:4: minutes: the scenes take 11 min, more than the workshop's 10`,
		}},
		{"a challenge that is no id", head + strings.Replace(okScene, "    cursor: 30s\n", "    cursor: 30s\n    challenge: Search Cap\n", 1),
			[]string{`plans/demo.md:12: scenes[0] (raise).challenge: "Search Cap" is not a challenge id (lower-case letters, digits and -: a file name of challenges/ without .md)`}},
		{"body placeholder", head + okScene + "---\nThe threshold is {{threshold}}.\n",
			[]string{`plans/demo.md: body: has a placeholder; a live number needs a scene's run: put it in that scene's notes`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.text)
			if err == nil {
				t.Fatal("parsed; want errors")
			}
			got := strings.Split(err.Error(), "\n")
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("errors:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(c.want, "\n     "))
			}
		})
	}
}

// A valid scene is read into what the room needs: the lesson step's run
// with the scene's settings and injections over it, the question in the
// room's words, the run's host count and end.
func TestParseScene(t *testing.T) {
	p, err := parse(t, head+okScene+`  - id: inject
    title: Inject
    minutes: 2
    preset: search-cache
    settings: {max_ejection_percent: "34"}
    inject: [h2@60s]
    play: {from: 30s, to: end}
    explore_minutes: 2
    spotlight: {host: h5, from: 30s, to: 60s}
    notes: "At 40 s: {{threshold@40s}}."
    question: {kind: out, at: 40s, answer: "01"}
---
Overview.
`)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "demo" || p.Title != "T" || p.Minutes != 10 || len(p.Scenes) != 2 || strings.TrimSpace(p.Markdown) != "Overview." {
		t.Fatalf("plan %+v", p)
	}
	s := p.Scenes[0]
	if s.State.Preset != "search-cache" || s.State.Settings["max_ejection_percent"] != "34" || s.Hosts != 6 || s.EndMs != 300000 {
		t.Errorf("scene 0: state %+v, hosts %d, end %d", s.State, s.Hosts, s.EndMs)
	}
	if q := s.Question; q == nil || q.Words() != "Is h5 ejected at 40 s?" || q.Answer != "yes" || strings.Join(q.ChoiceTexts(), ",") != "yes,no" {
		t.Errorf("question %+v", s.Question)
	}
	s = p.Scenes[1]
	want := map[string]string{"max_ejection_percent": "34", "inject": "h2@60s"}
	if len(s.State.Settings) != len(want) || s.State.Settings["inject"] != want["inject"] || s.State.Settings["max_ejection_percent"] != "34" {
		t.Errorf("scene 1 settings %v, want %v", s.State.Settings, want)
	}
	if q := s.Question; q == nil || q.Answer != "1" || q.Words() != "How many hosts are ejected at 40 s?" || q.ChoiceTexts() != nil {
		t.Errorf("scene 1 question %+v: want the answer 1 as the room writes it", s.Question)
	}
	if s.Play == nil || s.Play.From != 30000 || s.Play.To != course.End || s.ExploreMinutes != 2 {
		t.Errorf("scene 1 play %+v explore %d", s.Play, s.ExploreMinutes)
	}
	if sp := s.Spotlight; sp == nil || sp.Host != "h5" || sp.From != 30000 || sp.To != 60000 {
		t.Errorf("spotlight %+v", s.Spotlight)
	}
	run, err := s.State.Run(1)
	if err != nil {
		t.Fatal(err)
	}
	// EndMs is computed before any run: it must be the run's last frame.
	if last := run.Frames[len(run.Frames)-1].TMs; last != s.EndMs {
		t.Errorf("EndMs %d, the run's last frame %d", s.EndMs, last)
	}
	if got := s.NotesOn(&run); got != "At 40 s: 70.9." {
		t.Errorf("notes on seed 1: %q", got)
	}
	y, err := s.ClusterYAML()
	if err != nil || !strings.Contains(y, "name: inject\n") || !strings.Contains(y, "\n  max_ejection_percent: 34\n") {
		t.Errorf("cluster YAML (%v):\n%s", err, y)
	}
}

// The engine's answer is read off the first frame at or after the moment,
// as the room reveals it; the frames before it are what the room holds.
func TestAnswerAt(t *testing.T) {
	run, err := course.State{Preset: "search-cache", Settings: map[string]string{"max_ejection_percent": "34"}}.Run(1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		kind, host string
		atMs       int64
		want       string
		hold       int
	}{
		{plan.KindEjected, "h5", 40000, "yes", 3},
		{plan.KindEjected, "h5", 30001, "yes", 3}, // the 40 s frame is the first after 30.001 s
		{plan.KindEjected, "h5", 30000, "no", 2},
		{plan.KindEjected, "h5", 70000, "no", 6}, // back at 70 s, out again at 80 s
		{plan.KindEjected, "h4", 40000, "no", 3},
		{plan.KindOut, "", 40000, "1", 3},
		{plan.KindOut, "", 20000, "0", 1},
	}
	for _, c := range cases {
		got, err := plan.AnswerAt(&run, c.kind, c.host, c.atMs)
		if err != nil || got != c.want {
			t.Errorf("%s %s at %d ms: %q, %v; want %q", c.kind, c.host, c.atMs, got, err, c.want)
		}
		if h := plan.Hold(&run, c.atMs); h != c.hold {
			t.Errorf("hold at %d ms: %d, want %d", c.atMs, h, c.hold)
		}
	}
	if _, err := plan.AnswerAt(&run, plan.KindOut, "", 301000); err == nil || err.Error() != "the run ends at 300 s, before 301 s" {
		t.Errorf("past the end: %v", err)
	}
	if _, err := plan.AnswerAt(&run, plan.KindEjected, "h9", 40000); err == nil || err.Error() != "no host h9 in this run (6 hosts)" {
		t.Errorf("no such host: %v", err)
	}
}

// A choice question has an answer only where exactly one choice's check
// holds.
func TestChoiceAnswer(t *testing.T) {
	run, err := course.State{Preset: "search-cache"}.Run(1)
	if err != nil {
		t.Fatal(err)
	}
	ejected := course.Check{Kind: course.KindEjected, Host: "h5", At: 40000}
	notEjected := course.Check{Kind: course.KindNotEjected, Host: "h5", At: 40000}
	cases := []struct {
		name    string
		choices []plan.Choice
		want    string
		err     string
	}{
		{"one holds", []plan.Choice{{"out", ejected}, {"in", notEjected}}, "in", ""},
		{"none holds", []plan.Choice{{"out", ejected}, {"also out", ejected}}, "",
			`no choice's check holds ("out": h5 ejected at 40 s: no; "also out": h5 ejected at 40 s: no)`},
		{"two hold", []plan.Choice{{"in", notEjected}, {"still in", notEjected}}, "",
			`the checks of "in" and "still in" all hold: a question needs one right choice ("in": h5 ejected at 40 s: no; "still in": h5 ejected at 40 s: no)`},
	}
	for _, c := range cases {
		q := plan.Question{Kind: plan.KindChoice, At: 40000, Text: "?", Choices: c.choices}
		got, _, err := q.EngineAnswer(&run)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Errorf("%s: %q, %v; want %q, %s", c.name, got, err, c.want, c.err)
		}
	}
}

// A stated number holds when the run shows it: exactly, or within its
// band.
func TestStatedNumbers(t *testing.T) {
	run, err := course.State{Preset: "search-cache"}.Run(1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		raw  string
		ok   bool
		got  string
		fail string // an error, when the number cannot be resolved
	}{
		{"threshold@40s = 70.9", true, "70.9", ""},
		{"threshold@40s = 70.90", true, "70.9", ""},
		{"threshold@40s = 71", false, "70.9", ""},
		{"failure_pct@30s-end = 5..6.1", true, "5.56", ""},
		{"failure_pct@30s-end = 5–5.5", false, "5.56", ""},
		{"ejected_count@40s = 0", true, "0", ""},
		{"threshold@40s", true, "70.9", ""},
		{"success_rate:h9@40s", false, "", "no host h9"},
	}
	for _, c := range cases {
		n, err := plan.ParseNumber(c.raw)
		if err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		ok, got, err := n.Holds(&run)
		if ok != c.ok || got != c.got || (err == nil) != (c.fail == "") || err != nil && err.Error() != c.fail {
			t.Errorf("{{%s}}: %v %q %v; want %v %q %s", c.raw, ok, got, err, c.ok, c.got, c.fail)
		}
	}
	for raw, want := range map[string]string{
		"threshold@40s = 2..1": `"2..1" is not a band like 0.5..1.5 (two numbers, the lower first)`,
		"threshold@40s = a..b": `"a..b" is not a band like 0.5..1.5 (two numbers, the lower first)`,
	} {
		if _, err := plan.ParseNumber(raw); err == nil || err.Error() != want {
			t.Errorf("{{%s}}: %v; want %s", raw, err, want)
		}
	}
}

// The shipped plans: a 60-minute workshop and a 15-minute demo, every
// question's expected answer the engine's and every number of the notes
// what the run shows, on seeds 1–50 (`outlierlab plan -check`). Scenes
// that show one run share it, so this costs some 5 s of CPU; -short
// checks seeds 1–5.
func TestShippedPlans(t *testing.T) {
	ps, err := plan.Load(plans.FS, theLessons(t))
	if err != nil {
		t.Fatal(err)
	}
	minutes := map[string]int{}
	for _, p := range ps {
		minutes[p.ID] = p.Minutes
	}
	if len(ps) != 2 || minutes["production"] != 60 || minutes["lightning"] != 15 {
		t.Fatalf("plans and their minutes: %v; want production 60, lightning 15", minutes)
	}
	n := 50
	if testing.Short() {
		n = 5
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	lines := plan.Report(ps, seeds)
	asked := 0
	for _, l := range lines {
		if !l.OK {
			t.Error(l)
		}
		if strings.HasPrefix(l.What, "question") {
			asked++
		}
	}
	// Each plan asks something in most scenes: 4 in the demo, 10 in the
	// workshop (the mesh scene's included), each on every seed.
	if asked != 14*n {
		t.Errorf("%d question verdicts, want %d", asked, 14*n)
	}
}

// A scene's question is answered on its own run: a wrong expectation
// fails on every seed where the engine differs, naming the seed and the
// engine's answer.
func TestReportNamesSeedAndAnswer(t *testing.T) {
	p, err := parse(t, head+strings.Replace(okScene, `answer: "yes"`, `answer: "no"`, 1))
	if err != nil {
		t.Fatal(err)
	}
	lines := plan.Report([]plan.Plan{p}, []uint64{3})
	want := `FAIL demo/raise seed 3 question "Is h5 ejected at 40 s?": the engine answers "yes", the plan expects "no" (the frame at 40 s)`
	if len(lines) != 1 || lines[0].String() != want {
		t.Errorf("lines %v\nwant %s", lines, want)
	}
}

// LoadDir reads an instructor's directory of plans (serve -plans DIR):
// every bad file reported, and a path that is no directory named.
func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good.md", head+okScene+"---\n")
	write("notes.txt", "not a plan")
	ps, err := plan.LoadDir(dir, theLessons(t))
	if err != nil || len(ps) != 1 || ps[0].ID != "good" || ps[0].File != "good.md" {
		t.Fatalf("plans %+v, %v", ps, err)
	}
	write("bad.md", head+"  - {id: a}\n---\n")
	write("worse.md", "no front matter\n")
	_, err = plan.LoadDir(dir, theLessons(t))
	want := []string{
		"bad.md:6: scenes[0] (a).title: missing (what the projector and attendees see)",
		"bad.md:6: scenes[0] (a).minutes: missing (the time the scene takes, 1–120)",
		"bad.md:6: scenes[0] (a).preset: missing: give preset (" + strings.Join(presetNames(), ", ") + ") or lesson (and step)",
		`worse.md:1: does not start with a front matter block (a line "---")`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("errors:\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
	if _, err := plan.LoadDir(filepath.Join(dir, "good.md"), nil); err == nil || !strings.HasSuffix(err.Error(), "good.md: not a directory that can be read") {
		t.Errorf("a file as the directory: %v", err)
	}
}

func presetNames() []string {
	var out []string
	for _, p := range scenario.Presets() {
		out = append(out, p.Name)
	}
	return out
}

// A number written as plain text is found; one in a placeholder or in
// code, or a digit inside a name, is not.
func TestLiterals(t *testing.T) {
	got := plan.Literals("h5 fails 5xx, p99 and consecutive5xxErrors aside; ×2 and (0 + 1) / 6 = 16.7%, from 30 s, 1000 requests, 250ms, k 1.9.\n" +
		"`100 × (0 + 1) / 6` {{failure_pct@30s-end = 0.6..1}} {{tick@40s}}")
	want := []string{"2", "0", "1", "6", "16.7%", "30 s", "1000", "250ms", "1.9"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Literals = %q, want %q", got, want)
	}
	if got := plan.Literals("Only {{hosts = 6}} hosts, `0` to turn it off, h3 and h5."); len(got) != 0 {
		t.Errorf("Literals = %q, want none", got)
	}
}

// A challenge scene keeps its challenge's id, and CheckChallenges names
// the line of each one that is no challenge there is, and what is.
func TestCheckChallenges(t *testing.T) {
	p, err := parse(t, head+strings.Replace(okScene, "    cursor: 30s\n", "    cursor: 30s\n    challenge: search-cap\n", 1))
	if err != nil {
		t.Fatal(err)
	}
	if p.Scenes[0].Challenge != "search-cap" {
		t.Fatalf("challenge %q, want search-cap", p.Scenes[0].Challenge)
	}
	ps := []plan.Plan{p}
	if err := plan.CheckChallenges(ps, []string{"burst", "search-cap"}); err != nil {
		t.Errorf("a known challenge: %v", err)
	}
	want := `plans/demo.md:12: scenes[0] (raise).challenge: "search-cap" is not a challenge (allowed burst, bad-deploy)`
	if err := plan.CheckChallenges(ps, []string{"burst", "bad-deploy"}); err == nil || err.Error() != want {
		t.Errorf("an unknown challenge: %v; want %s", err, want)
	}
}
