package recording

import (
	"context"
	"fmt"
	"time"

	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// What a player's stream sends besides the lab's: the page when the
// entry moves it, the player's own bar and the room's parts.

// playerFollow is a player stream's Follow: the player's clock drives the
// tab's session, and the room's new entries are looked for every
// liveEvery while the stream lasts.
type playerFollow struct {
	s    *Recordings
	p    *recordingPlayer
	sent playerSent
	stop context.CancelFunc
	// release gives back the stream's place in its address's count.
	release func()
}

func (s *Recordings) followPlayer(ctx context.Context, p *recordingPlayer) *playerFollow {
	ctx, stop := context.WithCancel(ctx)
	f := &playerFollow{s: s, p: p, sent: playerSent{entry: -1}, stop: stop}
	go func() {
		live := time.NewTicker(liveEvery)
		defer live.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-live.C:
				s.followLive(ctx, p) // a new entry wakes the stream (p.changed)
			}
		}
	}()
	return f
}

// CatchUp applies the player's entry in force to the tab; the stream
// wakes when the player changes and at its next entry's moment.
func (f *playerFollow) CatchUp(sess *lab.Session) (<-chan struct{}, time.Time) {
	next, changed := f.p.catchUp(sess)
	return changed, next
}

func (f *playerFollow) Board() <-chan struct{} { return nil }

func (f *playerFollow) Answers() <-chan struct{} { return nil }

// Send patches what the player shows beside the lab: the entry in
// words, its question, the spotlight and the player's signals.
func (f *playerFollow) Send(sse *datastar.ServerSentEventGenerator, sess *lab.Session) error {
	if err := f.p.sendPage(sse, sess, &f.sent); err != nil {
		return err
	}
	return f.p.send(sse, &f.sent)
}

// sendPage patches the page's lab in place when the entry applied is on
// another page than it shows (pageGen): the lab the recording's page
// draws at that entry, for this tab, its signals patched in order (as
// web/room's repage does for a room's page).
func (p *recordingPlayer) sendPage(sse *datastar.ServerSentEventGenerator, sess *lab.Session, ps *playerSent) error {
	p.mu.Lock()
	gen, i, speed := p.pageGen, p.applied, p.speed.Name
	p.mu.Unlock()
	if gen == ps.page || i < 0 {
		return nil
	}
	ps.page = gen
	l, err := p.s.recordingLab(p.code, &p.entries[i], speed, sess.Tab(), true)
	if err != nil {
		return err
	}
	signals := ""
	if l.lesson != nil {
		signals = l.lesson.Lab.Signals
		err = sse.PatchElementTempl(templates.LessonLab(*l.lesson))
	} else {
		signals = l.lab.Signals
		err = sse.PatchElementTempl(templates.LabPanel(*l.lab))
	}
	if err != nil {
		return err
	}
	return sse.PatchSignals([]byte(signals))
}

func (f *playerFollow) Close() {
	f.stop()
	f.s.players.closePlayer(f.p)
	if f.release != nil {
		f.release()
	}
}

// playerSent is what one stream last sent of the player.
type playerSent struct {
	page    uint64 // the player's pageGen the page shows
	entry   int
	sig     replayPatch
	spot    record.SpotSignal
	spotSet bool
	q       string
	// board is the challenge panel sent (its entries, pick, reference).
	board string
}

// replayPatch is the player's signals as the stream patches them.
type replayPatch struct {
	RecAt      int64  `json:"recAt"`
	RecPct     string `json:"recPct"`
	RecClock   string `json:"recClock"`
	RecEntry   int    `json:"recEntry"`
	RecPlaying bool   `json:"recPlaying"`
	RecSpeed   string `json:"recSpeed"`
}

// send patches what the page shows of the player that changed since the
// last send: its signals (clock, progress, entry, playing, speed), the
// entry in words, the room's question and spotlight then.
func (p *recordingPlayer) send(sse *datastar.ServerSentEventGenerator, ps *playerSent) error {
	p.mu.Lock()
	v := p.posLocked(p.s.lab.Now())
	i := p.applied
	sig := replayPatch{RecAt: v, RecPct: recPct(v, p.end), RecClock: fmtElapsed(v), RecEntry: max(i, 0), RecPlaying: p.playing, RecSpeed: p.speed.Name}
	var e *record.TimelineEntry
	var now view.RecNow
	var upTo []record.TimelineEntry
	if i >= 0 {
		e = &p.entries[i]
		now = p.nowView(i)
		upTo = p.entries[:i+1] // extend appends: a prefix stays as it is
	}
	p.mu.Unlock()
	if e == nil {
		return nil
	}
	if i != ps.entry {
		ps.entry = i
		if err := sse.PatchElementTempl(templates.RecordingNow(now)); err != nil {
			return err
		}
		qv := recQuestionView(p.code, e.State.Question)
		if key := fmt.Sprintf("%+v", qv); key != ps.q {
			ps.q = key
			if err := sse.PatchElementTempl(templates.RecordingQuestion(qv)); err != nil {
				return err
			}
		}
		// The challenge panel shows the submissions recorded up to the
		// entry: a replay's board is the room's at that moment.
		board := view.RoomChallenge{Code: p.code}
		if b := p.s.rooms.Board(p.code, upTo); b != nil {
			board = *b
		}
		if key := fmt.Sprintf("%s|%v|%s|%s", board.ID, board.Entries, board.Spot, board.Reference); key != ps.board {
			ps.board = key
			if err := sse.PatchElementTempl(templates.RoomChallengePanel(board, nil)); err != nil {
				return err
			}
		}
	}
	type spotPatch struct {
		Spot record.SpotSignal `json:"spot"`
	}
	if sp := e.State.Spot.Signal(); !ps.spotSet || sp != ps.spot {
		ps.spot, ps.spotSet = sp, true
		if err := sse.MarshalAndPatchSignals(spotPatch{sp}); err != nil {
			return err
		}
	}
	// The clock shows whole seconds: an unchanged one is not sent again.
	cmp := sig
	cmp.RecAt = ps.sig.RecAt
	if cmp == ps.sig {
		return nil
	}
	ps.sig = sig
	return sse.MarshalAndPatchSignals(sig)
}

func recPct(v, end int64) string {
	if end <= 0 {
		return "100"
	}
	return fmt.Sprintf("%.1f", 100*float64(v)/float64(end))
}

// nowView is entry i in words, for the page. Callers hold mu.
func (p *recordingPlayer) nowView(i int) view.RecNow {
	var prev *record.TimelineEntry
	if i > 0 {
		prev = &p.entries[i-1]
	}
	e := &p.entries[i]
	at := func(*record.TimelineEntry) string {
		pe := p.prepare(i)
		run, ok := p.runOf(pe)
		if !pe.ok || !ok {
			return "an unknown moment"
		}
		return tabstate.FormatMs(tabstate.CursorMs(run, e.State.CursorAt(pe.in, run, time.UnixMilli(e.TMs))))
	}
	return view.RecNow{Index: i, Total: len(p.entries), At: fmtElapsed(p.off[i]), Kind: e.Kind, What: narrate(prev, e, at)}
}

// recQuestionView is the room's question as the player shows it (the
// recording keeps the histogram of a revealed one, not the count of an
// open one).
func recQuestionView(code string, q *record.Question) view.RoomQuestion {
	v := view.RoomQuestion{Code: code, Role: "projector"}
	if q == nil {
		return v
	}
	v.ID, v.Text, v.Choices, v.Revealed, v.Answer, v.Total = q.ID, q.Text, q.Choices, q.Revealed, q.Answer, q.Total
	v.Hist = record.AnswerBars(q.Hist)
	return v
}
