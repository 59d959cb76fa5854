package question

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"outlierlab/engine/course"
	"outlierlab/plans"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"outlierlab/web/room/scenes"
)

// newMaker is a Maker on a lab of the course and the shipped plans.
func newMaker(t *testing.T) Maker {
	t.Helper()
	l := roomtest.Lab(t, lab.LabOptions{})
	b, err := scenes.Load(plans.FS, l)
	if err != nil {
		t.Fatal(err)
	}
	return NewMaker(l, b)
}

// A question about a run (h5 fails, and is ejected at 40 s): its words, choices and hold, and the engine's answer read off
// the frame at its moment; a lesson's prediction and its answer; and
// every bad request names its field and what it allows.
func TestMakeAndAnswer(t *testing.T) {
	m := newMaker(t)
	// search-cache's cap ejects nothing of six hosts (10 %); at 34 % it
	// ejects h5, at 40 s.
	preset := record.State{Preset: "search-cache", Speed: "1", Cfg: map[string]float64{"max_ejection_percent": 34}}
	lesson := record.State{Lesson: "cap", Speed: "1"}
	for _, c := range []struct {
		name    string
		st      record.State
		req     string
		text    string
		choices string
		answer  string
		err     string
	}{
		{"h5 before its ejection", preset, `{"qkind":"ejected","qhost":"h5","qat":30}`, "Is h5 ejected at 30 s?", "yes|no", "no", ""},
		{"h5 after it", preset, `{"qkind":"ejected","qhost":"h5","qat":"50"}`, "Is h5 ejected at 50 s?", "yes|no", "yes", ""},
		{"a healthy host", preset, `{"qkind":"ejected","qhost":"h1","qat":50}`, "Is h1 ejected at 50 s?", "yes|no", "no", ""},
		{"how many out", preset, `{"qkind":"out","qat":50.5}`, "How many hosts are ejected at 50.5 s?", "", "1", ""},
		{"none out yet", preset, `{"qkind":"out","qat":10}`, "How many hosts are ejected at 10 s?", "", "0", ""},
		{"the lesson's prediction", lesson, `{"qkind":"lesson"}`, "", "", "", ""},
		{"no lesson to predict", preset, `{"qkind":"lesson"}`, "", "", "", "qkind: the room shows no lesson with a prediction (allowed ejected, out)"},
		{"a made-up kind", preset, `{"qkind":"why"}`, "", "", "", `qkind: "why" is not a kind of question (allowed ejected, out, lesson)`},
		{"a made-up host", preset, `{"qkind":"ejected","qhost":"h99","qat":50}`, "", "", "", `qhost: "h99" is not a host of this run (allowed h0`},
		{"no moment", preset, `{"qkind":"out"}`, "", "", "", "qat:"},
		{"a moment before the run", preset, `{"qkind":"out","qat":0}`, "", "", "", "qat:"},
		{"a moment past the bound", preset, `{"qkind":"out","qat":3601}`, "", "", "", "qat:"},
		{"a moment that is not a number", preset, `{"qkind":"out","qat":"soon"}`, "", "", "", "qat:"},
		{"a choice needs its scene", preset, `{"qkind":"choice"}`, "", "", "", "qkind: choice is asked from a plan's scene (?scene=N)"},
		{"a scene of no plan", preset, `{"qkind":"out","qat":10,"scene":0}`, "", "", "", "scene: this room was not started from a plan"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var req Request
			if err := json.Unmarshal([]byte(c.req), &req); err != nil {
				t.Fatal(err)
			}
			q, err := m.Make("ROOM01", &c.st, req)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Make: %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.text != "" && (q.Text != c.text || strings.Join(q.Choices, "|") != c.choices) {
				t.Errorf("the question: %q %q, want %q %q", q.Text, q.Choices, c.text, c.choices)
			}
			in, _, err := c.st.Inputs(m.lab.Lessons)
			if err != nil {
				t.Fatal(err)
			}
			run, err := m.lab.Runs.Get(in)
			if err != nil {
				t.Fatal(err)
			}
			// The room holds before the question's moment: every frame
			// before it is shown, none at or after it.
			if h := q.Hold; h >= len(run.Frames) || run.Frames[h].TMs < q.AtMs || h > 0 && run.Frames[h-1].TMs >= q.AtMs {
				t.Errorf("the room holds before frame %d for a question at %d ms", h, q.AtMs)
			}
			got, err := m.Answer(&c.st, q)
			if err != nil {
				t.Fatal(err)
			}
			if c.answer == "" {
				// The lesson's own answer, one of its choices.
				if len(q.Choices) == 0 || !strings.Contains("|"+strings.Join(q.Choices, "|")+"|", "|"+got+"|") {
					t.Errorf("the prediction's answer %q is not one of %q", got, q.Choices)
				}
				return
			}
			if got != c.answer {
				t.Errorf("the engine's answer: %q, want %q", got, c.answer)
			}
		})
	}
}

// A room's lesson prediction comes in the room's order, the one its
// lesson pages show (course.ChoiceOrder by the room's code): the same
// code gives one order, every choice once; across rooms the right
// answer's place moves, so "it is always B" tells a room nothing.
func TestRoomQuestionsInTheRoomsOrder(t *testing.T) {
	m := newMaker(t)
	d := m.lab.Lessons.ByID["cap"]
	want := d.Predict.Choices[d.Predict.Answer]
	places := map[int]int{}
	for i := range 40 {
		code := fmt.Sprintf("ROOM%02d", i)
		st := record.State{Lesson: "cap", Speed: "1"}
		q, err := m.Make(code, &st, Request{Kind: "lesson"})
		if err != nil {
			t.Fatal(err)
		}
		order := course.ChoiceOrder(code, course.ChoiceKey("cap", -1), len(d.Predict.Choices))
		for j, k := range order {
			if q.Choices[j] != d.Predict.Choices[k] {
				t.Fatalf("room %s: choices %q, want the room's order %v of %q", code, q.Choices, order, d.Predict.Choices)
			}
		}
		again, _ := m.Make(code, &st, Request{Kind: "lesson"})
		if strings.Join(again.Choices, "|") != strings.Join(q.Choices, "|") {
			t.Errorf("room %s asked twice: %q then %q", code, q.Choices, again.Choices)
		}
		got, err := m.Answer(&st, q)
		if err != nil || got != want {
			t.Errorf("room %s: the answer %q (%v), want %q whatever the order", code, got, err, want)
		}
		places[slices.Index(q.Choices, want)]++
	}
	if len(places) < 2 {
		t.Errorf("over 40 rooms the right answer sat in one place: %v", places)
	}
}
