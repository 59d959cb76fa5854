package room

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"outlierlab/web/addrlimit"
	"outlierlab/web/httperr"
	"outlierlab/web/room/question"
	"outlierlab/web/room/record"
	"outlierlab/web/room/scenes"
	"outlierlab/web/roombus"
	"outlierlab/web/view"
)

// Predict, then reveal, for a room (workshops.md: every poll tool shows a
// histogram; only a lab that runs the system can mark the true answer).
// The instructor opens a question about a moment of the room's run; the
// room's playback holds before that moment (the question rides on the
// room's state, so every replica's followers hold); attendees answer; the
// instructor and projector see the count, not the split; Reveal closes
// the answers, reads the engine's answer off the frame at that moment,
// puts the histogram on the room's state and plays on.
//
// The answers live in the room's bucket, one key per attendee and question
// (answers.go): two replicas taking answers at once never lose one,
// and a poll takes as many answers as the room has attendees.

// questionOf is the room's question as rec (this replica's hub) has it,
// or, when that is not question id, as the bus has it: a question opened a
// moment ago (here or on another replica) may not have reached the hub
// yet, and an answer to it must not be refused.
func (set *roomSet) questionOf(ctx context.Context, code string, rec record.Record, id string) *record.Question {
	if q := rec.State.Question; q != nil && q.ID == id {
		return q
	}
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	e, err := set.bus.KV.Get(ctx, code)
	if err != nil {
		return rec.State.Question
	}
	fresh, err := record.Decode(e.Value())
	if err != nil {
		return rec.State.Question
	}
	return fresh.State.Question
}

// questionView is the question panel as a page of role sees it; who is
// the attendee (their own answer shows).
func (h *roomHub) questionView(role, who string) view.RoomQuestion {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := view.RoomQuestion{Code: h.code, Role: role}
	q := h.now.rec.State.Question
	if q == nil {
		return v
	}
	v.ID, v.Text, v.Choices, v.Revealed, v.Answer, v.Total = q.ID, q.Text, q.Choices, q.Revealed, q.Answer, q.Total
	if mine := h.answers[q.ID]; mine != nil {
		v.Count = len(mine)
		if who != "" {
			v.Mine = mine[who].Answer
		}
	}
	v.Hist = record.AnswerBars(q.Hist)
	if role == "present" && !q.Revealed {
		c := sources(h.answers[q.ID])
		v.Sources, v.FewSources = sourcesWords(c), fewSourcesWords(c, h.set.idsPerAddress(&h.now.rec.State))
	}
	return v
}

// An attendee is an identity the server issued to a browser (identity.go):
// a cookie, anonymous by design, with no account behind it. A browser
// that clears it, or a script that never keeps it, is a new attendee,
// which the server cannot tell from a classmate behind the same NAT: one
// address may have the room's budget of identities (IDsPerAddress, 60
// unless the instructor set another: a class of 50 behind one address
// answers at once), each answering once, and no more however long it
// tries. Tighter would refuse real classes, and looser identities (a tab,
// an address) were worse (issue 19). So the server keeps one identity per
// browser that keeps its cookie, bounds what one address can mint in a
// room, and shows the instructor where the answers came from (sources:
// the count of distinct client addresses, as tags that name none, and the
// most from one, with a warning when most come from one): 60 answers from
// one address in a class sitting at home is stuffing; 40 from one address
// in a classroom on one Wi-Fi is the class.

// sourceCount is where a question's answers came from.
type sourceCount struct{ answers, addrs, most int }

// sources counts answers by their client address's tag; answers written
// before tags were (by an older replica) count as one address of their
// own each.
func sources(answers map[string]record.Answer) sourceCount {
	by := map[string]int{}
	for who, a := range answers {
		k := a.From
		if k == "" {
			k = "?" + who
		}
		by[k]++
	}
	c := sourceCount{answers: len(answers), addrs: len(by)}
	for _, n := range by {
		c.most = max(c.most, n)
	}
	return c
}

// sourcesWords is the instructor's line: "65 answers from 6 addresses,
// up to 60 from one" ("" for no answers).
func sourcesWords(c sourceCount) string {
	if c.answers == 0 {
		return ""
	}
	s := fmt.Sprintf("%d %s from %d %s", c.answers, plural(c.answers, "answer", "answers"), c.addrs, plural(c.addrs, "address", "addresses"))
	if c.addrs > 1 && c.most > 1 {
		s += fmt.Sprintf(", up to %d from one", c.most)
	}
	return s
}

// fewSourcesWords warns the instructor when most of the answers (6 at
// least) come from one client address: a class on one network, or one
// browser clearing its cookie to answer again, each time a new attendee
// until the address's budget of identities (perAddress) is spent. ""
// when the answers are spread.
func fewSourcesWords(c sourceCount, perAddress int) string {
	if c.answers < 6 || 2*c.most <= c.answers {
		return ""
	}
	return fmt.Sprintf("Most answers come from one network (%d of %d): a class on one Wi-Fi, or one browser clearing its cookies to answer again (a network may have up to %d attendees here; the board sets it)", c.most, c.answers, perAddress)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// The question routes:
//
//	POST /r/{code}/questions              open one (key): {"qkind","qhost","qat"}, or ?scene=N: the plan scene's
//	POST /r/{code}/questions/{id}/reveal  reveal it (key)
//	POST /r/{code}/answer                 an attendee's answer: ?q=ID&a=… or {"q","qans"}
//	GET  /r/{code}/question               the question, its count, and after the reveal the histogram
//
// errNotThisQuestion refuses a question id that is not the room's open one.
func errNotThisQuestion(id string) error {
	return httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "question", Msg: fmt.Sprintf("%q is not this room's question", httperr.Truncate(id, 20))})
}

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
	now := s.lab.Now()
	_, rev, err := s.rooms.updateState(r.Context(), code, "question", func(st *record.State) error {
		var err error
		if q, err = s.questions.Make(code, st, req); err != nil {
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
		if in, _, err := st.Inputs(s.lab.Lessons); err == nil {
			if run, err := s.lab.Runs.Get(in); err == nil {
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
	s.lab.Log.Info("room question", "room", code, "question", q.ID, "kind", q.Kind)
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
		httperr.Write(w, errNotThisQuestion(id), httperr.KindNotFound)
		return
	} else if q.Revealed {
		httperr.Write(w, httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "question", Msg: "already revealed"}), httperr.KindConflict)
		return
	} else if err := s.rooms.sceneRevealCheck(r.Context(), code, q); err != nil {
		httperr.Write(w, err, httperr.KindConflict) // before the answers close
		return
	}
	answers, err := s.rooms.closeAnswers(r.Context(), code, id)
	var q record.Question
	var rev uint64
	now := s.lab.Now()
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
		httperr.Write(w, errNotThisQuestion(id), httperr.KindNotFound)
		return
	}
	if q.Revealed {
		httperr.Write(w, httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "question", Msg: "the answer has been revealed; answers are closed"}), httperr.KindConflict)
		return
	}
	who := rec.Attendee(r, code)
	if who == "" {
		httperr.Write(w, errNoAttendee(code), httperr.KindForbidden)
		return
	}
	ans, err := record.CheckAnswer(q, a)
	if err == nil {
		from := rec.SourceTag(code, addrlimit.Key(s.rooms.clientAddr(r)))
		err = s.rooms.putAnswer(r.Context(), code, q.ID, who, ans, from)
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
		// Where the answers came from, and how many attendees one
		// address may have, for the key holder only.
		Addresses     int `json:"addresses,omitempty"`
		MostFrom      int `json:"mostFromOne,omitempty"`
		IDsPerAddress int `json:"idsPerAddress,omitempty"`
	}{Question: rec.State.Question}
	if rec.KeyMatches(roomKey(r, code)) {
		out.IDsPerAddress = s.rooms.idsPerAddress(&rec.State)
	}
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
		if rec.KeyMatches(roomKey(r, code)) {
			c := sources(answers)
			out.Addresses, out.MostFrom = c.addrs, c.most
		}
	}
	writeJSON(w, r, http.StatusOK, out)
}
