package room

import (
	"fmt"
	"maps"
	"net/http"
	"outlierlab/web/room/record"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"outlierlab/engine/plan"
	"outlierlab/web/budget"
	"outlierlab/web/handout"
	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
)

// A workshop plan's printable handout (issue 23; web/handout builds it):
//
//	GET /plans/{id}/handout   the plan's, as its room would show it
//	GET /r/{code}/handout     a room's that ran a plan, with its answers
//
// A room's handout follows the recording's rule: anyone with the room's
// code may read it (attendees after class), no key; it shows a question's
// histogram only once the room revealed it. A code that names no room is
// a 404 (and counts as a guess), as every room page is.

// planHandout handles GET /plans/{id}/handout.
func (s *Workshops) planHandout(w http.ResponseWriter, r *http.Request) {
	if err := page.OnlyParams(r.URL.RawQuery, "a handout"); err != nil {
		s.Pages.BadRequest(w, r, http.StatusBadRequest, r.URL.Path, httperr.Text(err))
		return
	}
	id := chi.URLParam(r, "id")
	p := s.plans.byID[id]
	if p == nil {
		s.Pages.NotFound(w, r, fmt.Sprintf("There is no workshop plan %q here (plans: %s).", httperr.Truncate(id, 40), s.planIDs()))
		return
	}
	s.renderHandout(w, r, p, "", nil)
}

// roomHandout handles GET /r/{code}/handout.
func (s *Workshops) roomHandout(w http.ResponseWriter, r *http.Request) {
	if err := page.OnlyParams(r.URL.RawQuery, "a handout"); err != nil {
		s.Pages.BadRequest(w, r, http.StatusBadRequest, r.URL.Path, httperr.Text(err))
		return
	}
	code, rec, ok := s.roomFor(w, r)
	if !ok {
		return
	}
	p := s.plans.byID[rec.State.Plan]
	if p == nil {
		s.Pages.NotFound(w, r, "Workshop "+code+" was not started from a workshop plan, so it has no handout; its recording is at /r/"+code+"/recording.")
		return
	}
	entries, err := s.rooms.timeline.Read(r.Context(), code)
	if err != nil {
		// The bus, not the request: the recording's page answers the same.
		httperr.Plain(w, http.StatusServiceUnavailable, "cannot read the workshop's answers: "+err.Error())
		return
	}
	s.renderHandout(w, r, p, code, revealsOf(entries, p.ID))
}

// renderHandout builds p's handout from its scenes' runs, each the one
// its room shows (sceneState), and writes the page. A plan with a heavy
// run waits for a core as a heavy lab page does.
func (s *Workshops) renderHandout(w http.ResponseWriter, r *http.Request, p *plan.Plan, room string, reveals []handout.Reveal) {
	if handout.Heavy(p) {
		release, err := s.Budget.Admit(r.Context(), 1)
		if err != nil {
			budget.Refuse(w, err)
			return
		}
		defer release()
	}
	scenes := make([]handout.Scene, len(p.Scenes))
	for i := range p.Scenes {
		sc, err := s.handoutScene(p, i)
		if err != nil {
			s.Log.Error("handout", "plan", p.ID, "scene", i, "err", err)
			httperr.Plain(w, http.StatusInternalServerError, "cannot build the handout: "+httperr.Text(err))
			return
		}
		scenes[i] = sc
	}
	h, err := handout.Build(p, scenes, room, reveals)
	if err != nil {
		s.Log.Error("handout", "plan", p.ID, "err", err)
		httperr.Plain(w, http.StatusInternalServerError, "cannot build the handout: "+httperr.Text(err))
		return
	}
	title := "Handout: " + p.Title
	if room != "" {
		title += " (workshop " + room + ")"
	}
	h.Layout = s.Pages.Layout(title, "", true)
	s.Pages.Render(w, r, http.StatusOK, templates.HandoutPage(h))
}

// handoutScene is scene i of p with the run its room shows and a link to
// it: the lab at the scene's cursor for a preset's scene, the lesson for
// a lesson's (a lab link would drop the lesson's own settings).
func (s *Workshops) handoutScene(p *plan.Plan, i int) (handout.Scene, error) {
	st, err := s.sceneState(record.State{}, p, i, 0)
	if err != nil {
		return handout.Scene{}, err
	}
	in, d, err := st.Inputs(s.Lessons)
	if err != nil {
		return handout.Scene{}, err
	}
	run, err := s.Runs.Get(in)
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

// revealsOf are the questions a room revealed on a scene of plan id, in
// the order of its recording.
func revealsOf(entries []record.TimelineEntry, id string) []handout.Reveal {
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

// planIDs lists the plans a 404 offers.
func (s *Workshops) planIDs() string {
	ids := slices.Sorted(maps.Keys(s.plans.byID))
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
