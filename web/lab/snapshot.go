package lab

import (
	"time"

	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
)

// Snapshot is a tab's state as a value (a Session's at one moment, or one
// a room or a page's signals describe; not in package tabstate, as
// it holds a lesson and lessonbook imports tabstate): what a room shares of its
// instructor's tab and a recording keeps of each move. Its inputs are
// checked (In, their Run, the Lesson they belong to, nil in the free lab);
// Step is the lesson step whose scenario is loaded; Predicted, whether the
// learner answered the lesson's prediction; QuestionHold, the frames
// before the moment a room's open question asks about (0: none). A cursor
// is computed from it without a session (CursorAt).
type Snapshot struct {
	In           tabstate.Inputs
	Run          *tabstate.Run
	Lesson       *lessonbook.Doc
	Step         string
	Playback     tabstate.Playback // its Hold is computed (playback), not taken
	Predicted    bool
	QuestionHold int
}

// playback is the state's playback on its run: held at the lesson's pause
// until the learner answers, or at the question's moment when that comes
// first, the anchor within both.
func (st Snapshot) playback() tabstate.Playback {
	pb := st.Playback
	pb.Hold = lessonHold(st.Lesson, st.Predicted, st.Run)
	if q := st.QuestionHold; q > 0 && (pb.Hold == 0 || q < pb.Hold) {
		pb.Hold = q // the room waits before the moment its question asks about
	}
	pb.Anchor = min(pb.Anchor, len(st.Run.Frames))
	if pb.Hold > 0 {
		pb.Anchor = min(pb.Anchor, pb.Hold)
	}
	return pb
}

// CursorAt is the state's cursor at now.
func (st Snapshot) CursorAt(now time.Time) int {
	return st.playback().CursorAt(now, len(st.Run.Frames))
}

// Left is how many frames playback still reveals from now: to the hold
// when it stops there, else to the run's end.
func (st Snapshot) Left(now time.Time) int {
	pb := st.playback()
	end := len(st.Run.Frames)
	if pb.Holding() {
		end = pb.Hold
	}
	return end - pb.CursorAt(now, len(st.Run.Frames))
}

// lessonHold is the frames up to a lesson's pause_at, none past it (the
// decision log must not show the answer before the question), on the
// scenario its prediction is about, until the learner answers; 0 when
// there is nothing to wait for.
func lessonHold(d *lessonbook.Doc, predicted bool, run *tabstate.Run) int {
	if d == nil || predicted {
		return 0
	}
	p := d.Predict
	if p.PauseAt <= 0 || p.Question == "" || run.Preset != d.PresetFor(p.BeforeStep) {
		return 0
	}
	hold := 0
	for _, f := range run.Frames {
		if f.TMs > int64(p.PauseAt) {
			break
		}
		hold++
	}
	return hold
}

// State is the tab's state (without QuestionHold: a room keeps its own
// question).
func (s *Session) State() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{In: s.in, Run: s.runLocked(), Lesson: s.lesson, Step: s.step, Playback: s.pb, Predicted: s.predicted}
}

// Follow puts the tab on st, a room's state, and has its streams redraw
// (the settings' signals are the room's to patch); gen is the session's
// generation after it (Gen). It reports false if the
// tab shows another lesson (or a lesson where the room has the free lab):
// a page cannot become another, and the state is not applied.
func (s *Session) Follow(st Snapshot) (gen uint64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Other settings on the same scenario: the instructor's slider, as
	// far as a follower can tell (a drag owes the tables: Session.slid).
	slid := st.Lesson == s.lesson && st.Run.Preset == s.preset && st.Step == s.step && st.In.Key() != s.in.Key()
	if !s.followLocked(st) {
		return s.gen, false
	}
	s.touch()
	s.slid = slid
	return s.gen, true
}

// FollowPage puts the tab on st as Follow does, st's page included
// (another lesson, or the free lab): the room's stream patches the page
// in place to it, and the tab's streams then redraw everything, the
// settings panel too.
func (s *Session) FollowPage(st Snapshot) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lesson = st.Lesson
	s.followLocked(st)
	s.inputsGen++
	s.touch()
	return s.gen
}

func (s *Session) followLocked(st Snapshot) bool {
	if st.Lesson != s.lesson {
		return false
	}
	if st.Run.Preset != s.preset || st.Step != s.step {
		s.inputsGen++ // another panel of controls: the stream re-renders it
	}
	s.setRun(st.In, st.Run)
	s.step, s.notice, s.predicted = st.Step, "", st.Predicted
	s.pb = st.playback()
	s.watchFrom = s.pb.Anchor // the room's run, watched from where its cursor was placed
	return true
}

// Gen counts the session's changes that need a full redraw.
func (s *Session) Gen() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// Touch has every stream on the tab wake up and redraw.
func (s *Session) Touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch()
}

// Tab is the tab's id.
func (s *Session) Tab() string { return s.tab }

// ControlSignals are the page's settings signals for the tab's run, which
// a room patches after its state was applied (the sliders move).
func (s *Session) ControlSignals() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return controlSignals(s.runLocked(), s.lesson)
}

// StepsDone are the ids of the tab's lesson steps done at now, if the run
// is still in the cache (a room's board is not worth a rebuild); nil in
// the free lab.
func (s *Session) StepsDone(now time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, run := s.lesson, s.run.Value()
	if d == nil || run == nil {
		return nil
	}
	var done []string
	for _, st := range d.Statuses(run, s.watchedFrom(now), s.cursorAt(now)) {
		if st.Done {
			done = append(done, st.ID)
		}
	}
	return done
}

// A Tie is a tab's place in a room. The room keeps it in the tab's
// session, under its own lock; the lab holds it and never looks inside.
type Tie interface{ RoomCode() string }

// Tie is the tab's tie, made by bind the first time it is asked for (the
// session may be new, or rebuilt after an eviction): a nil Tie from bind
// is a tab in no room, asked again at its next request.
func (s *Session) Tie(bind func() (Tie, error)) (Tie, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tie != nil {
		return s.tie, nil
	}
	t, err := bind()
	if err == nil {
		s.tie = t
	}
	return t, err
}

// TieOf is the tab's tie, nil for a tab in no room (or not yet bound).
func (s *Session) TieOf() Tie {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tie
}
