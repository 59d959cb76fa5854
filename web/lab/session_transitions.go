package lab

import (
	"time"

	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
)

// A session's transitions: each takes the session's lock itself, changes
// what it owns and wakes its streams, so a command (commands.go) parses
// its signals, calls one of these and answers. A run is built before
// (Lab.Runs.Get, outside the lock: the stream keeps serving the old run
// meanwhile) and handed in.

// session is a new session of tab at st, the start its page's signals
// describe, numbered seq (the page's last slider post), with its stream
// counted in when stream is set; not yet in the store, so no other
// request sees it.
func (st signalStart) session(tab string, seq int64, stream bool, runs *tabstate.RunCache, now time.Time) *Session {
	s := newSession(tab, st.in, st.run, runs, now)
	if stream {
		s.streams = 1
	}
	s.seq = seq
	if st.placed {
		s.setCursor(st.cursor, now)
	}
	s.pb.Speed = st.speed
	if st.lesson != nil {
		s.lesson, s.step, s.predicted = st.lesson, st.step, st.predicted
		s.rehold()
	}
	return s
}

// inputs are the tab's inputs.
func (s *Session) inputs() tabstate.Inputs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.in
}

// inputsAt are the tab's inputs and the time of its cursor at now, in
// milliseconds of the run.
func (s *Session) inputsAt(now time.Time) (tabstate.Inputs, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.in, tabstate.CursorMs(s.runLocked(), s.cursorAt(now))
}

// startInputs are what a reset goes back to, the preset's own settings
// on the tab's seed and base, and the lesson step the tab has loaded.
func (s *Session) startInputs() (tabstate.Inputs, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return tabstate.Inputs{Preset: s.in.Preset, Seed: s.in.Seed, Base: s.in.Base}, s.step
}

func (s *Session) runOf() *tabstate.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runLocked()
}

func (s *Session) lessonOf() *lessonbook.Doc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lesson
}

// settings are the tab's inputs with vals, the settings of a slider post
// numbered seq; ok is false for a post older than one already seen (slider
// posts race each other over separate connections), which changes nothing.
func (s *Session) settings(seq int64, vals map[string]float64) (in tabstate.Inputs, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq != 0 && seq < s.seq {
		return tabstate.Inputs{}, false
	}
	s.seq = seq
	return s.in.With(vals), true
}

// catchUp is settings for a stream's signals (Lab.catchUpSignals): the
// page's latest settings, numbered seq, win over the session's whatever
// their number.
func (s *Session) catchUp(seq int64, vals map[string]float64) tabstate.Inputs {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq = seq
	return s.in.With(vals)
}

// openStream counts a stream in and reports whether the page's signals,
// numbered seq, are newer than the session's last slider post (a stream
// back on a replica it left: Lab.catchUpSignals).
func (s *Session) openStream(seq int64) (behind bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streams++
	return seq > s.seq
}

// behind reports whether the page's signals, numbered seq, carry a
// slider move the session has not had yet.
func (s *Session) behind(seq int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return seq > s.seq
}

// rerun puts run (of in) in the session, redone from t = 0, keeping the
// cursor (and playback) where it is, unless a slider post newer than seq
// (0: any) came while the run was built. began is when the command that
// asked for it arrived, now when its run was ready.
func (s *Session) rerun(in tabstate.Inputs, run *tabstate.Run, seq int64, began, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq != 0 && seq < s.seq {
		return // a slider post overtaken while its run was built
	}
	if in.Key() == s.in.Key() {
		// The same settings again (a slider's post after a Play that
		// carried them: pendingSettings): the run, its cursor and what
		// the learner has watched of it stay; only a refusal's notice
		// goes.
		s.notice = ""
		s.touch()
		return
	}
	c := s.cursorAt(now) // on the old run
	// Play pressed after the setting, while its run was built, was
	// meant for the new run: it plays from where Play was pressed
	// (at "instant" the old run would have reached its end, and the
	// new one would be shown there, never played through).
	if s.pb.Playing && !s.playAt.Before(began) {
		c = min(c, s.playFrom)
	}
	s.setRun(in, run)
	s.notice = ""
	s.setCursor(c, now)
	s.changedRun()
	s.slid = seq != 0
}

// load replaces the tab's inputs with in and its run, paused at t = 0 on
// step (a lesson's step, "" for none or the lesson's own start); the
// page's controls follow.
func (s *Session) load(in tabstate.Inputs, run *tabstate.Run, step string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setRun(in, run)
	s.notice, s.step = "", step
	s.setCursor(0, now)
	s.pb.Playing = false
	s.inputsGen++
	s.changedRun()
}

// changedRun places the prediction's hold for the run just put in the
// session and wakes its streams. Callers hold mu.
func (s *Session) changedRun() {
	s.rehold()
	s.touch()
}

// play plays from the cursor; at the end, from the start.
func (s *Session) play(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cursorAt(now)
	if c >= s.frames {
		c = 0 // play at the end starts over
	}
	s.setCursor(c, now)
	s.pb.Playing = true
	s.playFrom, s.playAt = s.pb.Anchor, now
	s.touch()
}

// move pauses and moves the cursor by delta frames (0: a pause).
func (s *Session) move(delta int, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setCursor(s.cursorAt(now)+delta, now)
	s.pb.Playing = false
	s.touch()
}

// scrub pauses at cursor, the number of frames shown, refused (the
// session unchanged) out of the run's range.
func (s *Session) scrub(cursor *float64, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := parseCursor(cursor, s.frames)
	if err != nil {
		return err
	}
	s.setCursor(c, now)
	s.pb.Playing = false
	s.touch()
	return nil
}

// setSpeed plays at sp from the current frame on.
func (s *Session) setSpeed(sp tabstate.Speed, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cursorAt(now)
	s.pb.Speed = sp
	s.setCursor(c, now)
	s.touch()
}

// answer records that the learner answered the lesson's prediction:
// playback held for it goes on.
func (s *Session) answer(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notePredicted(now)
}

// refuse shows notice, a refused command's reason, in the tab's page.
func (s *Session) refuse(notice string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notice = notice
	s.touch()
}
