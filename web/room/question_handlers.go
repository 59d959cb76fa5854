package room

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"outlierlab/web/httperr"
	"outlierlab/web/room/question"
	"outlierlab/web/room/record"
	"outlierlab/web/room/scenes"
)

// The question routes:
//
//	POST /r/{code}/questions              open one (key): {"qkind","qhost","qat"}, or ?scene=N: the plan scene's
//	POST /r/{code}/questions/{id}/reveal  reveal it (key)
//	POST /r/{code}/answer                 an attendee's answer: ?q=ID&a=… or {"q","qans"}
//	GET  /r/{code}/question               the question, its count, and after the reveal the histogram
func (s *Workshops) questionRoutes(r chi.Router) {
	r.Post("/r/{code}/questions", s.openQuestion)
	r.Post("/r/{code}/questions/{id}/reveal", s.revealQuestion)
	r.Post("/r/{code}/answer", s.answerQuestion)
	r.Get("/r/{code}/question", s.questionStatus)
}

// openQuestion opens a question: the room holds before its moment, and
// the answers start afresh.
func (s *Workshops) openQuestion(w http.ResponseWriter, r *http.Request) {
	code, _, req, ok := roomRequest[question.Request](s, w, r, true)
	if !ok {
		return
	}
	if err := scenes.Param(r, &req.Scene); err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	var q *record.Question
	var prev string // the question this one replaces, whose answers go
	now := s.Now()
	_, rev, err := s.rooms.updateState(r.Context(), code, "question", func(st *record.State) error {
		var err error
		if q, err = s.questions.Make(st, req); err != nil {
			return err
		}
		if st.Question != nil {
			prev = st.Question.ID
		}
		st.Question = q
		st.MarkAsked(q)
		// The room waits before the moment: a cursor past it goes back
		// (the answer must not be on screen), playback stops at it.
		cur := st.Anchor
		if in, _, err := st.Inputs(s.Lessons); err == nil {
			if run, err := s.Runs.Get(in); err == nil {
				cur = st.CursorAt(in, run, now)
			}
		}
		st.Anchor, st.AnchorAtMs = min(cur, q.Hold), now.UnixMilli()
		return nil
	})
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	if prev != "" {
		s.rooms.dropAnswers(r.Context(), code, prev)
	}
	s.resyncTab(code, req.Tab, rev)
	s.Log.Info("room question", "room", code, "question", q.ID, "kind", q.Kind)
	writeJSON(w, r, http.StatusCreated, q)
}

// revealQuestion closes the answers, marks the engine's answer on the
// room's histogram and plays on from the moment asked about.
func (s *Workshops) revealQuestion(w http.ResponseWriter, r *http.Request) {
	code, rec, ok := s.roomAPI(w, r, true)
	if !ok {
		return
	}
	id := chi.URLParam(r, "id")
	if q := s.rooms.questionOf(r.Context(), code, rec, id); q == nil || q.ID != id {
		httperr.Plain(w, http.StatusNotFound, fmt.Sprintf("question: %q is not this room's question", httperr.Truncate(id, 20)))
		return
	} else if q.Revealed {
		httperr.Plain(w, http.StatusConflict, "question: already revealed")
		return
	} else if err := s.rooms.sceneRevealCheck(r.Context(), code, q); err != nil {
		httperr.Write(w, err, httperr.KindConflict) // before the answers close
		return
	}
	answers, err := s.rooms.closeAnswers(r.Context(), code, id)
	var q record.Question
	var rev uint64
	now := s.Now()
	if err == nil {
		_, rev, err = s.rooms.updateState(r.Context(), code, "reveal", func(st *record.State) error {
			if st.Question == nil || st.Question.ID != id {
				return httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "question", Msg: "the room's question changed"})
			}
			q = *st.Question
			if err := scenes.Revealable(st, &q); err != nil {
				return err
			}
			right, err := s.questions.Answer(st, &q)
			if err != nil {
				return err
			}
			q.Revealed, q.Answer, q.Total, q.Hist = true, right, len(answers), record.Histogram(&q, answers, right)
			st.Question = &q
			s.plans.MarkRevealed(st, &q)
			st.Anchor, st.AnchorAtMs, st.Playing = q.Hold, now.UnixMilli(), true
			return nil
		})
	}
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	var sig struct {
		Tab string `json:"tab"`
	}
	_ = s.readJSON(r, &sig)
	s.resyncTab(code, sig.Tab, rev)
	writeJSON(w, r, http.StatusOK, q)
}

// answerRequest is an attendee's answer as JSON (the page's signals).
type answerRequest struct {
	Tab    string          `json:"tab"`
	Q      string          `json:"q"`
	Answer json.RawMessage `json:"qans"`
}

// answerQuestion takes an attendee's answer, under the identity the server
// gave its browser (403 without one); a second one replaces the first;
// after the reveal the answers are closed (409).
func (s *Workshops) answerQuestion(w http.ResponseWriter, r *http.Request) {
	code, rec, req, ok := roomRequest[answerRequest](s, w, r, false)
	if !ok {
		return
	}
	id, a := r.URL.Query().Get("q"), r.URL.Query().Get("a")
	if id == "" {
		id = req.Q
	}
	if a == "" && len(req.Answer) > 0 {
		var v any
		_ = json.Unmarshal(req.Answer, &v)
		a = fmt.Sprint(v)
	}
	q := s.rooms.questionOf(r.Context(), code, rec, id)
	if q == nil || q.ID != id {
		httperr.Plain(w, http.StatusNotFound, fmt.Sprintf("question: %q is not this room's question", httperr.Truncate(id, 20)))
		return
	}
	if q.Revealed {
		httperr.Plain(w, http.StatusConflict, "question: the answer has been revealed; answers are closed")
		return
	}
	who := rec.Attendee(r, code)
	if who == "" {
		httperr.Write(w, errNoAttendee(code), httperr.KindForbidden)
		return
	}
	ans, err := record.CheckAnswer(q, a)
	if err == nil {
		err = s.rooms.putAnswer(r.Context(), code, q.ID, who, ans)
	}
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// questionStatus is the room's question as anyone may see it: the count
// of answers, and only after the reveal the split and the engine's answer.
func (s *Workshops) questionStatus(w http.ResponseWriter, r *http.Request) {
	code, rec, ok := s.roomAPI(w, r, false)
	if !ok {
		return
	}
	out := struct {
		Question *record.Question `json:"question"`
		Count    int              `json:"count"`
		Mine     string           `json:"mine,omitempty"`
	}{Question: rec.State.Question}
	if q := out.Question; q != nil {
		hub, err := s.rooms.open(r.Context(), code, "")
		if err != nil {
			httperr.Write(w, roomError(err), httperr.KindInternal)
			return
		}
		answers := hub.answersNow(r.Context(), q.ID)
		hub.release("")
		out.Count = len(answers)
		out.Mine = answers[rec.Attendee(r, code)].Answer
	}
	writeJSON(w, r, http.StatusOK, out)
}

// writeJSON answers with v as JSON; a page's Datastar request gets 204
// instead (Datastar would merge a JSON answer into the page's signals:
// the stream shows the change).
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	if r.Header.Get("Datastar-Request") == "true" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
