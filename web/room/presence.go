package room

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"outlierlab/web/room/scenes"
	"outlierlab/web/roombus"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// The progress board: each attendee's stream puts what the instructor's
// board shows (nickname, following or away, the lesson steps done as the
// engine checks them at the attendee's cursor, the last answer) under
// CODE.p.<hash> in the rooms' bucket when it changes, at most once per
// presenceEvery for the steps; it deletes it when the stream ends. Every replica that
// serves the room watches CODE.p.* and keeps the board in memory; the
// instructor's stream renders it (#room-board).

const presenceEvery = time.Second

// presence is one attendee on the board.
type presence struct {
	Nick   string   `json:"nick"`
	Follow bool     `json:"follow"`
	Done   []string `json:"done,omitempty"`
	Answer string   `json:"answer,omitempty"`
}

func presenceKey(code, who string) string {
	sum := sha256.Sum256([]byte(who))
	return code + ".p." + hex.EncodeToString(sum[:12])
}

// putPresence writes the attendee's line of the board when it changed
// (and presenceEvery has passed since the last write). The write goes to
// the bus beside the stream, never in its way: a bus slow to answer (a
// node down, an election) must not hold up the attendee's redraws. One
// write at a time; a change met while one is under way is written at the
// stream's next wake.
func (w *roomWatch) putPresence(sess *lab.Session) {
	if w.role != "follow" || w.who == "" {
		return
	}
	p := presence{Nick: record.Nickname(w.who)}
	p.Follow = tieOf(sess).following()
	// A step once done stays done, as on the attendee's page ("Try this
	// (2/6)"), which counts the steps the learner did, not the ones the
	// cursor still satisfies.
	for _, id := range sess.StepsDone(w.s.lab.Now()) {
		if !slices.Contains(w.pDone, id) {
			w.pDone = append(w.pDone, id)
		}
	}
	p.Done = slices.Clone(w.pDone)
	w.hub.mu.Lock()
	if q := w.hub.now.rec.State.Question; q != nil {
		p.Answer = w.hub.answers[q.ID][w.who].Answer
	}
	w.hub.mu.Unlock()
	b, _ := json.Marshal(p)
	if string(b) == w.pSent {
		return
	}
	// Following or away and the answer go at once; steps done (which
	// change as playback runs) at most once per presenceEvery.
	var old presence
	_ = json.Unmarshal([]byte(w.pSent), &old)
	now := w.s.lab.Now()
	if w.pSent != "" && old.Follow == p.Follow && old.Answer == p.Answer && now.Sub(w.pAt) < presenceEvery {
		return
	}
	if !w.pWriting.CompareAndSwap(false, true) {
		return
	}
	w.pSent, w.pAt = string(b), now
	w.pWrites.Add(1)
	go func() {
		defer w.pWrites.Done()
		defer w.pWriting.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), roombus.Timeout)
		defer cancel()
		if _, err := w.s.rooms.bus.KV.Put(ctx, presenceKey(w.hub.code, w.who), b); err != nil {
			w.s.lab.Log.Warn("room bus: presence", "room", w.hub.code, "err", err)
		}
	}()
}

// dropPresence takes the attendee off the board when its stream ends,
// after the last write (which would otherwise put it back).
func (w *roomWatch) dropPresence() {
	if w == nil || w.pSent == "" {
		return
	}
	w.pWrites.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), roombus.Timeout)
	defer cancel()
	_ = w.s.rooms.bus.KV.Delete(ctx, presenceKey(w.hub.code, w.who))
}

// watchPresence keeps the board of the room from the bus and wakes the
// instructor's streams (boardNext) at each change.
func (h *roomHub) watchPresence(ctx context.Context) {
	err := h.watchKV(ctx, h.code+".p.*", nil, func(e jetstream.KeyValueEntry) {
		var p presence
		put := e.Operation() == jetstream.KeyValuePut && json.Unmarshal(e.Value(), &p) == nil
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.board == nil {
			h.board = map[string]presence{}
		}
		if put {
			h.board[e.Key()] = p
		} else {
			delete(h.board, e.Key())
		}
		h.boardChangedLocked()
	})
	if err != nil {
		h.set.log.Warn("room bus: cannot watch the board", "room", h.code, "err", err)
	}
}

// boardChangedLocked counts a change of the board and wakes the
// instructor's streams. Callers hold h.mu.
func (h *roomHub) boardChangedLocked() {
	h.boardGen++
	close(h.boardNext)
	h.boardNext = make(chan struct{})
}

// watchKV follows key (a key or a pattern of the room's bucket) until ctx
// ends or the watch's updates close, handing each change to take; current
// (if any) is called each time the bucket's current values have all come
// (nats.go marks it with a nil entry). It answers the error of a watch
// that could not start. The room's state, its answers and its board are
// each followed through it.
func (h *roomHub) watchKV(ctx context.Context, key string, current func(), take func(jetstream.KeyValueEntry)) error {
	w, err := h.set.bus.KV.Watch(ctx, key)
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return nil
			}
			if e == nil {
				if current != nil {
					current()
				}
				continue
			}
			take(e)
		}
	}
}

// boardView is the instructor's board: counts, then one row per attendee.
func (h *roomHub) boardView() view.RoomBoard {
	h.mu.Lock()
	defer h.mu.Unlock()
	var v view.RoomBoard
	steps := map[string]int{}
	for _, p := range h.board {
		v.Rows = append(v.Rows, view.RoomBoardRow{Nick: p.Nick, Follow: p.Follow, Done: len(p.Done), Answer: p.Answer})
		if p.Follow {
			v.Following++
		} else {
			v.Away++
		}
		for _, id := range p.Done {
			steps[id]++
		}
	}
	sort.Slice(v.Rows, func(i, j int) bool { return v.Rows[i].Nick < v.Rows[j].Nick })
	if d := h.now.lesson; d != nil {
		for _, st := range d.Steps {
			v.Steps = append(v.Steps, view.RoomBoardStep{ID: st.ID, Done: steps[st.ID]})
		}
	}
	v.Total = len(v.Rows)
	v.IDs = h.idsViewLocked()
	return v
}

// Board is closed at the board's next change for a stream that
// shows the board (the instructor's, with the key); nil, never ready, for
// the others.
func (w *roomWatch) Board() <-chan struct{} {
	if w == nil || !w.keyOK {
		return nil
	}
	w.hub.mu.Lock()
	defer w.hub.mu.Unlock()
	return w.hub.boardNext
}

// sendBoard patches the instructor's board when it changed.
func (w *roomWatch) sendBoard(sse *datastar.ServerSentEventGenerator) error {
	if !w.keyOK {
		return nil
	}
	w.hub.mu.Lock()
	gen := w.hub.boardGen
	w.hub.mu.Unlock()
	cur := w.hub.current()
	st := &cur.rec.State
	scenes := scenes.BoardKey(st)
	if gen == w.boardGen && scenes == w.boardScenes && st.IDsPerAddress == w.boardIDs && w.boardSent {
		return nil
	}
	w.boardGen, w.boardScenes, w.boardIDs, w.boardSent = gen, scenes, st.IDsPerAddress, true
	if err := sse.PatchElementTempl(templates.RoomBoardPanel(w.hub.boardView())); err != nil {
		return fmt.Errorf("board: %w", err)
	}
	if sc := w.s.plans.Board(st); sc != nil {
		if err := sse.PatchElementTempl(templates.RoomBoardScenes(sc)); err != nil {
			return fmt.Errorf("board: %w", err)
		}
	}
	return nil
}
