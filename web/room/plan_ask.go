package room

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"outlierlab/web/room/record"
	"strconv"
	"strings"

	"outlierlab/engine/plan"
	"outlierlab/web/httperr"
	"outlierlab/web/roombus"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// A plan scene's question, asked with one click (issue 23): the present
// page's scene panel posts /r/{code}/questions?scene=N, the room's one
// ask path (openQuestion), which takes the scene's kind, host and moment
// instead of the form's. The answer the plan expects never rides on the
// room's state (anyone with the code reads that, and the recording): the
// instructor's scene panel and board look it up in the plan, and the
// histogram marks the engine's answer on the room's run, as for any
// question. The room's state keeps, per scene, whether it was shown and
// asked and how the room answered (Progress), for the board.

// sceneParam reads ?scene=N into *n (the query wins over the body).
func sceneParam(r *http.Request, n **int) error {
	q := r.URL.Query().Get("scene")
	if q == "" {
		return nil
	}
	v, err := strconv.Atoi(q)
	if err != nil {
		return &httperr.FieldError{Field: "scene", Msg: fmt.Sprintf("%q is not a scene number", httperr.Truncate(q, 20))}
	}
	*n = &v
	return nil
}

// sceneInRange refuses a scene number p does not have (or none).
func sceneInRange(p *plan.Plan, n *int) error {
	if n != nil && *n >= 0 && *n < len(p.Scenes) {
		return nil
	}
	got := "none"
	if n != nil {
		got = strconv.Itoa(*n)
	}
	return &httperr.FieldError{Field: "scene", Msg: fmt.Sprintf("%s is not a scene of plan %s (allowed 0–%d)", got, p.ID, len(p.Scenes)-1)}
}

// sceneQuestion is the plan question q asks for (?scene=N; nil when it
// asks the instructor's own), with q's kind, host and moment set from
// it. Only the room's current scene can be asked: its run is the one on
// screen, the one the plan's answer was checked on.
func (s *Workshops) sceneQuestion(st *record.State, q *questionRequest) (*plan.Question, error) {
	if q.Scene == nil {
		return nil, nil
	}
	p := s.plans.byID[st.Plan]
	if p == nil {
		return nil, httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "scene", Msg: "this room was not started from a plan: it has no scenes"})
	}
	if err := sceneInRange(p, q.Scene); err != nil {
		return nil, err
	}
	n := *q.Scene
	if err := onScene(p, st, n); err != nil {
		return nil, err
	}
	pq := p.Scenes[n].Question
	if pq == nil {
		return nil, sceneLacks(p, n, "question", func(sc *plan.Scene) bool { return sc.Question != nil })
	}
	q.Kind, q.Host = pq.Kind, pq.Host
	q.At = json.RawMessage(ftoa(float64(pq.At) / 1000))
	return pq, nil
}

// sceneLacks is the error for scene n of p, which has no what: it names
// the scenes that have one (has).
func sceneLacks(p *plan.Plan, n int, what string, has func(*plan.Scene) bool) error {
	var with []string
	for i := range p.Scenes {
		if has(&p.Scenes[i]) {
			with = append(with, strconv.Itoa(i))
		}
	}
	allowed := "none of plan " + p.ID + "'s scenes has one"
	if len(with) > 0 {
		allowed = "allowed the scenes with one: " + strings.Join(with, ", ")
	}
	return &httperr.FieldError{Field: "scene", Msg: fmt.Sprintf("scene %d (%s) has no %s (%s)", n, p.Scenes[n].ID, what, allowed)}
}

// onScene refuses (409 naming scene) what is scene n's while the room
// is on another.
func onScene(p *plan.Plan, st *record.State, n int) error {
	if n == st.Scene {
		return nil
	}
	return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "scene",
		Msg: fmt.Sprintf("%d is not the room's scene: it is on %d (%s); move it there first", n, st.Scene, p.Scenes[st.Scene].ID)})
}

// sceneRevealable refuses to reveal a scene's question while the room is
// on another scene: the engine's answer would be read off that scene's
// run, and the board would count it against the wrong plan answer.
func sceneRevealable(st *record.State, q *record.Question) error {
	if q.Scene == nil || *q.Scene == st.Scene {
		return nil
	}
	return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "question",
		Msg: fmt.Sprintf("it is scene %d's, and the room is on scene %d now: go back to scene %d to reveal it (or ask another)", *q.Scene, st.Scene, *q.Scene)})
}

// sceneRevealCheck is sceneRevealable on the room's state as the bus has
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
	return sceneRevealable(&rec.State, q)
}

// planQuestion is scene n's question in plan id (nil for none).
func (s *Workshops) planQuestion(id string, n *int) *plan.Question {
	p := s.plans.byID[id]
	if p == nil || n == nil || *n < 0 || *n >= len(p.Scenes) {
		return nil
	}
	return p.Scenes[*n].Question
}

// choiceAnswer is the engine's answer to a plan's choice question on the
// room's run: the one choice whose check holds (plan -check proved there
// is one on the scene's run; after the instructor changed the run there
// may be none or two, and the reveal says so).
func (s *Workshops) choiceAnswer(st *record.State, q *record.Question, run *tabstate.Run) (string, error) {
	pq := s.planQuestion(st.Plan, q.Scene)
	if pq == nil || pq.Kind != plan.KindChoice {
		return "", httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "question", Msg: "the plan scene this question came from is not on this server"})
	}
	a, _, err := pq.EngineAnswer(run.Result)
	if err != nil {
		return "", httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "question", Msg: "on the room's run as it is now, " + err.Error()})
	}
	return a, nil
}

// markRevealed notes how the room answered a scene's question: the
// answers in q's histogram against the plan's answer.
func (s *Workshops) markRevealed(st *record.State, q *record.Question) {
	pq := s.planQuestion(st.Plan, q.Scene)
	if pq == nil {
		return
	}
	m := st.Mark(*q.Scene)
	m.Asked, m.Revealed, m.Answered, m.Right, m.Engine = true, true, q.Total, 0, ""
	for _, b := range q.Hist {
		if b.Answer == pq.Answer {
			m.Right += b.N
		}
	}
	if q.Answer != pq.Answer {
		m.Engine = q.Answer
	}
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

// sceneBoard is the board's line per scene of the room's plan (none for
// a room without one).
func (s *Workshops) sceneBoard(st *record.State) []view.RoomBoardScene {
	p := s.plans.byID[st.Plan]
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

// boardScenesKey is what the board's scene lines show, to send them
// again only when it changed.
func boardScenesKey(st *record.State) string {
	b, _ := json.Marshal(st.Progress)
	return st.Plan + "|" + strconv.Itoa(st.Scene) + "|" + string(b)
}

// entrySceneOf is the scene st is on (nil: no plan, or not this server's).
func (s *Workshops) entrySceneOf(st *record.State) *record.EntryScene {
	p := s.plans.byID[st.Plan]
	if p == nil || st.Scene < 0 || st.Scene >= len(p.Scenes) {
		return nil
	}
	sc := &p.Scenes[st.Scene]
	return &record.EntryScene{Plan: p.Title, N: st.Scene + 1, Of: len(p.Scenes), ID: sc.ID, Title: sc.Title}
}
