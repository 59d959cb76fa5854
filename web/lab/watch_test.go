package lab

import (
	"slices"
	"testing"
	"time"

	"outlierlab/web/chart"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/view"
)

// A lesson step ticks from what the learner does after the settings
// change, not from the redone run's end (issue 38: cap-17 ticked during
// one drag of the cap from 10 to 34, the cursor standing at the end). The
// tab is driven through its commands as the page sends them: played to the
// end, then the cap set with the cursor left there, then played again
// (Play at the end starts over) or scrubbed back and stepped into.
func TestLessonStepTicksAfterItsAction(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	post, clock := frozenTab(t, s, `"preset":"search-cache","lesson":"cap","predicted":true`)
	done := func(step string) bool {
		t.Helper()
		return slices.Contains(s.Sessions.Get(webtest.Tab).StepsDone(*clock), step)
	}
	post("speed", `,"speed":"instant"`)
	post("play", "")
	if !done("overflow") {
		t.Fatal("the start run played to the end: overflow is not done")
	}

	// A drag of the cap through 17 to 34, the cursor at the end: each
	// position redoes the run, and neither step ticks. The learner drags
	// a moment after the run ended (a play at the very instant a setting
	// is built plays the new run: TestPlayDuringRerunPlaysTheNewRun).
	*clock = clock.Add(time.Second)
	for _, c := range []string{"12", "17", "25", "34"} {
		post("set", `,"cfg":{"max_ejection_percent":`+c+`}`)
		if c == "17" && done("cap-17") {
			t.Error("cap-17 ticks as the drag passes 17, the cursor at the end")
		}
	}
	if done("cap-34") {
		t.Error("cap-34 ticks on the setting change alone, the cursor at the end")
	}
	// Watching it: back to 30 s, step to 80 s, then play to the end.
	post("scrub", `,"cursor":3`)
	for range 5 {
		post("step", "")
	}
	if done("cap-34") {
		t.Error("cap-34 ticks at 80 s; its check reads to the end")
	}
	post("play", "")
	if !done("cap-34") {
		t.Error("cap-34 not done after stepping back and playing to the end")
	}

	// cap-17, then Play: at the end, Play starts over and plays through.
	post("set", `,"cfg":{"max_ejection_percent":17}`)
	if done("cap-17") {
		t.Error("cap-17 ticks on the setting change alone")
	}
	post("play", "")
	if !done("cap-17") {
		t.Error("cap-17 not done after playing the redone run")
	}
	// Stepping back after the ticks is watching again, not undoing them:
	// the check still holds once the cursor passes 40 s again.
	post("scrub", `,"cursor":2`)
	post("step", "")
	post("step", "")
	if !done("cap-17") {
		t.Error("cap-17 not done after stepping from 20 s into 40 s")
	}
}

// The Envoy-and-gRPC strip shows only in the lessons that read it
// (compare_strip: cap and grpc); the others hold its box hidden.
func TestLessonCompareStrip(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, id := range []string{"consecutive", "cap", "grpc", "capstone"} {
		v, err := s.LessonView(s.Lessons.ByID[id], "")
		if err != nil {
			t.Fatal(err)
		}
		want := id == "cap" || id == "grpc"
		i := slices.IndexFunc(v.Lab.Charts, func(c view.Chart) bool { return c.ID == chart.ChartCompare })
		if i < 0 {
			t.Fatalf("%s: no compare strip box at all", id)
		}
		if shown := !v.Lab.Charts[i].Hidden; shown != want {
			t.Errorf("%s: compare strip shown %v, want %v", id, shown, want)
		}
	}
}

// Play pressed while a changed setting's run is still being built (a slow
// server, or the race detector: the page posts the setting, then Play, and
// the server applies Play first) plays the new run from where Play was
// pressed: at "instant" the old run reached its end at once, and the new
// run used to be shown there, never played, so the step never ticked
// (TestBrowserLessonChecks under -race). The frozen clock puts Play at the
// instant the setting's run began: Play first, then the set's swap.
func TestPlayDuringRerunPlaysTheNewRun(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	post, clock := frozenTab(t, s, `"preset":"search-cache","lesson":"cap","predicted":true`)
	sess := func() *Session { return s.Sessions.Get(webtest.Tab) }
	post("speed", `,"speed":"instant"`)
	post("play", "")
	*clock = clock.Add(time.Second)
	post("play", "") // at the end: starts over, plays to the end at once
	post("set", `,"cfg":{"max_ejection_percent":34}`)
	if !slices.Contains(sess().StepsDone(*clock), "cap-34") {
		t.Error("cap-34 not done: Play, pressed as the cap's run was built, did not play the new run")
	}
	// A setting changed after the run was played (Play a moment before)
	// keeps the cursor where it is, unplayed.
	*clock = clock.Add(time.Second)
	post("set", `,"cfg":{"max_ejection_percent":17}`)
	if slices.Contains(sess().StepsDone(*clock), "cap-17") {
		t.Error("cap-17 done on the setting change alone")
	}
}
