package handout

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"outlierlab/engine/plan"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// testPlan's scenes stop at a cursor, ask a question after their cursor,
// and play to the end: the three ways a scene's moment is set.
const testPlan = `---
title: Test handout
summary: One line.
minutes: 10
scenes:
  - id: paused
    title: "Paused at 30 s"
    minutes: 2
    preset: search-cache
    cursor: 30s
  - id: asked
    title: "Asked about 40 s"
    minutes: 2
    preset: search-cache
    settings: {max_ejection_percent: "34"}
    inject: [h2@60s]
    cursor: 30s
    question: {kind: ejected, host: h5, at: 40s, answer: "yes"}
  - id: played
    title: "Played to the end"
    minutes: 2
    preset: search-cache
    play: {from: 30s, to: end}
---
`

// testScenes are the plan and its scenes' runs, built as the lab builds
// them from the scenes' settings.
func testScenes(t *testing.T) (*plan.Plan, []Scene) {
	t.Helper()
	p, err := plan.Parse("test.md", []byte(testPlan), nil)
	if err != nil {
		t.Fatal(err)
	}
	ins := []tabstate.Inputs{
		{Preset: "search-cache"},
		{Preset: "search-cache", Values: map[string]float64{"max_ejection_percent": 34}, Inject: "h2@60s"},
		{Preset: "search-cache"},
	}
	var out []Scene
	for i, in := range ins {
		run, err := tabstate.BuildRun(in)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Scene{Scene: &p.Scenes[i], Run: run})
	}
	return &p, out
}

func TestBuildMomentsChartsAndYAML(t *testing.T) {
	p, scenes := testScenes(t)
	h, err := Build(p, scenes, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	// search-cache sweeps every 10 s: the cursor 30 s shows the frame at
	// 30 s; a question about 40 s the frame at 40 s (its reveal); a play
	// range to the end the last frame.
	last := scenes[2].Run.Frames[len(scenes[2].Run.Frames)-1].TMs
	for i, want := range []string{"30 s", "40 s", tabstate.FormatMs(last)} {
		if got := h.Scenes[i].Moment; got != want {
			t.Errorf("scene %d: charts up to %s, want %s", i+1, got, want)
		}
	}
	var opts map[string]json.RawMessage
	if err := json.Unmarshal([]byte(h.Charts.Options), &opts); err != nil {
		t.Fatal(err)
	}
	var heights map[string]int
	if err := json.Unmarshal([]byte(h.Charts.Heights), &heights); err != nil {
		t.Fatal(err)
	}
	for i, s := range h.Scenes {
		if len(s.Charts) != 3 {
			t.Fatalf("scene %d: %d charts, want 3", i+1, len(s.Charts))
		}
		for _, c := range s.Charts {
			if !strings.HasPrefix(c.ID, "s"+string(rune('1'+i))+"-") || opts[c.ID] == nil || c.Alt == "" {
				t.Errorf("scene %d: box %q has option %t, alt %q", i+1, c.ID, opts[c.ID] != nil, c.Alt)
			}
		}
		if heights["s"+string(rune('1'+i))+"-chart-lanes"] == 0 {
			t.Errorf("scene %d: the lanes' box has no height (%v)", i+1, heights)
		}
		if !strings.Contains(s.YAML, "name: "+s.ID+"\n") || !strings.Contains(s.YAML, "outlier_detection:\n") {
			t.Errorf("scene %d: YAML\n%s", i+1, s.YAML)
		}
	}
	if len(opts) != 9 || len(h.Charts.Boxes) != 9 {
		t.Errorf("%d options and %d boxes, want 9 (3 scenes × 3 charts)", len(opts), len(h.Charts.Boxes))
	}
	// The charts stop at the moment, and so do the sentences that say
	// what they show.
	for i, want := range []string{"At 30 s", "At 40 s"} {
		if alt := h.Scenes[i].Charts[0].Alt; !strings.HasPrefix(alt, want) {
			t.Errorf("scene %d: the success rate's sentence %q does not start %q", i+1, alt, want)
		}
	}
	if !strings.Contains(h.Scenes[1].YAML, "max_ejection_percent: 34") || strings.Contains(h.Scenes[0].YAML, "max_ejection_percent: 34") {
		t.Errorf("the scenes' own settings are not in their YAML")
	}
	if got := h.Scenes[1].Changes; !slices.Equal(got, []string{"max_ejection_percent = 34", "faults injected: h2@60s"}) {
		t.Errorf("changes %q", got)
	}
	if h.Scenes[0].Where != "preset search-cache" || h.Scenes[1].Seed != 1 {
		t.Errorf("where %q seed %d", h.Scenes[0].Where, h.Scenes[1].Seed)
	}
}

func TestBuildQuestion(t *testing.T) {
	p, scenes := testScenes(t)
	h, err := Build(p, scenes, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	q := h.Scenes[1].Question
	// With the cap at 34 h5 goes at 40 s (engine/scenario/presets.go).
	if q == nil || q.Text != "Is h5 ejected at 40 s?" || q.Engine != "yes" || q.Differs || q.Detail != "the frame at 40 s" || q.Room != nil {
		t.Fatalf("question %+v", q)
	}
	if h.Scenes[0].Question != nil {
		t.Errorf("a scene without a question has one: %+v", h.Scenes[0].Question)
	}
	// A plan whose answer is not the engine's says so.
	p.Scenes[1].Question.Answer = "no"
	h, _ = Build(p, scenes, "", nil)
	if q := h.Scenes[1].Question; !q.Differs || q.Expected != "no" || q.Engine != "yes" {
		t.Errorf("a wrong expected answer: %+v", q)
	}
	if _, err := Build(p, scenes[:2], "", nil); err == nil {
		t.Error("two runs for three scenes built a handout")
	}
}

func TestBuildRoomAnswers(t *testing.T) {
	p, scenes := testScenes(t)
	bars := func(yes, no int) []view.RoomAnswerBar {
		return []view.RoomAnswerBar{{Answer: "yes", N: yes, Right: true}, {Answer: "no", N: no}}
	}
	reveals := []Reveal{
		{Scene: 0, Text: "Is h5 ejected at 40 s?", Host: "h5", AtMs: 40000, Bars: bars(9, 9), Total: 18},                 // another scene's
		{Scene: 1, Text: "How many hosts are ejected at 50 s?", AtMs: 50000, Bars: bars(5, 5), Total: 10},                // made up in class
		{Scene: 1, Text: "Is h5 ejected at 40 s?", Host: "h5", AtMs: 40000, Bars: bars(3, 1), Total: 4},                  // the scene's
		{Scene: 1, Text: "Is h5 ejected at 40.0 s?", Host: "h5", AtMs: 40000, Answer: "yes", Bars: bars(2, 0), Total: 2}, // asked again, its words another way
	}
	h, err := Build(p, scenes, "K7QX2M", reveals)
	if err != nil {
		t.Fatal(err)
	}
	if h.Room != "K7QX2M" || h.PlanPath != "/plans/test/handout" {
		t.Errorf("room %q plan path %q", h.Room, h.PlanPath)
	}
	q := h.Scenes[1].Question
	if q.Room == nil || q.Room.Total != 2 || q.Room.Hist[0].N != 2 || q.Room.Answer != "" {
		t.Fatalf("the room's answers: %+v", q.Room)
	}
	// A room whose run answered otherwise at the reveal says so.
	reveals[3].Answer = "no"
	if h, _ := Build(p, scenes, "K7QX2M", reveals); h.Scenes[1].Question.Room.Answer != "no" {
		t.Errorf("the room's other answer: %+v", h.Scenes[1].Question.Room)
	}
	// Without its reveal in this scene, no histogram.
	h, _ = Build(p, scenes, "K7QX2M", reveals[:2])
	if q := h.Scenes[1].Question; q.Room != nil {
		t.Errorf("another question's histogram shown: %+v", q.Room)
	}
	// The plan's own handout shows no room's answers.
	h, _ = Build(p, scenes, "", reveals)
	if q := h.Scenes[1].Question; q.Room != nil || h.PlanPath != "" {
		t.Errorf("a plan's handout with a room's answers: %+v", q.Room)
	}
}

func TestHeavy(t *testing.T) {
	p, _ := testScenes(t)
	if Heavy(p) {
		t.Error("search-cache is weighed heavy")
	}
	heavy := strings.Replace(testPlan, "    cursor: 30s\n  - id: asked", "    settings: {hosts: \"50\", rps: \"3000\", interval: 1s, duration: 600s}\n    cursor: 30s\n  - id: asked", 1)
	hp, err := plan.Parse("heavy.md", []byte(heavy), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !Heavy(&hp) {
		t.Error("50 hosts at 3000 rps for 600 s at a 1 s interval is not weighed heavy")
	}
}

// A room's reveal belongs to a scene's question when the room asked it
// with the scene's button, or asked the same by hand on that scene.
func TestRevealOf(t *testing.T) {
	choice := &plan.Question{Kind: plan.KindChoice, Text: "What does the cap do?"}
	ejected := &plan.Question{Kind: plan.KindEjected, Host: "h5", At: 40_000}
	for _, tt := range []struct {
		name string
		q    *plan.Question
		r    Reveal
		want bool
	}{
		{"asked with the button", choice, Reveal{Scene: 2, Asked: true, Text: "reworded"}, true},
		{"a choice asked by hand in its words", choice, Reveal{Scene: 2, Text: "What does the cap do?"}, true},
		{"a choice of other words", choice, Reveal{Scene: 2, Text: "What does the cap not do?"}, false},
		{"on another scene", choice, Reveal{Scene: 1, Asked: true}, false},
		{"the same host and moment", ejected, Reveal{Scene: 2, Host: "h5", AtMs: 40_000}, true},
		{"another moment", ejected, Reveal{Scene: 2, Host: "h5", AtMs: 50_000}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := revealOf(2, tt.q, []Reveal{tt.r}) != nil; got != tt.want {
				t.Errorf("matched %v, want %v", got, tt.want)
			}
		})
	}
}
