package room

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/httperr"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
)

// A poll's answers on the bus: one key per attendee and question,
// CODE.q.QID.a.ATTENDEE, holding that attendee's answer, and at the reveal
// a mark, CODE.q.QID.closed. They were one document of every answer,
// rewritten by compare-and-set at each answer and capped, as every value
// of the bucket, at roombus.MaxValue (64 KiB): after about 861 answers no
// answer fitted and every one waited roombus.Timeout for a 500 (issue 19,
// defect 4). A key each costs one put per answer, whatever the count; two
// replicas never contend; an attendee's second answer is a second put on
// its own key, so it replaces the first and the count stays one per
// identity (a poll lets you change your mind until the reveal, as the
// page's buttons invite).
//
// Every put to the bucket gets a revision from one sequence, so the reveal
// is exact without a lock: it puts the mark, then counts the answers whose
// revision is below the mark's; an answer checks for the mark after its
// put, and one that finds a mark older than itself was too late and is
// told so (409) rather than silently left out of the histogram.
//
// Each replica's hub watches CODE.q.*.a.* and keeps the count, which the
// room's pages show as it rises; a question's keys are purged when the
// instructor opens the next one.

// maxAnswers bounds the answers to one question (the bucket is shared by
// every room): ten times a replica's default -max-attendees.
const maxAnswers = 10000

// answerWakeEvery is how often, at most, new answers wake the room's
// streams (roomWatch.Answers): 500 attendees answering within a second would
// otherwise wake 500 streams 500 times.
const answerWakeEvery = 200 * time.Millisecond

func answerKey(code, q, who string) string { return code + ".q." + q + ".a." + who }
func answersOf(code, q string) string      { return code + ".q." + q + ".a.*" }
func closedKey(code, q string) string      { return code + ".q." + q + ".closed" }

// parseAnswerKey reads the question and the attendee of an answer's key.
func parseAnswerKey(code, key string) (q, who string, ok bool) {
	return parseWatchedKey(key, code+".q.", ".a.")
}

// parseWatchedKey reads a watched key of a room, PREFIX OUTER SEP WHO
// (answers, submissions): its outer part and the attendee.
func parseWatchedKey(key, prefix, sep string) (outer, who string, ok bool) {
	rest, found := strings.CutPrefix(key, prefix)
	if !found {
		return "", "", false
	}
	outer, who, found = strings.Cut(rest, sep)
	return outer, who, found && outer != "" && who != "" && !strings.Contains(who, ".")
}

// busError names what failed on the bus: its timeout or the bucket's size
// (shared by every workshop on the bus), rather than the client's words.
func busError(what string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("room bus: %s: no answer within %v: %w", what, roombus.Timeout, err)
	case roombus.Full(err):
		return httperr.WithKind(httperr.KindFull, fmt.Errorf("room bus: %s: the workshops' bucket is full (shared by every workshop; keys expire 12 h after their last write): %w", what, err))
	}
	return fmt.Errorf("room bus: %s: %w", what, err)
}

// putAnswer stores who's answer to question q of the room, from the
// client address tagged from (record.SourceTag).
func (set *roomSet) putAnswer(ctx context.Context, code, q, who, answer, from string) error {
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	if n, mine := set.answerCount(code, q, who); n >= maxAnswers && !mine {
		return httperr.WithKind(httperr.KindFull, &httperr.FieldError{Field: "answer", Msg: fmt.Sprintf("the question has %d answers, as many as one question takes (allowed %d)", n, maxAnswers)})
	}
	b, _ := json.Marshal(record.Answer{Nick: record.Nickname(who), Answer: answer, From: from})
	rev, err := set.bus.KV.Put(ctx, answerKey(code, q, who), b)
	if err != nil {
		return busError("the answer", err)
	}
	e, err := set.bus.KV.Get(ctx, closedKey(code, q))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil
	case err != nil:
		return busError("the answer", err)
	case e.Revision() < rev:
		return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "question", Msg: "the answer has been revealed; answers are closed"})
	}
	return nil
}

// answerCount is the count of answers to q this replica's hub has seen,
// and whether who is among them (0, false where no hub serves the room).
func (set *roomSet) answerCount(code, q, who string) (int, bool) {
	h := set.hub(code)
	if h == nil {
		return 0, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, mine := h.answers[q][who]
	return len(h.answers[q]), mine
}

// closeAnswers puts question q's mark (or finds the one a concurrent
// reveal put) and reads the answers put before it.
func (set *roomSet) closeAnswers(ctx context.Context, code, q string) (map[string]record.Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	mark, err := set.bus.KV.Create(ctx, closedKey(code, q), []byte("{}"))
	if errors.Is(err, jetstream.ErrKeyExists) {
		var e jetstream.KeyValueEntry
		if e, err = set.bus.KV.Get(ctx, closedKey(code, q)); err == nil {
			mark = e.Revision()
		}
	}
	if err != nil {
		return nil, busError("closing the answers", err)
	}
	// The answers are read up to the mark itself, not up to the watch's
	// end of initial values: the watch's consumer may sit on a copy of
	// the bucket still catching up (a NATS node just back), whose initial
	// values lack answers the leader took; the mark comes after every
	// answer put before it, so once it is read they all were.
	w, err := set.bus.KV.WatchFiltered(ctx, []string{answersOf(code, q), closedKey(code, q)}, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, busError("reading the answers", err)
	}
	defer func() { _ = w.Stop() }()
	out := map[string]record.Answer{}
	for {
		select {
		case <-ctx.Done():
			return nil, busError("reading the answers", ctx.Err())
		case e := <-w.Updates():
			switch {
			case e == nil: // the copy's initial values: the mark may be yet to come
			case e.Key() == closedKey(code, q):
				if e.Revision() >= mark {
					return out, nil
				}
			default:
				var a record.Answer
				_, who, ok := parseAnswerKey(code, e.Key())
				if ok && e.Revision() < mark && json.Unmarshal(e.Value(), &a) == nil {
					out[who] = a
				}
			}
		}
	}
}

// dropAnswers purges question q's answers and mark from the bus: the
// instructor opened the next question, and the histogram of this one, if
// it was revealed, is on the room's state.
func (set *roomSet) dropAnswers(ctx context.Context, code, q string) {
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	js, err := jetstream.New(set.bus.Conn())
	if err == nil {
		var st jetstream.Stream
		if st, err = js.Stream(ctx, "KV_"+roombus.RoomBucket); err == nil {
			err = st.Purge(ctx, jetstream.WithPurgeSubject("$KV."+roombus.RoomBucket+"."+code+".q."+q+".>"))
		}
	}
	if err != nil {
		set.log.Warn("room bus: cannot drop a question's answers (they expire with the room)", "room", code, "question", q, "err", err)
	}
}

// watchAnswers follows the room's answers on the bus and wakes the room's
// streams' question panels (at most every answerWakeEvery): the count
// rises on every page.
func (h *roomHub) watchAnswers(ctx context.Context) {
	defer h.markAnswersReady()
	if err := h.watchKV(ctx, h.code+".q.*.a.*", h.markAnswersReady, h.takeAnswer); err != nil {
		h.set.log.Warn("room bus: cannot watch the answers", "room", h.code, "err", err)
	}
}

func (h *roomHub) markAnswersReady() { h.markClosed(h.answersReady) }

// markClosed closes a hub's ready channel once, however often its watch
// says so.
func (h *roomHub) markClosed(ready chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-ready:
	default:
		close(ready)
	}
}

// takeAnswer keeps one answer (or forgets a deleted one).
func (h *roomHub) takeAnswer(e jetstream.KeyValueEntry) {
	q, who, ok := parseAnswerKey(h.code, e.Key())
	if !ok {
		return
	}
	var a record.Answer
	put := e.Operation() == jetstream.KeyValuePut && json.Unmarshal(e.Value(), &a) == nil
	h.mu.Lock()
	defer h.mu.Unlock()
	keepKeyed(&h.answers, q, who, a, put)
	h.wakeAnswersLocked()
}

// keepKeyed puts v at (*m)[outer][inner], making the maps it needs, or
// with put false deletes it: a watched key's value (an answer, a
// submission) kept or forgotten.
func keepKeyed[V any](m *map[string]map[string]V, outer, inner string, v V, put bool) {
	if !put {
		delete((*m)[outer], inner)
		return
	}
	if *m == nil {
		*m = map[string]map[string]V{}
	}
	if (*m)[outer] == nil {
		(*m)[outer] = map[string]V{}
	}
	(*m)[outer][inner] = v
}

// wakeAnswersLocked wakes the room's streams' room parts at most every
// answerWakeEvery (an answer or a submission changed). Callers hold h.mu.
func (h *roomHub) wakeAnswersLocked() {
	if !h.answersWake {
		h.answersWake = true
		time.AfterFunc(answerWakeEvery, func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.answersWake = false
			close(h.answersNext)
			h.answersNext = make(chan struct{})
		})
	}
}

// Answers is closed at the next change of the room's answers (nil,
// never ready, for a stream in no room). An answer changes the question
// panel (its count, the attendee's own answer) and the board, not the
// lab: the stream sends the room's part and no redraw, or a room of 500
// answering would have every stream snapshot its session 500 times.
func (w *roomWatch) Answers() <-chan struct{} {
	if w == nil {
		return nil
	}
	w.hub.mu.Lock()
	defer w.hub.mu.Unlock()
	return w.hub.answersNext
}

// keepAnswersLocked forgets the answers to questions other than the
// room's current one (purged from the bus when it was opened), so a room
// that asks many questions holds one question's answers. Answers to a
// question the hub has not seen yet are kept: on a busy bus they can
// arrive before the state that asks it. Callers hold h.mu.
func (h *roomHub) keepAnswersLocked() {
	cur := ""
	if q := h.now.rec.State.Question; q != nil {
		cur = q.ID
	}
	for q := range h.answers {
		if q != cur && h.seen[q] {
			delete(h.answers, q)
		}
	}
	if cur != "" {
		if h.seen == nil {
			h.seen = map[string]bool{}
		}
		h.seen[cur] = true
	}
}

// answersNow is the hub's answers to q, once the watch has given those
// already on the bus (or roombus.Timeout has passed).
func (h *roomHub) answersNow(ctx context.Context, q string) map[string]record.Answer {
	select {
	case <-h.answersReady:
	case <-ctx.Done():
	case <-time.After(roombus.Timeout):
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]record.Answer, len(h.answers[q]))
	for who, a := range h.answers[q] {
		out[who] = a
	}
	return out
}
