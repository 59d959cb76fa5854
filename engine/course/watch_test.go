package course_test

import (
	"testing"

	"outlierlab/engine/course"
)

// Every step of every lesson, driven as a learner drives it (issue 38:
// 10 of 27 steps ticked on the setting change itself): the learner has
// played the run before to the end, then changes the settings to the
// step's; the cursor stays at the end, so the new run's end is on screen
// at once. The step must not tick then: nothing was watched. It ticks once
// the learner plays the new run (Play at the end starts over from 0) and
// the cursor reaches the last frame the check reads, and also when the
// learner steps back to just before that frame and steps into it. A check
// that reads no frame would tick on the change itself: no step may have
// one (a step is about what the run does).
func TestStepTicksOnlyWhenWatched(t *testing.T) {
	for _, l := range loadLessons(t) {
		for _, s := range l.Steps {
			t.Run(l.ID+"/"+s.ID, func(t *testing.T) {
				st, err := course.Intended(l, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				run, err := st.Run(l.SeedOrDefault())
				if err != nil {
					t.Fatal(err)
				}
				end := run.Frames[len(run.Frames)-1].TMs
				changed := course.EvaluateWatched(s.Check, &run, course.Watch{FromMs: end, ToMs: end})
				if changed.NeedsCursorMs == 0 {
					t.Fatalf("the check reads no frame, so it ticks on the setting change alone: %s", changed.Detail)
				}
				if changed.Pass {
					t.Errorf("ticks on the setting change alone, with the cursor at the end: %s", changed.Detail)
				}
				if !changed.Unwatched && changed.Decided {
					t.Errorf("with the intended settings the check fails: %s", changed.Detail)
				}
				if at0 := course.EvaluateWatched(s.Check, &run, course.Watch{FromMs: 0, ToMs: 0}); at0.Pass {
					t.Errorf("ticks at t = 0 before any frame is shown: %s", at0.Detail)
				}
				// Play from the start: the first frame where it ticks is
				// the last frame it reads.
				tick := int64(-1)
				for _, f := range run.Frames {
					if r := course.EvaluateWatched(s.Check, &run, course.Watch{FromMs: 0, ToMs: f.TMs}); r.Pass {
						tick = f.TMs
						break
					}
				}
				if tick < 0 {
					t.Fatalf("never ticks when played from the start")
				}
				if tick > changed.NeedsCursorMs {
					t.Errorf("ticks at %d ms, after the last frame it reads (%d ms)", tick, changed.NeedsCursorMs)
				}
				// Step back one frame before that, and step into it.
				var before int64
				for _, f := range run.Frames {
					if f.TMs < changed.NeedsCursorMs {
						before = f.TMs
					}
				}
				if r := course.EvaluateWatched(s.Check, &run, course.Watch{FromMs: before, ToMs: changed.NeedsCursorMs}); !r.Pass {
					t.Errorf("stepping from %d ms into %d ms does not tick: %s", before, changed.NeedsCursorMs, r.Detail)
				}
			})
		}
	}
}
