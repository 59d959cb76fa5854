package scenes

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"outlierlab/engine/plan"
	"outlierlab/web/httperr"
	"outlierlab/web/room/record"
	"outlierlab/web/tabstate"
)

// Param reads ?scene=N into *n (the query wins over the body).
func Param(r *http.Request, n **int) error {
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

// InRange refuses a scene number p does not have (or none).
func InRange(p *plan.Plan, n *int) error {
	if n != nil && *n >= 0 && *n < len(p.Scenes) {
		return nil
	}
	got := "none"
	if n != nil {
		got = strconv.Itoa(*n)
	}
	return &httperr.FieldError{Field: "scene", Msg: fmt.Sprintf("%s is not a scene of plan %s (allowed 0–%d)", got, p.ID, len(p.Scenes)-1)}
}

// Lacks is the error for scene n of p, which has no what: it names
// the scenes that have one (has).
func Lacks(p *plan.Plan, n int, what string, has func(*plan.Scene) bool) error {
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

// OnScene refuses (409 naming scene) what is scene n's while the room
// is on another.
func OnScene(p *plan.Plan, st *record.State, n int) error {
	if n == st.Scene {
		return nil
	}
	return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "scene",
		Msg: fmt.Sprintf("%d is not the room's scene: it is on %d (%s); move it there first", n, st.Scene, p.Scenes[st.Scene].ID)})
}

// Revealable refuses to reveal a scene's question while the room is
// on another scene: the engine's answer would be read off that scene's
// run, and the board would count it against the wrong plan answer.
func Revealable(st *record.State, q *record.Question) error {
	if q.Scene == nil || *q.Scene == st.Scene {
		return nil
	}
	return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "question",
		Msg: fmt.Sprintf("it is scene %d's, and the room is on scene %d now: go back to scene %d to reveal it (or ask another)", *q.Scene, st.Scene, *q.Scene)})
}

// question is scene n's question in plan id (nil for none).
func (b *Book) question(id string, n *int) *plan.Question {
	p := b.byID[id]
	if p == nil || n == nil || *n < 0 || *n >= len(p.Scenes) {
		return nil
	}
	return p.Scenes[*n].Question
}

// ChoiceAnswer is the engine's answer to a plan's choice question on the
// room's run: the one choice whose check holds (plan -check proved there
// is one on the scene's run; after the instructor changed the run there
// may be none or two, and the reveal says so).
func (b *Book) ChoiceAnswer(st *record.State, q *record.Question, run *tabstate.Run) (string, error) {
	pq := b.question(st.Plan, q.Scene)
	if pq == nil || pq.Kind != plan.KindChoice {
		return "", httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "question", Msg: "the plan scene this question came from is not on this server"})
	}
	a, _, err := pq.EngineAnswer(run.Result)
	if err != nil {
		return "", httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "question", Msg: "on the room's run as it is now, " + err.Error()})
	}
	return a, nil
}

// MarkRevealed notes how the room answered a scene's question: the
// answers in q's histogram against the plan's answer.
func (b *Book) MarkRevealed(st *record.State, q *record.Question) {
	pq := b.question(st.Plan, q.Scene)
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

// EntryScene is the scene st is on (nil: no plan, or not this server's).
func (b *Book) EntryScene(st *record.State) *record.EntryScene {
	p := b.byID[st.Plan]
	if p == nil || st.Scene < 0 || st.Scene >= len(p.Scenes) {
		return nil
	}
	sc := &p.Scenes[st.Scene]
	return &record.EntryScene{Plan: p.Title, N: st.Scene + 1, Of: len(p.Scenes), ID: sc.ID, Title: sc.Title}
}
