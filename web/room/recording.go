package room

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"outlierlab/web/room/record"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/csp"
	"outlierlab/web/httperr"
	"outlierlab/web/roombus"
	"outlierlab/web/tabstate"
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
//	GET /r/{code}/recording       the player (replay.go) and the timeline,
//	                              each entry a lab link at its state
//	GET /r/{code}/recording.json  the timeline as JSON (instructor key)

// maxTimeline bounds the entries one recording returns.
const maxTimeline = 20000

// Recording is what /r/CODE/recording.json exports.
type Recording struct {
	Room    string                 `json:"room"`
	Entries []record.TimelineEntry `json:"entries"`
}

// record appends a state of the room to its timeline. A failure is
// logged: the workshop goes on without that entry.
func (set *roomSet) record(ctx context.Context, code, kind string, st record.State) {
	b, err := json.Marshal(record.TimelineEntry{TMs: set.s.Now().UnixMilli(), Kind: kind, State: st, Scene: set.s.entrySceneOf(&st)})
	if err == nil {
		_, err = roombus.Retry(ctx, func(ctx context.Context) (*jetstream.PubAck, error) {
			return set.bus.JS.Publish(ctx, roombus.TimelineSubject+code, b)
		})
	}
	if err != nil {
		set.log.Warn("room bus: recording", "room", code, "kind", kind, "err", err)
	}
}

// recording reads a room's timeline, oldest first, up to its last entry
// as the stream's leader has it: the reading consumer may live on a copy
// that is still catching up (a server just back), so it waits for that
// entry rather than stopping at the first empty batch. Through a leader
// election (a NATS node killed or back) creating the consumer or a fetch
// meets no responders for a moment, as the other bus calls do: the read
// then goes on from the entry after the last one it has, on a new
// consumer, until the request's deadline.
func (set *roomSet) recording(ctx context.Context, code string) ([]record.TimelineEntry, error) {
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	last, err := set.lastEntry(ctx, code)
	if err != nil || last == 0 {
		return nil, err
	}
	var out []record.TimelineEntry
	var seq uint64 // the stream sequence of the last entry read
	for len(out) < maxTimeline && seq < last {
		n, err := set.readTimeline(ctx, code, seq, last, &out)
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

// readTimeline appends to out the room's entries after sequence from, on
// one ordered consumer, until it has entry last, the timeline is full or
// an error; it answers the sequence of the last entry it appended.
func (set *roomSet) readTimeline(ctx context.Context, code string, from, last uint64, out *[]record.TimelineEntry) (uint64, error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{roombus.TimelineSubject + code}}
	if from > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from+1
	}
	cons, err := roombus.Retry(ctx, func(ctx context.Context) (jetstream.Consumer, error) {
		return set.bus.Timeline.OrderedConsumer(ctx, cfg)
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

// lastEntry is the bus's sequence of the room's last recorded entry (0
// for none): it changes whenever an entry is added.
func (set *roomSet) lastEntry(ctx context.Context, code string) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	m, err := roombus.Retry(ctx, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		return set.bus.Timeline.GetLastMsgForSubject(ctx, roombus.TimelineSubject+code)
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("room bus: %w", err)
	}
	return m.Sequence, nil
}

// recordingJSON handles GET /r/{code}/recording.json (instructor key).
func (s *Workshops) recordingJSON(w http.ResponseWriter, r *http.Request) {
	// One rule for the recording, page and export alike: anyone with the
	// room's code may read it, as they may follow the room. It holds only
	// what the room was shown (states, questions, reveals; an answer only
	// from its reveal on), never the key or who answered what.
	code, _, ok := s.roomAPI(w, r, false)
	if !ok {
		return
	}
	entries, err := s.rooms.recording(r.Context(), code)
	if err != nil {
		// The bus, not the request: the page answers the same.
		httperr.Plain(w, http.StatusServiceUnavailable, "cannot read the recording: "+err.Error())
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="workshop-`+code+`.json"`)
	writeJSON(w, r, http.StatusOK, Recording{Room: code, Entries: entries})
}

// recordingRoutes are the recording's routes: the page with its player,
// the player's stream and transport, and the JSON export.
func (s *Workshops) recordingRoutes(r chi.Router) {
	r.Get("/r/{code}/recording", s.recordingPage)
	r.Get("/r/{code}/recording.json", s.recordingJSON)
	r.Get("/r/{code}/recording/stream", s.recordingStream)
	r.Post("/r/{code}/recording/{verb}", s.recordingCommand)
}

// recordingPage handles GET /r/{code}/recording: the player (the room's
// lab in the projector view, driven by the recording: replay.go),
// and under it the timeline, each entry a link to the lab at its state
// (the lab redraws it exactly). ?speed= picks the player's speed.
func (s *Workshops) recordingPage(w http.ResponseWriter, r *http.Request) {
	code, _, ok := s.roomFor(w, r)
	if !ok {
		return
	}
	sp, err := lookupReplaySpeed(orDefault(r.URL.Query().Get("speed"), defaultReplaySpeed))
	if err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	entries, err := s.rooms.recording(r.Context(), code)
	if err != nil {
		httperr.Plain(w, http.StatusServiceUnavailable, "cannot read the recording: "+err.Error())
		return
	}
	v := view.RecordingPlayer{Layout: s.Pages.Layout("Recording of workshop "+code, "", true), Code: code, Speed: sp.Name}
	p, err := s.newPlayer(code, entries, replaySignals{RecSpeed: sp.Name})
	if err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	for _, sp := range replaySpeeds {
		v.Speeds = append(v.Speeds, view.Speed{Value: sp.Name, Label: sp.Label, Title: replaySpeedTitle(sp)})
	}
	v.End = fmtElapsed(p.end)
	for i := range entries {
		e := &entries[i]
		row := p.nowView(i)
		row.Link, row.State = s.entryLink(e), describeEntry(e)
		if p.end > 0 {
			row.Left = recPct(p.off[i], p.end)
		} else {
			row.Left = "0"
		}
		v.Entries = append(v.Entries, row)
	}
	if len(entries) > 0 {
		lab, err := s.recordingLab(code, &entries[0], sp.Name)
		if err != nil {
			s.Log.Error("recording: page", "room", code, "err", err)
			httperr.Plain(w, http.StatusInternalServerError, "cannot show the recording: "+httperr.Text(err))
			return
		}
		v.Lab, v.Lesson = lab.lab, lab.lesson
		if lab.lab != nil {
			csp.AllowTabScripts(w, lab.lab.Tab)
		} else {
			csp.AllowTabScripts(w, lab.lesson.Lab.Tab)
		}
	}
	s.Pages.Render(w, r, http.StatusOK, templates.RecordingPage(v))
}

func replaySpeedTitle(sp replaySpeed) string {
	if sp.X == 0 {
		return "every entry, one after the other, as fast as possible"
	}
	return fmt.Sprintf("%s seconds of the workshop each second", sp.Name)
}

// recordingLab is the lab the player drives, at the recording's first
// entry: the room's lab or lesson in the projector view, its stream the
// player's.
type recLab struct {
	lab    *view.Lab
	lesson *view.Lesson
}

func (s *Workshops) recordingLab(code string, e *record.TimelineEntry, speed string) (recLab, error) {
	in, d, err := e.State.Inputs(s.Lessons)
	if err != nil {
		return recLab{}, err
	}
	stream := "/r/" + code + "/recording/stream"
	if d != nil {
		v, err := s.LessonView(d)
		if err != nil {
			return recLab{}, err
		}
		v.Lab.Signals = withReplaySignals(v.Lab.Signals, speed)
		v.Lab.View, v.Lab.StreamURL = view.Projector, stream
		return recLab{lesson: &v}, nil
	}
	run, err := s.Runs.Get(in)
	if err != nil {
		return recLab{}, err
	}
	lab, err := s.LabView(tabstate.LabLink{Preset: e.State.Preset, Values: e.State.Cfg, Inject: in.Inject, TMs: tabstate.CursorMs(run, e.State.CursorAt(in, run, time.UnixMilli(e.TMs)))})
	if err != nil {
		return recLab{}, err
	}
	lab.Signals = withReplaySignals(lab.Signals, speed)
	lab.View, lab.StreamURL, lab.Link = view.Projector, stream, false
	return recLab{lab: &lab}, nil
}

// withReplaySignals adds the player's signals to a lab's initial ones.
func withReplaySignals(signals, speed string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(signals), &m); err != nil {
		m = map[string]json.RawMessage{}
	}
	m["recSpeed"], _ = json.Marshal(speed)
	m["recPlaying"] = json.RawMessage("false")
	m["recAt"] = json.RawMessage("0")
	m["recPct"] = json.RawMessage(`"0"`)
	m["recClock"] = json.RawMessage(`"00:00"`)
	m["recEntry"] = json.RawMessage("0")
	b, _ := json.Marshal(m)
	return string(b)
}

// entryLink is the lab's permalink at an entry's state, its cursor where
// the room's was then ("" for a lesson room: the lesson page has no
// permalink of a step's cursor).
func (s *Workshops) entryLink(e *record.TimelineEntry) string {
	in, d, err := e.State.Inputs(s.Lessons)
	if err != nil || d != nil {
		return ""
	}
	run, err := s.Runs.Get(in)
	if err != nil {
		return ""
	}
	c := e.State.CursorAt(in, run, time.UnixMilli(e.TMs))
	return tabstate.LabURL(run, c)
}

// DescribeEntry is an entry in words, for the page and `room replay`.
func DescribeEntry(raw json.RawMessage) (string, error) {
	var e record.TimelineEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", err
	}
	return describeEntry(&e), nil
}

func describeEntry(e *record.TimelineEntry) string {
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
	if sc := e.Scene; sc != nil {
		s = fmt.Sprintf("scene %d of %d (%s), ", sc.N, sc.Of, sc.ID) + s
	}
	if len(st.Cfg) > 0 {
		names := slices.Sorted(maps.Keys(st.Cfg))
		set := make([]string, len(names))
		for i, n := range names {
			set[i] = n + "=" + strconv.FormatFloat(st.Cfg[n], 'f', -1, 64)
		}
		s += ", settings " + strings.Join(set, " ")
	}
	if st.Inject != "" {
		s += ", faults " + st.Inject
	}
	if q := st.Question; q != nil && (e.Kind == "question" || e.Kind == "reveal") {
		s += "; question " + q.Text
		if q.Revealed {
			bars := make([]string, len(q.Hist))
			for i, b := range q.Hist {
				bars[i] = fmt.Sprintf("%s %d", b.Answer, b.N)
			}
			s += fmt.Sprintf(" — engine: %s; room: %s", q.Answer, strings.Join(bars, ", "))
		}
	}
	if st.Lock {
		s += "; locked"
	}
	return s + exploreState(st)
}

func fmtElapsed(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// narrate is entry e in words, as the player shows it, from what changed
// since prev (nil for the first): "Instructor set max_ejection_percent to
// 34", "Question: Is h5 ejected at 60 s? — revealed: no (19 yes / 11
// no)". at is the room's cursor at an entry, as a time ("40 s").
func narrate(prev, e *record.TimelineEntry, at func(*record.TimelineEntry) string) string {
	if words, ok := kindWords(e, at); ok {
		return words
	}
	if prev == nil {
		return describeEntry(e)
	}
	did := changes(&prev.State, &e.State, func() string { return at(e) })
	if len(did) == 0 {
		return "Instructor's page at " + at(e) + " (no change)"
	}
	return "Instructor " + strings.Join(did, ", ")
}

// kindWords is the sentence of an entry whose kind says it all (a start,
// a question, a reveal, a summon, a lock, a spotlight).
func kindWords(e *record.TimelineEntry, at func(*record.TimelineEntry) string) (string, bool) {
	if words, ok := record.SceneWords(e, at); ok {
		return words, true
	}
	if words, ok := record.ExploreWords(e); ok {
		return words, true
	}
	st := &e.State
	q := st.Question
	switch e.Kind {
	case "start":
		return "The workshop started on " + record.WhereOf(st) + ", " + record.PlayOf(st) + " at " + at(e), true
	case "question":
		if q != nil {
			return "Question: " + q.Text + " — the room waits before " + tabstate.FormatMs(q.AtMs) + " for the answers", true
		}
	case "reveal":
		if q != nil {
			return "Question: " + q.Text + " — revealed: " + q.Answer + " (" + histWords(q.Hist) + ")", true
		}
	case "summon":
		return "Instructor brought everyone back to the room", true
	case "lock":
		if st.Lock {
			return "Instructor locked the room: attendees follow and cannot break away", true
		}
		return "Instructor unlocked the room", true
	case "spotlight":
		switch sp := st.Spot; {
		case sp == nil || sp.Host == "" && sp.To == 0:
			return "Instructor cleared the spotlight", true
		case sp.Host != "":
			return "Spotlight on host " + sp.Host, true
		default:
			return "Spotlight on " + tabstate.FormatMs(int64(sp.From*1000)) + "–" + tabstate.FormatMs(int64(sp.To*1000)), true
		}
	}
	return "", false
}

// changes are what the instructor did from state ps to st, in words;
// at is the moment of st.
func changes(ps, st *record.State, at func() string) []string {
	var did []string
	switch {
	case st.Lesson != ps.Lesson:
		did = append(did, "moved the room to "+record.WhereOf(st))
	case st.Step != ps.Step:
		step := st.Step
		if step == "" {
			step = "the lesson's own scenario"
		}
		did = append(did, "went to step "+step)
	case st.Preset != ps.Preset:
		did = append(did, "switched to preset "+st.Preset)
	}
	for _, k := range sortedKeys(st.Cfg, ps.Cfg) {
		v, ok := st.Cfg[k]
		old, had := ps.Cfg[k]
		switch {
		case !ok:
			did = append(did, "reset "+k+" to its default")
		case !had || v != old:
			did = append(did, fmt.Sprintf("set %s to %g", k, v))
		}
	}
	if st.Inject != ps.Inject {
		if st.Inject == "" {
			did = append(did, "removed the injected faults")
		} else {
			did = append(did, "set the injected faults to "+st.Inject)
		}
	}
	if st.Speed != ps.Speed {
		did = append(did, "set the speed to "+record.SpeedWords(st.Speed))
	}
	switch {
	case st.Playing && !ps.Playing:
		did = append(did, "pressed play at "+at())
	case !st.Playing && ps.Playing:
		did = append(did, "paused at "+at())
	case !st.Playing && st.Anchor != ps.Anchor:
		// Paused, the anchor is the cursor (a scrub, a step); playing, a
		// new anchor only restarts the clock (a speed change).
		did = append(did, "moved the cursor to "+at())
	}
	if st.Predicted && !ps.Predicted {
		did = append(did, "answered the lesson's prediction")
	}
	return did
}

// histWords is a histogram in words: "19 yes / 11 no".
func histWords(h []record.HistBar) string {
	if len(h) == 0 {
		return "no answers"
	}
	parts := make([]string, len(h))
	for i, b := range h {
		if _, err := strconv.Atoi(b.Answer); err == nil {
			parts[i] = fmt.Sprintf("%d said %s", b.N, b.Answer) // "19 3" would read as one number
		} else {
			parts[i] = fmt.Sprintf("%d %s", b.N, b.Answer)
		}
	}
	return strings.Join(parts, " / ")
}

func sortedKeys(a, b map[string]float64) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]float64{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// exploreState is a running explore timer in words ("" for none).
func exploreState(st *record.State) string {
	if x := st.Explore; x != nil {
		return fmt.Sprintf("; a %d-minute explore to %s", x.Minutes, time.UnixMilli(x.EndMs).UTC().Format("15:04:05 UTC"))
	}
	return ""
}
