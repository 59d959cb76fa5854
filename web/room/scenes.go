package room

import (
	"context"
	"net/http"

	"outlierlab/engine/plan"
	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/room/record"
	"outlierlab/web/room/scenes"
	"outlierlab/web/roombus"
)

// The rooms' side of workshop plans (web/room/scenes is what a scene is on
// the lab): the instructor moves the room to a scene, asks its question,
// and a room that ran a plan has its handout with the room's answers.
//
//	POST /r/{code}/scene   {"tab":…, "scene": N} or ?scene=N   (key)

// sceneRequest is /scene's body. The page's other signals come with it
// (Datastar posts them all) and are ignored.
type sceneRequest struct {
	Tab   string `json:"tab"`
	Scene *int   `json:"scene"`
}

// sceneRoom handles POST /r/{code}/scene: the room goes to a scene of its
// plan, and the instructor's tab with it.
func (s *Workshops) sceneRoom(w http.ResponseWriter, r *http.Request) {
	code, rec, req, ok := roomRequest[sceneRequest](s, w, r, true)
	if !ok {
		return
	}
	if err := scenes.Param(r, &req.Scene); err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	p, ok := s.roomPlan(w, code, &rec, "scenes")
	if !ok {
		return
	}
	if err := scenes.InRange(p, req.Scene); err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	n, now := *req.Scene, s.lab.Now().UnixMilli()
	_, rev, err := s.rooms.updateState(r.Context(), code, "scene", func(st *record.State) error {
		next, err := s.plans.State(*st, p, n, now)
		if err != nil {
			return err
		}
		*st = next
		return nil
	})
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	s.resyncTab(code, req.Tab, rev)
	s.lab.Log.Info("room scene", "room", code, "plan", p.ID, "scene", n)
	writeJSON(w, r, http.StatusOK, map[string]any{"scene": n, "id": p.Scenes[n].ID, "title": p.Scenes[n].Title})
}

// roomPlan is the plan rec's room was started from; a room without one
// is answered 409 naming scene: it has no what ("scenes").
func (s *Workshops) roomPlan(w http.ResponseWriter, code string, rec *record.Record, what string) (*plan.Plan, bool) {
	p := s.plans.Plan(rec.State.Plan)
	if p == nil {
		httperr.Write(w, httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "scene", Msg: "room " + code + " was not started from a plan: it has no " + what}), httperr.KindConflict)
	}
	return p, p != nil
}

// sceneRevealCheck is scenes.Revealable on the room's state as the bus has
// it (this replica's hub may not have the last scene move yet), for a
// scene's question q: the reveal refuses before it closes the answers.
// The reveal's own update checks again.
func (set *roomSet) sceneRevealCheck(ctx context.Context, code string, q *record.Question) error {
	if q.Scene == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	e, err := set.bus.KV.Get(ctx, code)
	if err != nil {
		return nil // the update reads the bus again, and checks
	}
	rec, err := record.Decode(e.Value())
	if err != nil {
		return nil
	}
	return scenes.Revealable(&rec.State, q)
}

// A workshop plan's printable handout (issue 23; web/handout builds it):
//
//	GET /plans/{id}/handout   the plan's, as its room would show it
//	GET /r/{code}/handout     a room's that ran a plan, with its answers
//
// A room's handout follows the recording's rule: anyone with the room's
// code may read it (attendees after class), no key; it shows a question's
// histogram only once the room revealed it. A code that names no room is
// a 404 (and counts as a guess), as every room page is.

// roomHandout handles GET /r/{code}/handout.
func (s *Workshops) roomHandout(w http.ResponseWriter, r *http.Request) {
	if err := page.OnlyParams(r.URL.RawQuery, "a handout"); err != nil {
		s.lab.Pages.BadRequest(w, r, httperr.Status[httperr.KindMalformed], r.URL.Path, httperr.Text(err))
		return
	}
	code, rec, ok := s.roomFor(w, r)
	if !ok {
		return
	}
	p := s.plans.Plan(rec.State.Plan)
	if p == nil {
		s.lab.Pages.NotFound(w, r, "Workshop "+code+" was not started from a workshop plan, so it has no handout; its recording is at /r/"+code+"/recording.")
		return
	}
	entries, err := s.rooms.timeline.Read(r.Context(), code)
	if err != nil {
		// The bus, not the request: the recording's page answers the same.
		httperr.Write(w, httperr.Errorf(httperr.KindUnavailable, "cannot read the workshop's answers: %w", err), httperr.KindUnavailable)
		return
	}
	s.plans.RenderHandout(w, r, p, code, scenes.Reveals(entries, p.ID), s.recordedBoards(code, p, entries))
}
