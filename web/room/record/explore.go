package record

import (
	"fmt"
	"time"
)

// maxExploreMinutes bounds a timer a room's record may carry: plan files
// allow up to 120 minutes (engine/plan).
const maxExploreMinutes = 120

// Explore is a running (or run out) explore timer: the scene it was
// started on, its length, and when it ends (Unix ms, the server's clock).
type Explore struct {
	Scene   int   `json:"scene"`
	Minutes int   `json:"minutes"`
	EndMs   int64 `json:"endMs"`
}

// check refuses a timer the lab would not have written (nil: none).
func (e *Explore) check() error {
	if e == nil {
		return nil
	}
	if e.Minutes < 1 || e.Minutes > maxExploreMinutes || e.EndMs <= 0 || e.Scene < 0 {
		return fmt.Errorf("explore: %d min to %d on scene %d is not a timer (allowed 1–%d min, a time from 1970)", e.Minutes, e.EndMs, e.Scene, maxExploreMinutes)
	}
	return nil
}

func (e *Explore) Signal(now time.Time) ExploreSignal {
	if e == nil {
		return ExploreSignal{}
	}
	return ExploreSignal{EndMs: e.EndMs, LeftMs: max(e.EndMs-now.UnixMilli(), 0), Minutes: e.Minutes}
}

// ExploreSignal is the timer as a page counts it down: LeftMs is how long
// was left when the server sent it; EndMs names the timer (0: none).
type ExploreSignal struct {
	EndMs   int64 `json:"endMs"`
	LeftMs  int64 `json:"leftMs"`
	Minutes int   `json:"minutes"`
}

// ExploreWords is a recording's explore entry in words: "Instructor
// started a 5-minute explore (scene 3 of 6, "…")", or its stop.
func ExploreWords(e *TimelineEntry) (string, bool) {
	if e.Kind != "explore" {
		return "", false
	}
	x := e.State.Explore
	if x == nil {
		return "Instructor stopped the explore timer", true
	}
	words := fmt.Sprintf("Instructor started a %d-minute explore", x.Minutes)
	if sc := e.Scene; sc != nil {
		words += fmt.Sprintf(" (scene %d of %d, %q)", sc.N, sc.Of, sc.Title)
	}
	return words, true
}
