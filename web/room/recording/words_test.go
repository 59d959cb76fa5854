package recording

import (
	"testing"

	"outlierlab/web/room/record"
)

// A recorded submission reads as who submitted to which challenge and
// how it graded, not as the instructor's page with no change (its state
// is the room's as it was).
func TestNarrateSubmission(t *testing.T) {
	st := record.State{Preset: "bad-deploy"}
	prev := &record.TimelineEntry{Kind: "start", State: st}
	e := &record.TimelineEntry{Kind: "submission", State: st,
		Submission: record.RecordedSubmission("search-cap", "0123", record.Submission{Nick: "ann", Passed: 4, Total: 5, From: "addr"})}
	at := func(*record.TimelineEntry) string { return "40 s" }
	if got, want := narrate(prev, e, at), "ann submitted settings to challenge search-cap: 4 of 5 goals hold"; got != want {
		t.Errorf("narrate = %q, want %q", got, want)
	}
	if e.Submission.From != "" || e.Submission.Attendee == "0123" {
		t.Errorf("recorded %+v: want no address and the attendee as a tag", e.Submission)
	}
}
