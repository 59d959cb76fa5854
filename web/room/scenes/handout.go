package scenes

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"outlierlab/engine/plan"
	"outlierlab/web/budget"
	"outlierlab/web/handout"
	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/room/record"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// Handout handles GET /plans/{id}/handout.
func (b *Book) Handout(w http.ResponseWriter, r *http.Request) {
	if err := page.OnlyParams(r.URL.RawQuery, "a handout"); err != nil {
		b.lab.Pages.BadRequest(w, r, httperr.Status[httperr.KindMalformed], r.URL.Path, httperr.Text(err))
		return
	}
	id := chi.URLParam(r, "id")
	p := b.byID[id]
	if p == nil {
		b.lab.Pages.NotFound(w, r, fmt.Sprintf("There is no workshop plan %q here (plans: %s).", httperr.Truncate(id, 40), b.IDs()))
		return
	}
	b.RenderHandout(w, r, p, "", nil, nil)
}

// RenderHandout builds p's handout from its scenes' runs, each the one
// its room shows (State), with the room's boards of its challenge scenes
// (by scene index; nil for none), and writes the page. A plan with a
// heavy run waits for a core as a heavy lab page does.
func (b *Book) RenderHandout(w http.ResponseWriter, r *http.Request, p *plan.Plan, room string, reveals []handout.Reveal, boards map[int]*view.RoomChallenge) {
	if handout.Heavy(p) {
		release, err := b.lab.Budget.Admit(r.Context(), 1)
		if err != nil {
			budget.Refuse(w, err)
			return
		}
		defer release()
	}
	scenes := make([]handout.Scene, len(p.Scenes))
	for i := range p.Scenes {
		sc, err := b.handoutScene(p, i)
		if err != nil {
			// A scene past the budget (an instructor's own plan, serve
			// -plans) is a 422 naming what to change; anything else is
			// the server's (logged with the request).
			httperr.Write(w, fmt.Errorf("cannot build the handout of plan %s: scene %d: %w", p.ID, i+1, err), httperr.KindInternal)
			return
		}
		sc.Board = boards[i]
		scenes[i] = sc
	}
	h, err := handout.Build(p, scenes, room, reveals)
	if err != nil {
		httperr.Write(w, fmt.Errorf("cannot build the handout of plan %s: %w", p.ID, err), httperr.KindInternal)
		return
	}
	title := "Handout: " + p.Title
	if room != "" {
		title += " (workshop " + room + ")"
	}
	h.Layout = b.lab.Pages.Layout(title, "", true)
	b.lab.Pages.Render(w, r, http.StatusOK, templates.HandoutPage(h))
}

// handoutScene is scene i of p with the run its room shows and a link to
// it: the lab at the scene's cursor for a preset's scene, the lesson for
// a lesson's (a lab link would drop the lesson's own settings).
func (b *Book) handoutScene(p *plan.Plan, i int) (handout.Scene, error) {
	st, err := b.State(record.State{}, p, i, 0)
	if err != nil {
		return handout.Scene{}, err
	}
	in, d, err := st.Inputs(b.lab.Lessons)
	if err != nil {
		return handout.Scene{}, err
	}
	run, err := b.lab.Runs.Get(in)
	if err != nil {
		return handout.Scene{}, err
	}
	out := handout.Scene{Scene: &p.Scenes[i], Run: run}
	if d != nil {
		out.LabURL, out.Lesson = "/lessons/"+d.ID, true
	} else {
		out.LabURL = tabstate.LabURL(run, st.Anchor)
	}
	return out, nil
}

// Reveals are the questions a room revealed on a scene of plan id, in
// the order of its recording.
func Reveals(entries []record.TimelineEntry, id string) []handout.Reveal {
	var out []handout.Reveal
	for i := range entries {
		st := &entries[i].State
		q := st.Question
		if entries[i].Kind != "reveal" || st.Plan != id || q == nil || !q.Revealed {
			continue
		}
		asked := q.Scene != nil && *q.Scene == st.Scene
		out = append(out, handout.Reveal{Scene: st.Scene, Asked: asked, Text: q.Text, Host: q.Host, AtMs: q.AtMs, Answer: q.Answer, Bars: record.AnswerBars(q.Hist), Total: q.Total})
	}
	return out
}

// IDs lists the plans a 404 offers.
func (b *Book) IDs() string {
	ids := slices.Sorted(maps.Keys(b.byID))
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
