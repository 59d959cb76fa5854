package record

import (
	"crypto/sha256"
	"encoding/hex"
)

// TimelineEntry is one entry of a room's recording: when (Unix ms), what
// (start, state, question, reveal, summon, lock, submission) and the room's state
// after it (with the question, and at a reveal its histogram).
type TimelineEntry struct {
	TMs   int64  `json:"t"`
	Kind  string `json:"kind"`
	State State  `json:"state"`
	// Scene names the plan scene the room is on (web/room/scenes).
	Scene *EntryScene `json:"scene,omitempty"`
	// Submission is an attendee's graded submission to the scene's
	// challenge (kind "submission"): the recording keeps each, so a replay
	// and the handout show the board as it stood.
	Submission *EntrySubmission `json:"submission,omitempty"`
}

// EntrySubmission is a submission as the recording keeps it: the
// challenge, the attendee as a tag (anyone with the room's code reads a
// recording, so it holds no attendee id and no address) and the graded
// settings.
type EntrySubmission struct {
	Challenge string `json:"challenge"`
	Attendee  string `json:"attendee"`
	Submission
}

// RecordedSubmission is attendee id's submission sub to challenge as the
// recording keeps it: the id as a tag of its own (a hash: an id is random,
// so its hash names it and cannot be turned back), no client address.
func RecordedSubmission(challenge, id string, sub Submission) *EntrySubmission {
	h := sha256.Sum256([]byte("outlierlab recorded attendee\x00" + id))
	sub.From = ""
	return &EntrySubmission{Challenge: challenge, Attendee: hex.EncodeToString(h[:8]), Submission: sub}
}

// Submissions are the latest submission of each attendee to challenge on
// scene of plan in entries (a prefix of a recording: the board at its last
// entry's moment), by attendee tag, each with the index of its entry (the board's order).
func Submissions(entries []TimelineEntry, plan string, scene int, challenge string) map[string]IndexedSubmission {
	out := map[string]IndexedSubmission{}
	for i := range entries {
		e := &entries[i]
		sub := e.Submission
		if e.Kind != "submission" || sub == nil || sub.Challenge != challenge || e.State.Plan != plan || e.State.Scene != scene {
			continue
		}
		out[sub.Attendee] = IndexedSubmission{Submission: sub.Submission, Index: i}
	}
	return out
}

// IndexedSubmission is a recorded submission and its entry's index.
type IndexedSubmission struct {
	Submission
	Index int
}

func WhereOf(st *State) string {
	if st.Lesson == "" {
		return "preset " + st.Preset
	}
	if st.Step != "" {
		return "lesson " + st.Lesson + " step " + st.Step
	}
	return "lesson " + st.Lesson
}

func PlayOf(st *State) string {
	if st.Playing {
		return "playing at " + SpeedWords(st.Speed)
	}
	return "paused"
}

func SpeedWords(name string) string {
	if name == "instant" {
		return "instant"
	}
	return name + "×"
}
