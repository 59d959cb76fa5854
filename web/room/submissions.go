package room

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/engine/challenge"
	"outlierlab/web/addrlimit"
	"outlierlab/web/budget"
	"outlierlab/web/httperr"
	"outlierlab/web/room/record"
	"outlierlab/web/room/scenes"
	"outlierlab/web/roombus"
	"outlierlab/web/templates"
)

// A challenge scene's submissions (a plan scene with challenge: ID):
// attendees tune the challenge's unlocked settings on their own pages and
// submit them; each is graded as /challenges grades one alone (the
// Grader: its budget, its rate limit per browser, its hidden seeds) and
// kept on the bus as an answer is (answers.go), one key per attendee and
// challenge, CODE.ch.ID.s.ATTENDEE: every replica's hub watches them, an
// attendee's new submission replaces its last, and a room keeps at most
// Limits.Submissions attendees' per challenge. The leaderboard ranks them
// (engine/challenge: Rank, the Pareto front on the two main goals).
//
//	POST /r/{code}/submit        an attendee's settings (the challenge's form, form-encoded)
//	GET  /r/{code}/leaderboard   the scene's challenge, its submissions ranked, the front marked

// Grader grades a room's submission to a challenge as the challenges'
// own pages do (web/challenges: Challenges.Grade): it reads the request's
// form, limits each browser's submissions, weighs the battery and runs it
// on the hidden seeds. Its errors are the kinds table's.
type Grader interface {
	Grade(r *http.Request, id string) (*challenge.Challenge, challenge.Submission, *challenge.Grade, error)
	// Challenge finds a challenge by id.
	Challenge(id string) (*challenge.Challenge, bool)
	// Fields are a challenge's unlocked settings as a form's inputs at
	// sub's values (the start's for nil).
	Fields(id string, sub challenge.Submission) templ.Component
	// CompareURL opens /compare with sub beside the reference.
	CompareURL(id string, sub challenge.Submission) string
}

// SetGrader gives the rooms their challenges' grader (web.New: the
// server's one web/challenges); without one a challenge scene takes no
// submission (404).
func (s *Workshops) SetGrader(g Grader) { s.grader = g }

// CheckChallenges refuses the plans when a challenge scene names none of
// ids, the challenges the server grades (scenes.Book.CheckChallenges).
func (s *Workshops) CheckChallenges(ids []string) error { return s.plans.CheckChallenges(ids) }

func submissionKey(code, id, who string) string { return code + ".ch." + id + ".s." + who }

// parseSubmissionKey reads the challenge and the attendee of a key.
func parseSubmissionKey(code, key string) (id, who string, ok bool) {
	return parseWatchedKey(key, code+".ch.", ".s.")
}

// subEntry is a submission as the hub keeps it, with its key's revision
// (the board's order of submissions).
type subEntry struct {
	sub record.Submission
	rev uint64
}

// sceneChallenge is the challenge of the room's scene, or a 409 naming
// why there is none.
func (s *Workshops) sceneChallenge(st *record.State) (string, error) {
	if p := s.plans.Plan(st.Plan); p != nil && st.Scene >= 0 && st.Scene < len(p.Scenes) && p.Scenes[st.Scene].Challenge != "" {
		return p.Scenes[st.Scene].Challenge, nil
	}
	return "", httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "scene", Msg: "the room's scene is no challenge: submissions open when the instructor moves to a plan's challenge scene"})
}

func (s *Workshops) submissionRoutes(r chi.Router) {
	r.Post("/r/{code}/submit", s.submitChallenge)
	r.Get("/r/{code}/leaderboard", s.leaderboardStatus)
	r.Post("/r/{code}/challenge/spotlight", s.spotlightSubmission)
	r.Post("/r/{code}/challenge/reveal", s.revealReference)
}

// pickRequest is the instructor's spotlight of a submission: its
// nickname (?who= or {"who"}).
type pickRequest struct {
	Tab string `json:"tab"`
	Who string `json:"who"`
}

// spotlightSubmission puts an attendee's latest submission in the
// spotlight: its settings become the room's run (every following page
// shows them) and the panel marks it, with a link comparing it with the
// reference. 404 naming the submissions there are for an unknown one.
func (s *Workshops) spotlightSubmission(w http.ResponseWriter, r *http.Request) {
	code, rec, req, ok := roomRequest[pickRequest](s, w, r, true)
	if !ok {
		return
	}
	if q := r.URL.Query().Get("who"); q != "" {
		req.Who = q
	}
	id, err := s.sceneChallenge(&rec.State)
	var sub challenge.Submission
	if err == nil {
		sub, err = s.rooms.submissionOf(r.Context(), code, id, req.Who)
	}
	var cfg map[string]float64
	if err == nil {
		cfg, err = scenes.Controls(sub, nil) // a challenge scene is a preset's
	}
	var rev uint64
	if err == nil {
		_, rev, err = s.rooms.updateState(r.Context(), code, "challenge spotlight", func(st *record.State) error {
			if st.Cfg == nil {
				st.Cfg = map[string]float64{}
			}
			maps.Copy(st.Cfg, cfg)
			pick := record.ChallengePick{Who: req.Who, Settings: sub}
			if st.Pick != nil {
				pick.Reference = st.Pick.Reference
			}
			st.Pick = &pick
			return nil
		})
	}
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindBadValue)
		return
	}
	s.resyncTab(code, req.Tab, rev)
	writeJSON(w, r, http.StatusOK, map[string]any{"who": req.Who, "settings": sub})
}

// revealReference shows the challenge's reference settings on every page.
func (s *Workshops) revealReference(w http.ResponseWriter, r *http.Request) {
	code, rec, req, ok := roomRequest[pickRequest](s, w, r, true)
	if !ok {
		return
	}
	_, err := s.sceneChallenge(&rec.State)
	var rev uint64
	if err == nil {
		_, rev, err = s.rooms.updateState(r.Context(), code, "challenge reference", func(st *record.State) error {
			if st.Pick == nil {
				st.Pick = &record.ChallengePick{}
			}
			st.Pick.Reference = true
			return nil
		})
	}
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindConflict)
		return
	}
	s.resyncTab(code, req.Tab, rev)
	writeJSON(w, r, http.StatusOK, map[string]bool{"reference": true})
}

// submissionOf is the latest submission of the attendee nicknamed who.
func (set *roomSet) submissionOf(ctx context.Context, code, id, who string) (challenge.Submission, error) {
	h, err := set.open(ctx, code, "")
	if err != nil {
		return nil, err
	}
	defer h.release("")
	h.waitSubs(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	var nicks []string
	for _, e := range h.subs[id] {
		if e.sub.Nick == who {
			return e.sub.Settings, nil
		}
		nicks = append(nicks, e.sub.Nick)
	}
	slices.Sort(nicks)
	return nil, httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "who", Msg: fmt.Sprintf("%q has submitted nothing to this challenge (submitted: %s)", httperr.Truncate(who, 40), strings.Join(nicks, ", "))})
}

// submitChallenge grades an attendee's settings for the room's challenge
// and keeps them as that attendee's latest: 201 with its line on the
// board; 403 without the room's identity, 409 off a challenge scene, 422
// naming a bad setting and its range (or the budget), 429 too soon after
// the browser's last, 503 past the room's bound.
func (s *Workshops) submitChallenge(w http.ResponseWriter, r *http.Request) {
	code, rec, ok := s.roomAPI(w, r, false)
	if !ok {
		return
	}
	id, err := s.sceneChallenge(&rec.State)
	who := rec.Attendee(r, code)
	switch {
	case err != nil:
	case s.grader == nil:
		err = httperr.WithKind(httperr.KindNotFound, errors.New("this server grades no challenges"))
	case who == "":
		err = errNoAttendee(code)
	default:
		// The hub counts the room's submissions (this replica may serve
		// none of its streams yet); a full board is refused before
		// grading, so it wastes no core.
		var hub *roomHub
		if hub, err = s.rooms.open(r.Context(), code, ""); err == nil {
			defer hub.release("")
			hub.waitSubs(r.Context())
			err = s.rooms.roomForSubmission(code, id, who)
		}
	}
	var e challenge.Entry
	var sub challenge.Submission
	if err == nil {
		var c *challenge.Challenge
		var g *challenge.Grade
		if c, sub, g, err = s.grader.Grade(r, id); err == nil {
			e = c.NewEntry(record.Nickname(who), 0, g)
			from := rec.SourceTag(code, addrlimit.Key(s.rooms.clientAddr(r)))
			kept := record.NewSubmission(e.Who, sub, e, from)
			var rev uint64
			if rev, err = s.rooms.putSubmission(r.Context(), code, id, who, kept); err == nil {
				// The recording keeps it too: a replay and the handout
				// show the board as it stood.
				st := rec.State
				s.rooms.timeline.AppendSubmission(r.Context(), code, rev, st, s.plans.EntryScene(&st), record.RecordedSubmission(id, who, kept))
			}
		}
	}
	if r.Context().Err() != nil {
		return // the attendee left
	}
	if err == nil {
		s.lab.Log.Info("room submission", "room", code, "challenge", id, "passed", e.Passed, "goals", e.Total)
	}
	if r.Header.Get("Datastar-Request") == "true" {
		// The page's form (through Datastar): the answer is the panel's
		// status line, the grade or the refusal in words; the board moves
		// through the room's stream.
		text := fmt.Sprintf("Graded on the hidden seeds: %d of %d goals hold on every one. You are on the board.", e.Passed, e.Total)
		if err != nil {
			text = httperr.Text(roomError(err))
		}
		_ = datastar.NewSSE(w, r).PatchElementTempl(templates.RoomChallengeStatus(text, err == nil))
		return
	}
	if b, busy := errors.AsType[*budget.Busy](err); busy {
		budget.WriteBusy(w, b)
		return
	}
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	writeJSON(w, r, http.StatusCreated, boardLine{Who: e.Who, Passed: e.Passed, Total: e.Total, X: record.Finite(e.X), Y: record.Finite(e.Y), Settings: sub})
}

// roomForSubmission refuses a new attendee's submission when the room
// keeps Limits.Submissions others' for the challenge (as this replica's
// hub has seen them); an attendee's next one always fits.
func (set *roomSet) roomForSubmission(code, id, who string) error {
	h := set.hub(code)
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.subs[id]
	if _, mine := subs[who]; mine || len(subs) < set.lim.Submissions {
		return nil
	}
	return httperr.WithKind(httperr.KindFull, &httperr.FieldError{Field: "submission", Msg: fmt.Sprintf("the room keeps %d attendees' submissions to this challenge, as many as it takes (allowed %d)", len(subs), set.lim.Submissions)})
}

// putSubmission stores who's latest submission to challenge id: the
// revision its key took.
func (set *roomSet) putSubmission(ctx context.Context, code, id, who string, sub record.Submission) (uint64, error) {
	if err := set.roomForSubmission(code, id, who); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	b, _ := json.Marshal(sub)
	rev, err := set.bus.KV.Put(ctx, submissionKey(code, id, who), b)
	if err != nil {
		return 0, busError("the submission", err)
	}
	return rev, nil
}

// watchSubmissions follows the room's submissions on the bus; each wakes
// the room's streams (at most every answerWakeEvery), so the leaderboard
// moves on every page.
func (h *roomHub) watchSubmissions(ctx context.Context) {
	defer h.markSubsReady()
	if err := h.watchKV(ctx, h.code+".ch.*.s.*", h.markSubsReady, h.takeSubmission); err != nil {
		h.set.log.Warn("room bus: cannot watch the submissions", "room", h.code, "err", err)
	}
}

// waitSubs waits until the watch has given the submissions already on
// the bus (at most roombus.Timeout).
func (h *roomHub) waitSubs(ctx context.Context) {
	select {
	case <-h.subsReady:
	case <-ctx.Done():
	case <-time.After(roombus.Timeout):
	}
}

func (h *roomHub) markSubsReady() { h.markClosed(h.subsReady) }

// takeSubmission keeps one submission (or forgets a deleted one).
func (h *roomHub) takeSubmission(e jetstream.KeyValueEntry) {
	id, who, ok := parseSubmissionKey(h.code, e.Key())
	if !ok {
		return
	}
	var sub record.Submission
	put := e.Operation() == jetstream.KeyValuePut && json.Unmarshal(e.Value(), &sub) == nil
	h.mu.Lock()
	defer h.mu.Unlock()
	keepKeyed(&h.subs, id, who, subEntry{sub, e.Revision()}, put)
	h.wakeAnswersLocked()
}

// boardLine is one submission on the leaderboard as the API answers it.
type boardLine struct {
	Who    string `json:"who"`
	Passed int    `json:"passed"`
	Total  int    `json:"total"`
	// X and Y are the worst values on the main goals; null for never
	// (a host not ejected in time on some seed).
	X        *float64          `json:"x"`
	Y        *float64          `json:"y"`
	Front    bool              `json:"front,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	// mine marks the asking attendee's own (the panel's "you").
	mine bool
}

// leaderboard is the hub's submissions to challenge id, ranked, once
// the watch has given those already on the bus (or roombus.Timeout has
// passed).
func (h *roomHub) leaderboard(ctx context.Context, id string) []boardLine {
	h.waitSubs(ctx)
	lines, _ := h.challengeBoard(id, "")
	return lines
}

// challengeBoard is the hub's submissions to challenge id, ranked (challenge.Rank:
// goals passed, the front, the main goals), each with its settings, and
// attendee who's own ("" for none) marked and its settings.
func (h *roomHub) challengeBoard(id, who string) ([]boardLine, challenge.Submission) {
	h.mu.Lock()
	subs := maps.Clone(h.subs[id])
	h.mu.Unlock()
	out := rankBoard(subs, who)
	var mine challenge.Submission
	if who != "" {
		mine = subs[who].sub.Settings
	}
	return out, mine
}

// rankBoard ranks submissions, by attendee (the hub's ids, or the
// recording's tags), each's rev its order (challenge.Rank: goals passed,
// the front, the main goals), attendee who's own ("" for none) marked.
func rankBoard(subs map[string]subEntry, who string) []boardLine {
	entries := make([]challenge.Entry, 0, len(subs))
	byWho := make(map[string]record.Submission, len(subs))
	for w, e := range subs {
		// Ranked by the attendee: two attendees may share a nickname.
		en := e.sub.Entry(int(e.rev))
		en.Who = w
		entries = append(entries, en)
		byWho[w] = e.sub
	}
	out := []boardLine{}
	for _, e := range challenge.Rank(entries) {
		sub := byWho[e.Who]
		out = append(out, boardLine{Who: sub.Nick, Passed: e.Passed, Total: e.Total, X: sub.X, Y: sub.Y, Front: e.Front, Settings: sub.Settings, mine: who != "" && e.Who == who})
	}
	return out
}

// leaderboardStatus answers the room's challenge and its board, as
// anyone in the room may see it.
func (s *Workshops) leaderboardStatus(w http.ResponseWriter, r *http.Request) {
	code, rec, ok := s.roomAPI(w, r, false)
	if !ok {
		return
	}
	id, err := s.sceneChallenge(&rec.State)
	if err != nil {
		httperr.Write(w, err, httperr.KindConflict)
		return
	}
	hub, err := s.rooms.open(r.Context(), code, "")
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	defer hub.release("")
	out := struct {
		Challenge string      `json:"challenge"`
		Main      []string    `json:"main,omitempty"`
		Entries   []boardLine `json:"entries"`
	}{Challenge: id, Entries: hub.leaderboard(r.Context(), id)}
	if s.grader != nil {
		if c, ok := s.grader.Challenge(id); ok {
			m := c.MainGoals()
			out.Main = slices.Clone(m[:])
		}
	}
	writeJSON(w, r, http.StatusOK, out)
}
