package scenes

import (
	"bytes"
	"encoding/json"
	"html/template"
	"strconv"

	"outlierlab/engine/plan"
	"outlierlab/web/lessonbook"
	"outlierlab/web/room/record"
	"outlierlab/web/view"
)

// View is the room's scene as role sees it: every role the title;
// the instructor the scene list, the notes (with the run's numbers) and
// the explore timer. nil when the room follows no plan.
func (b *Book) View(code, role string, st *record.State) *view.RoomScene {
	p := b.byID[st.Plan]
	if p == nil || st.Scene < 0 || st.Scene >= len(p.Scenes) {
		return nil
	}
	sc := &p.Scenes[st.Scene]
	v := &view.RoomScene{Code: code, Role: role, Plan: p.Title, Index: st.Scene, Count: len(p.Scenes), Title: sc.Title}
	if role != "present" {
		return v // the notes are the instructor's alone
	}
	for _, o := range p.Scenes {
		v.Scenes = append(v.Scenes, o.Title)
	}
	v.ExploreMinutes = sc.ExploreMinutes
	v.Question, v.Expect = sceneAsk(sc)
	v.Notes = b.notes(st, sc)
	return v
}

// notes is a scene's notes as HTML, their placeholders filled from
// the room's run.
func (b *Book) notes(st *record.State, sc *plan.Scene) view.HTML {
	text := sc.Notes
	if in, _, err := st.Inputs(b.lab.Lessons); err == nil {
		if run, err := b.lab.Runs.Get(in); err == nil {
			text = sc.NotesOn(run.Result)
		}
	}
	var buf bytes.Buffer
	if err := lessonbook.Markdown.Convert([]byte(text), &buf); err != nil {
		return view.HTML("<p>" + template.HTMLEscapeString(text) + "</p>")
	}
	return view.HTML(buf.String())
}

// sceneAsk is the scene panel's question for the instructor: the words,
// and the answer the plan expects (the instructor's alone until the
// reveal).
func sceneAsk(sc *plan.Scene) (words, expect string) {
	if sc.Question == nil {
		return "", ""
	}
	return sc.Question.Words(), sc.Question.Answer
}

// Board is the board's line per scene of the room's plan (none for
// a room without one).
func (b *Book) Board(st *record.State) []view.RoomBoardScene {
	p := b.byID[st.Plan]
	if p == nil {
		return nil
	}
	out := make([]view.RoomBoardScene, len(p.Scenes))
	for i := range p.Scenes {
		sc := &p.Scenes[i]
		row := view.RoomBoardScene{N: i + 1, Title: sc.Title, Current: i == st.Scene}
		row.Question, row.Expect = sceneAsk(sc)
		if m := st.MarkOf(i); m != nil {
			row.Shown, row.Asked, row.Revealed = true, m.Asked, m.Revealed
			row.Answered, row.Right, row.Wrong, row.Engine = m.Answered, m.Right, m.Answered-m.Right, m.Engine
		}
		out[i] = row
	}
	return out
}

// BoardKey is what the board's scene lines show, to send them
// again only when it changed.
func BoardKey(st *record.State) string {
	b, _ := json.Marshal(st.Progress)
	return st.Plan + "|" + strconv.Itoa(st.Scene) + "|" + string(b)
}
