package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// A replayable workshop. Every change of a room's state (its start, the
// instructor's moves, questions, reveals with their histograms, Bring
// everyone here, Lock) is appended to a JetStream stream on the bus, one
// subject per room, kept as long as the room. The state is all a page
// needs: the engine is deterministic, so the same state redraws the same
// charts.
//
//	GET /r/{code}/recording       the timeline, each entry a lab link at its state
//	GET /r/{code}/recording.json  the timeline as JSON (instructor key)

const (
	timelineStream  = "outlierlab_timeline"
	timelineSubject = "olab.tl."
	// maxTimeline bounds the entries one recording returns.
	maxTimeline = 20000
)

// TimelineEntry is one entry of a room's recording: when (Unix ms), what
// (start, state, question, reveal, summon, lock) and the room's state
// after it (with the question, and at a reveal its histogram).
type TimelineEntry struct {
	TMs   int64     `json:"t"`
	Kind  string    `json:"kind"`
	State roomState `json:"state"`
}

// Recording is what /r/CODE/recording.json exports.
type Recording struct {
	Room    string          `json:"room"`
	Entries []TimelineEntry `json:"entries"`
}

// openTimeline creates or opens the recordings' stream.
func (b *Bus) openTimeline(ctx context.Context, ttl time.Duration, replicas int) error {
	st, err := b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        timelineStream,
		Description: "outlierlab workshop recordings: one subject per room, every change of its state",
		Subjects:    []string{timelineSubject + ">"},
		Storage:     jetstream.MemoryStorage, MaxAge: ttl, MaxBytes: busMaxBucket,
		MaxMsgSize: busMaxValue, Replicas: replicas, Discard: jetstream.DiscardOld,
	})
	if err != nil {
		return fmt.Errorf("room bus: cannot open the %s stream: %w", timelineStream, err)
	}
	b.timeline = st
	return nil
}

// record appends a state of the room to its timeline. A failure is
// logged: the workshop goes on without that entry.
func (set *roomSet) record(ctx context.Context, code, kind string, st roomState) {
	b, err := json.Marshal(TimelineEntry{TMs: set.s.now().UnixMilli(), Kind: kind, State: st})
	if err == nil {
		_, err = set.bus.js.Publish(ctx, timelineSubject+code, b)
	}
	if err != nil {
		set.log.Warn("room bus: recording", "room", code, "kind", kind, "err", err)
	}
}

// recording reads a room's timeline, oldest first.
func (set *roomSet) recording(ctx context.Context, code string) ([]TimelineEntry, error) {
	ctx, cancel := context.WithTimeout(ctx, busTimeout)
	defer cancel()
	cons, err := set.bus.timeline.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{timelineSubject + code}})
	if err != nil {
		return nil, fmt.Errorf("room bus: %w", err)
	}
	var out []TimelineEntry
	for len(out) < maxTimeline {
		batch, err := cons.FetchNoWait(500)
		if err != nil {
			return out, fmt.Errorf("room bus: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			var e TimelineEntry
			if json.Unmarshal(m.Data(), &e) == nil {
				out = append(out, e)
			}
		}
		if n == 0 {
			break
		}
	}
	return out, nil
}

// recordingJSON handles GET /r/{code}/recording.json (instructor key).
func (s *Server) recordingJSON(w http.ResponseWriter, r *http.Request) {
	code, _, ok := s.roomAPI(w, r, true)
	if !ok {
		return
	}
	entries, err := s.rooms.recording(r.Context(), code)
	if err != nil {
		writeError(w, err, kindInternal)
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="workshop-`+code+`.json"`)
	writeJSON(w, r, http.StatusOK, Recording{Room: code, Entries: entries})
}

// recordingPage handles GET /r/{code}/recording: the timeline, each entry
// a link to the lab at that state (the lab redraws it exactly).
func (s *Server) recordingPage(w http.ResponseWriter, r *http.Request) {
	code, _, ok := s.roomFor(w, r)
	if !ok {
		return
	}
	entries, err := s.rooms.recording(r.Context(), code)
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, "cannot read the recording: "+err.Error())
		return
	}
	v := view.RoomRecording{Layout: s.layout("Recording of workshop "+code, "", false), Code: code}
	var t0 int64
	for i, e := range entries {
		if i == 0 {
			t0 = e.TMs
		}
		v.Entries = append(v.Entries, view.RoomRecEntry{At: fmtElapsed(e.TMs - t0), Kind: e.Kind, What: describeEntry(&e), Link: s.entryLink(&e)})
	}
	s.render(w, r, http.StatusOK, templates.RoomRecordingPage(v))
}

// entryLink is the lab's permalink at an entry's state, its cursor where
// the room's was then ("" for a lesson room: the lesson page has no
// permalink of a step's cursor).
func (s *Server) entryLink(e *TimelineEntry) string {
	in, d, err := s.roomInputs(&e.State)
	if err != nil || d != nil {
		return ""
	}
	run, err := s.runs.get(in)
	if err != nil {
		return ""
	}
	c := roomCursor(&e.State, in, run, time.UnixMilli(e.TMs))
	return labURL(run, c)
}

// DescribeEntry is an entry in words, for the page and `room replay`.
func DescribeEntry(raw json.RawMessage) (string, error) {
	var e TimelineEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", err
	}
	return describeEntry(&e), nil
}

func describeEntry(e *TimelineEntry) string {
	st := &e.State
	where := "preset " + st.Preset
	if st.Lesson != "" {
		where = "lesson " + st.Lesson
		if st.Step != "" {
			where += " step " + st.Step
		}
	}
	play := "paused"
	if st.Playing {
		play = "playing ×" + st.Speed
	}
	s := fmt.Sprintf("%s, %s at frame %d", where, play, st.Anchor)
	if len(st.Cfg) > 0 {
		s += fmt.Sprintf(", settings %v", st.Cfg)
	}
	if st.Inject != "" {
		s += ", faults " + st.Inject
	}
	if q := st.Question; q != nil && (e.Kind == "question" || e.Kind == "reveal") {
		s += "; question " + q.Text
		if q.Revealed {
			s += fmt.Sprintf(" — engine: %s; room: %v", q.Answer, q.Hist)
		}
	}
	if st.Lock {
		s += "; locked"
	}
	return s
}

func fmtElapsed(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}
