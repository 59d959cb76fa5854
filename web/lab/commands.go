package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/engine/scenario"
	"outlierlab/web/csp"
	"outlierlab/web/httperr"
	"outlierlab/web/lessonbook"
	"outlierlab/web/tabid"
	"outlierlab/web/tabrelay"
	"outlierlab/web/tabstate"
)

// Commands are short POSTs that change a tab's session and return at once
// (204); the tab's stream notices the change and redraws. A bad value is a
// 4xx whose body names the field and the allowed range, and it is also
// shown in the page (the stream renders the session's notice), since
// Datastar drops the body of an error answer.

// command handles POST /lab/cmd/{verb}.
func (s *Lab) command(w http.ResponseWriter, r *http.Request) {
	verb := chi.URLParam(r, "verb")
	apply, ok := verbs[verb]
	if !ok {
		httperr.Write(w, httperr.WithKind(httperr.KindNotFound, fmt.Errorf("%q is not a command (allowed %s)", verb, strings.Join(VerbNames(), ", "))), httperr.KindNotFound)
		return
	}
	if !tabrelay.Forwarded(r) && !s.Sessions.CmdLimit.Allow(s.PeerAddr(r), s.Now()) {
		TooMany(w, "commands")
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	var sig TabSignals
	if !readTab(w, r, &sig, body) {
		return
	}
	// Checked here, then again by the holder (the request's cookie goes
	// with it): a command another browser sent is never forwarded.
	how := s.forward(w, r, sig.Tab, sig.Conn, body)
	if how == answered {
		return
	}
	sess, ok := s.tabSession(w, r, &sig, false)
	if !ok {
		return
	}
	if sig.Predicted {
		// The page remembers an answer from an earlier visit.
		sess.answer(s.Now())
	}
	s.redraws.commandArrived(sess.tab)
	if err := s.inRoom(r, sess, sig.Room, verb, body, func() error { return apply(s, sess, &sig) }); err != nil {
		// A run of the request's inputs that fails is the request's fault.
		sess.refuse(httperr.Shown(w, err, httperr.KindBadValue))
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	if how == orphaned {
		tellReconnect(w, r)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// readBody reads a command's or a stream's body (its signals), up to
// MaxBody; it answers the request itself (413, 400) when it cannot.
func (s *Lab) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			err = httperr.WithKind(httperr.KindTooLarge, fmt.Errorf("request body is larger than %d bytes", s.MaxBody))
		} else {
			err = httperr.WithKind(httperr.KindMalformed, fmt.Errorf("cannot read the request body: %w", err))
		}
		httperr.Write(w, err, httperr.KindMalformed)
		return nil, false
	}
	return body, true
}

// readTab reads the tab's signals from a request's body into sig and
// checks its tab id: one the lab issues (400 otherwise) and issued to the
// request's browser (403 otherwise: web/tabid). A refused request
// touches no session. It answers the request itself and returns false
// when it refuses.
func readTab(w http.ResponseWriter, r *http.Request, sig *TabSignals, body []byte) bool {
	err := json.Unmarshal(body, sig)
	if err != nil {
		err = httperr.WithKind(httperr.KindMalformed, fmt.Errorf("body: not a JSON object of signals: %w", err))
	} else {
		err = tabid.Check(r, sig.Tab)
	}
	if err != nil {
		httperr.Write(w, err, httperr.KindMalformed)
		return false
	}
	return true
}

// tabSession finds or rebuilds the session of the tab readTab checked,
// for a stream (counted in, see SessionFor) or a command; when it cannot
// it answers the request itself (4xx naming the problem) and returns
// false.
func (s *Lab) tabSession(w http.ResponseWriter, r *http.Request, sig *TabSignals, stream bool) (*Session, bool) {
	sess, err := s.SessionFor(sig, tabid.Browser(r), s.PeerAddr(r), stream)
	switch {
	case errors.Is(err, errTooManyTabs):
		TooMany(w, "new tabs")
	case errors.Is(err, errSessionFull) && !stream:
		tellReload(w, r)
	case err != nil:
		httperr.Write(w, err, httperr.KindBadValue)
	default:
		return sess, true
	}
	return nil, false
}

// errTooManyTabs: the address opened new tabs faster than the limit.
// errSessionFull: the server holds so many streaming tabs that a session
// rebuilt for this one could not be kept; a command on it would be
// acknowledged and lost, so the page is told to reload instead.
var (
	errTooManyTabs = errors.New("too many new tabs from your address")
	errSessionFull = httperr.WithKind(httperr.KindFull, errors.New("the lab is full: reload the page to try again"))
)

// TooMany answers 429 with what was limited and when to try again.
func TooMany(w http.ResponseWriter, what string) {
	w.Header().Set("Retry-After", "10")
	httperr.Write(w, httperr.Errorf(httperr.KindTooMany, "too many %s from your address: slow down and try again in a few seconds", what), httperr.KindTooMany)
}

// tellReload answers a command whose session is lost with a Datastar
// event that reloads the page: its address (the permalink) or its lesson
// brings the tab back in a fresh session, and nothing is acknowledged
// that no stream would show.
func tellReload(w http.ResponseWriter, r *http.Request) {
	sse := datastar.NewSSE(w, r)
	_ = csp.Run(sse, "location.reload()")
}

// SessionFor finds the tab's session, or rebuilds it from the signals the
// request carries (a new tab, or one whose session expired or lived on a
// server that restarted), for browser, the request's identity: a tab id
// not issued to it is refused (403, web/tabid), and nothing is found,
// made or changed.
// With stream set, the session comes with that stream counted (the caller
// uncounts it when the stream ends), so that it is never evicted from
// under its stream, not even between its creation and the stream's start.
func (s *Lab) SessionFor(sig *TabSignals, browser, addr string, stream bool) (*Session, error) {
	if err := tabid.CheckForm(sig.Tab); err != nil {
		return nil, err
	}
	if err := tabid.Owned(sig.Tab, browser); err != nil {
		return nil, err
	}
	if sess := s.Sessions.Get(sig.Tab); sess != nil {
		if stream && sess.openStream(sig.Seq) {
			s.catchUpSignals(sess, sig)
		}
		return sess, nil
	}
	if addr != "" && !s.Sessions.newLim.Allow(addr, s.Now()) {
		return nil, errTooManyTabs
	}
	st, err := s.startOf(sig)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	sess := st.session(sig.Tab, sig.Seq, stream, s.Runs, now)
	if kept := s.Sessions.put(sess, now); kept != nil {
		if kept != sess && stream { // another request added the tab first
			kept.countStream(1)
		}
		return kept, nil
	}
	return nil, errSessionFull
}

// signalStart is what a page's signals say a tab starts from: its
// inputs and their run, its lesson and step, its cursor (when the page
// sent one) and speed. One parse for a new session (SessionFor) and for
// a room started from a page (SnapshotFor).
type signalStart struct {
	in        tabstate.Inputs
	run       *tabstate.Run
	lesson    *lessonbook.Doc
	step      string
	predicted bool
	speed     tabstate.Speed
	cursor    int
	placed    bool // the page sent a cursor
}

// startOf reads a tab's start from its signals, each bad value refused
// naming its field.
func (s *Lab) startOf(sig *TabSignals) (signalStart, error) {
	var st signalStart
	if err := checkNewTabPreset(sig.Preset); err != nil {
		return st, err
	}
	in := tabstate.Inputs{Preset: sig.Preset}
	if in.Preset == "" {
		in.Preset = tabstate.DefaultPreset
	}
	if sig.Lesson != "" {
		var err error
		if st.lesson, err = s.Lessons.Lesson(sig.Lesson, sig.Step); err != nil {
			return st, err
		}
		in = st.lesson.Inputs(sig.Step)
		st.step, st.predicted = sig.Step, sig.Predicted
	}
	vals, err := tabstate.ParseControlValues(sig.Cfg)
	if err != nil {
		return st, err
	}
	in = in.With(vals)
	if sig.Inject != "" {
		if in.Inject, err = tabstate.NormalInject(sig.Inject); err != nil {
			return st, err
		}
	}
	if st.run, err = s.Runs.Get(in); err != nil {
		return st, err
	}
	st.in = in
	if sig.Cursor != nil {
		if st.cursor, err = parseCursor(sig.Cursor, len(st.run.Frames)); err != nil {
			return st, err
		}
		st.placed = true
	}
	st.speed = tabstate.Speeds[0]
	if sp, ok := tabstate.LookupSpeed(sig.Speed); ok {
		st.speed = sp
	}
	return st, nil
}

// SnapshotFor is the state of the tab the signals name, for browser (a
// tab id not issued to it is refused, as in SessionFor): its session's
// when the tab has one, else the state the signals describe. Nothing is
// stored: a room started from a page (POST /rooms) needs the page's
// state, not a session of its own.
func (s *Lab) SnapshotFor(sig *TabSignals, browser string) (Snapshot, error) {
	if sig.Tab != "" {
		if err := tabid.CheckForm(sig.Tab); err != nil {
			return Snapshot{}, err
		}
		if err := tabid.Owned(sig.Tab, browser); err != nil {
			return Snapshot{}, err
		}
		if sess := s.Sessions.Get(sig.Tab); sess != nil {
			return sess.State(), nil
		}
	}
	st, err := s.startOf(sig)
	if err != nil {
		return Snapshot{}, err
	}
	pb := tabstate.Playback{Speed: st.speed}
	if st.placed {
		pb = pb.At(st.cursor, s.Now(), len(st.run.Frames))
	}
	// As Session.rehold: before the learner answers, the cursor stands no
	// later than the lesson's pause for its prediction.
	if h := lessonHold(st.lesson, st.predicted, st.run); h > 0 {
		pb.Anchor = min(pb.Anchor, h)
	}
	return Snapshot{In: st.in, Run: st.run, Lesson: st.lesson, Step: st.step, Playback: pb, Predicted: st.predicted}, nil
}

// catchUpSignals brings a session that missed the page's latest slider
// moves up to the page's settings: a stream that comes back to a replica
// it left (behind a round-robin proxy, after a restart elsewhere) finds
// the session it had there, older than the page, whose moves another
// replica applied meanwhile. The page's signals are then the truth; a
// setting they carry that is refused leaves the session as it was.
func (s *Lab) catchUpSignals(sess *Session, sig *TabSignals) {
	vals, err := tabstate.ParseControlValues(sig.Cfg)
	if err != nil {
		return
	}
	_ = rerun(s, sess, sess.catchUp(sig.Seq, vals), 0)
}

// verb applies one command to a session. It returns an error when the
// command's input is bad, of the kind that says the answer's status
// (httperr/errors.go); the session is then unchanged.
type verb func(s *Lab, sess *Session, sig *TabSignals) error

var verbs = map[string]verb{
	"set":      cmdSet,
	"play":     cmdPlay,
	"pause":    cmdPause,
	"step":     cmdStep,
	"back":     cmdBack,
	"scrub":    cmdScrub,
	"speed":    cmdSpeed,
	"reset":    cmdReset,
	"preset":   cmdPreset,
	"lesson":   cmdLesson,
	"answer":   cmdAnswer,
	"inject":   cmdInject,
	"uninject": cmdUninject,
	"rejoin":   cmdRejoin, // a follower back to its room (Rooms.Rejoin)
}

// VerbNames are the commands, sorted, for the error that names them.
func VerbNames() []string { return slices.Sorted(maps.Keys(verbs)) }

// IsVerb reports whether name is one of the commands.
func IsVerb(name string) bool { _, ok := verbs[name]; return ok }

// cmdSet changes settings: the run is redone from t = 0 with the new
// inputs and the stream redraws up to the same cursor.
func cmdSet(s *Lab, sess *Session, sig *TabSignals) error {
	vals, err := tabstate.ParseControlValues(sig.Cfg)
	if err != nil {
		return err
	}
	in, ok := sess.settings(sig.Seq, vals)
	if !ok {
		return nil // an older slider position that arrived late
	}
	// A slider post overtaken while its run was built is dropped.
	return rerun(s, sess, in, sig.Seq)
}

// cmdInject makes the host the page chose (the injectHost signal) fail
// from the cursor's time to the end of the run, the scenario's own way: one
// more entry in the tab's inject input, the run redone from t = 0 and the
// cursor left where it is, so the next step shows what the detector makes
// of it (design.md: inject a fault live, predict the next tick).
func cmdInject(s *Lab, sess *Session, sig *TabSignals) error {
	in, atMs := sess.inputsAt(s.Now())
	host := strings.TrimSpace(sig.InjectHost)
	one, err := scenario.ParseInjections(host + "@0s")
	if err != nil || len(one) != 1 || strings.ContainsAny(host, ",@") {
		return &httperr.FieldError{Field: "inject", Msg: fmt.Sprintf("%q is not a host (allowed h0–h%d)", httperr.Truncate(host, 20), len(sess.runOf().Hosts)-1)}
	}
	one[0].At = time.Duration(atMs) * time.Millisecond
	list := one[0].String()
	if in.Inject != "" {
		list = in.Inject + "," + list
	}
	if in.Inject, err = tabstate.NormalInject(list); err != nil {
		return err
	}
	return rerun(s, sess, in, 0)
}

// cmdUninject removes one injected fault (the injectDrop signal names its
// entry, "h3@60s") and redoes the run, the cursor kept.
func cmdUninject(s *Lab, sess *Session, sig *TabSignals) error {
	in := sess.inputs()
	ins, _ := scenario.ParseInjections(in.Inject) // normalised when it was set
	drop, err := scenario.ParseInjections(sig.InjectDrop)
	k := -1
	if err == nil && len(drop) == 1 {
		k = slices.IndexFunc(ins, func(x scenario.Injection) bool { return x.String() == drop[0].String() })
	}
	if k < 0 {
		active := in.Inject
		if active == "" {
			active = "none"
		}
		return &httperr.FieldError{Field: "inject", Msg: fmt.Sprintf("%q is not an injected fault (injected: %s)", httperr.Truncate(sig.InjectDrop, 40), active)}
	}
	in.Inject = scenario.FormatInjections(slices.Delete(ins, k, k+1))
	return rerun(s, sess, in, 0)
}

// rerun replaces the tab's inputs with in, redone from t = 0, and keeps
// the cursor (and playback) where it is, unless a slider post newer than
// seq (0: any) came while the run was built (Session.rerun). The page's
// inject signal follows at the stream's redraw.
func rerun(s *Lab, sess *Session, in tabstate.Inputs, seq int64) error {
	began := s.Now()
	run, err := s.Runs.Get(in)
	if err != nil {
		return err
	}
	sess.rerun(in, run, seq, began, s.Now())
	return nil
}

// pendingSettings applies the settings a playback command carries when
// the page moved a slider since its last slider post (its seq is ahead of
// the session's): the slider posts at most every 120 ms, and a Play, Step
// or scrub pressed inside that time was meant for the new settings. Run on
// the old ones, the learner would watch the wrong run, and a lesson step
// watching the cursor pass its window after the change would need a second
// Play. The slider's own post, arriving after, finds the same inputs and
// changes nothing (Session.rerun). Settings the lab refuses (a number
// typed out of range: its own post was refused, and the page says so)
// do not stop the command: it moves the run the tab has.
func pendingSettings(s *Lab, sess *Session, sig *TabSignals) {
	if sess.behind(sig.Seq) {
		_ = cmdSet(s, sess, sig)
	}
}

func cmdPlay(s *Lab, sess *Session, sig *TabSignals) error {
	pendingSettings(s, sess, sig)
	sess.play(s.Now())
	return nil
}

func cmdPause(s *Lab, sess *Session, _ *TabSignals) error {
	sess.move(0, s.Now())
	return nil
}

func cmdStep(s *Lab, sess *Session, sig *TabSignals) error {
	pendingSettings(s, sess, sig)
	sess.move(1, s.Now())
	return nil
}

func cmdBack(s *Lab, sess *Session, sig *TabSignals) error {
	pendingSettings(s, sess, sig)
	sess.move(-1, s.Now())
	return nil
}

// cmdScrub pauses at the "cursor" signal: the number of frames shown.
func cmdScrub(s *Lab, sess *Session, sig *TabSignals) error {
	pendingSettings(s, sess, sig)
	return sess.scrub(sig.Cursor, s.Now())
}

// cmdSpeed changes the playback speed from the current frame on.
func cmdSpeed(s *Lab, sess *Session, sig *TabSignals) error {
	sp, ok := tabstate.LookupSpeed(sig.Speed)
	if !ok {
		return &httperr.FieldError{Field: "speed", Msg: fmt.Sprintf("%q is not a speed (allowed 1, 4, 16, instant)", sig.Speed)}
	}
	sess.setSpeed(sp, s.Now())
	return nil
}

// cmdReset goes back to the starting settings, paused at t = 0: the
// preset's own, or on a lesson page what the lesson (or the loaded step)
// starts from.
func cmdReset(s *Lab, sess *Session, _ *TabSignals) error {
	in, step := sess.startInputs()
	return loadInputs(s, sess, in, step)
}

// cmdPreset switches the tab to another preset, with its own settings. A
// lesson page loads its scenarios through its steps instead.
func cmdPreset(s *Lab, sess *Session, sig *TabSignals) error {
	if sess.lessonOf() != nil {
		return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "preset", Msg: "a lesson page loads its scenarios with its steps' buttons"})
	}
	if _, ok := scenario.Lookup(sig.Preset); !ok {
		return httperr.WithKind(httperr.KindNotFound, tabstate.UnknownPreset("preset", sig.Preset))
	}
	return loadInputs(s, sess, tabstate.Inputs{Preset: sig.Preset}, "")
}

// cmdLesson loads what a lesson's step starts from (the "step" signal; ""
// is the lesson's own start): the step's scenario, or the lesson's with
// its start settings, paused at t = 0.
func cmdLesson(s *Lab, sess *Session, sig *TabSignals) error {
	d := sess.lessonOf()
	if d == nil {
		return httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "lesson", Msg: "this tab is not a lesson page"})
	}
	if err := d.CheckStep(sig.Step); err != nil {
		return err
	}
	return loadInputs(s, sess, d.Inputs(sig.Step), sig.Step)
}

// cmdAnswer records that the learner answered the lesson's prediction
// (the command handler already did, from the "predicted" signal): playback
// held for it goes on.
func cmdAnswer(s *Lab, sess *Session, _ *TabSignals) error {
	sess.answer(s.Now())
	return nil
}

// loadInputs replaces the tab's inputs, paused at t = 0; the page's
// controls follow.
func loadInputs(s *Lab, sess *Session, in tabstate.Inputs, step string) error {
	run, err := s.Runs.Get(in)
	if err != nil {
		return err
	}
	sess.load(in, run, step, s.Now())
	return nil
}
