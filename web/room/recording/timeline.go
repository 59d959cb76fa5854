package recording

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
)

// Timeline is the rooms' recordings on the bus: every change of a room's
// state is appended to a JetStream stream, one subject per room, kept as
// long as the room (roombus). The room appends; the player, the export and
// the handout read.
type Timeline struct {
	bus *roombus.Bus
	now func() time.Time
	log *slog.Logger
	// pace holds back a room's "state" entries past their rate (pace.go).
	pace pacer
}

// NewTimeline is the recordings on bus, stamped by now.
func NewTimeline(bus *roombus.Bus, now func() time.Time, log *slog.Logger) *Timeline {
	return &Timeline{bus: bus, now: now, log: log, pace: pacer{rooms: map[string]*roomPace{}}}
}

// EntryID is the id of room code's timeline entry for the state its key
// took at revision rev (the bucket's sequence: one write), as kind.
func EntryID(code string, rev uint64, kind string) string {
	return code + "." + strconv.FormatUint(rev, 10) + "." + kind
}

// maxTimeline bounds the entries one recording returns.
const maxTimeline = 20000

// Append appends a state of the room to its timeline: the state the
// room's key took at revision rev, as kind. A failure is logged: the
// workshop goes on without that entry.
//
// A publication whose answer is lost (a server gone just after it stored
// the entry, the answer late past the attempt's deadline) is retried, and
// used to be recorded twice (issue 33: five doubled entries in one
// workshop). The entry carries an id, the room, revision and kind
// (EntryID): JetStream stores a message once per id within the stream's
// Duplicates window (roombus, two minutes), and a retry comes within the
// write's deadline. rev 0 (none known) sends no id.
//
// A room's "state" entries (its instructor tab's moves) are recorded at
// most statesPerSecond a second after a burst of statesBurst: one past it
// is held back, replaced by the next, and recorded when the pace allows,
// unless an entry of the room came after it (pace.go).
func (t *Timeline) Append(ctx context.Context, code string, rev uint64, kind string, st record.State, scene *record.EntryScene) {
	e := record.TimelineEntry{TMs: t.now().UnixMilli(), Kind: kind, State: st, Scene: scene}
	rp, now := t.pace.admit(t, code, rev, &e)
	if now {
		t.publishIn(ctx, rp, code, rev, &e, false)
	}
}

// AppendSubmission appends an attendee's graded submission (kind
// "submission"), made while the room was in state st, to its timeline:
// rev is the revision its key took on the bus (one write, one entry).
func (t *Timeline) AppendSubmission(ctx context.Context, code string, rev uint64, st record.State, scene *record.EntryScene, sub *record.EntrySubmission) {
	e := record.TimelineEntry{TMs: t.now().UnixMilli(), Kind: "submission", State: st, Scene: scene, Submission: sub}
	rp, _ := t.pace.admit(t, code, rev, &e) // not a "state": published now
	t.publishIn(ctx, rp, code, rev, &e, false)
}

// publish appends entry e of room code, the state its key took at
// revision rev, to its timeline.
func (t *Timeline) publish(ctx context.Context, code string, rev uint64, e *record.TimelineEntry) {
	kind := e.Kind
	b, err := json.Marshal(e)
	if err == nil {
		var opts []jetstream.PublishOpt
		if rev != 0 {
			opts = append(opts, jetstream.WithMsgID(EntryID(code, rev, kind)))
		}
		_, err = roombus.Retry(ctx, t.bus, func(ctx context.Context) (*jetstream.PubAck, error) {
			return t.bus.JS.Publish(ctx, roombus.TimelineSubject+code, b, opts...)
		})
	}
	if err != nil {
		t.log.Warn("room bus: recording", "room", code, "kind", kind, "err", err)
	}
}

// Read reads a room's timeline, oldest first, up to its last entry
// as the stream's leader has it: the reading consumer may live on a copy
// that is still catching up (a server just back), so it waits for that
// entry rather than stopping at the first empty batch. Through a leader
// election (a NATS node killed or back) creating the consumer or a fetch
// meets no responders for a moment, as the other bus calls do: the read
// then goes on from the entry after the last one it has, on a new
// consumer, until the request's deadline.
func (t *Timeline) Read(ctx context.Context, code string) ([]record.TimelineEntry, error) {
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	last, err := t.Last(ctx, code)
	if err != nil || last == 0 {
		return nil, err
	}
	var out []record.TimelineEntry
	var seq uint64 // the stream sequence of the last entry read
	for len(out) < maxTimeline && seq < last {
		n, err := t.read(ctx, code, seq, last, &out)
		seq = max(seq, n)
		if err == nil {
			continue
		}
		if !roombus.Transient(err) || ctx.Err() != nil {
			return out, fmt.Errorf("room bus: the recording of room %s, read up to entry %d of %d: %w", code, seq, last, err)
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	return out, nil
}

// read appends to out the room's entries after sequence from, on
// one ordered consumer, until it has entry last, the timeline is full or
// an error; it answers the sequence of the last entry it appended.
func (t *Timeline) read(ctx context.Context, code string, from, last uint64, out *[]record.TimelineEntry) (uint64, error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{roombus.TimelineSubject + code}}
	if from > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from+1
	}
	cons, err := roombus.Retry(ctx, t.bus, func(ctx context.Context) (jetstream.Consumer, error) {
		return t.bus.Timeline.OrderedConsumer(ctx, cfg)
	})
	if err != nil {
		return from, err
	}
	seq := from
	for len(*out) < maxTimeline && seq < last {
		if ctx.Err() != nil {
			return seq, ctx.Err()
		}
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return seq, err
		}
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil || md.Sequence.Stream <= seq {
				continue // a repeat after a consumer's reset
			}
			seq = md.Sequence.Stream
			var e record.TimelineEntry
			if json.Unmarshal(m.Data(), &e) == nil {
				*out = append(*out, e)
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return seq, err
		}
	}
	return seq, nil
}

// Last is the bus's sequence of the room's last recorded entry (0
// for none): it changes whenever an entry is added.
func (t *Timeline) Last(ctx context.Context, code string) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	m, err := roombus.Retry(ctx, t.bus, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		return t.bus.Timeline.GetLastMsgForSubject(ctx, roombus.TimelineSubject+code)
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("room bus: %w", err)
	}
	return m.Sequence, nil
}
