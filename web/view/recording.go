package view

// RecordingPlayer is a workshop's recording with its player: the room's
// lab (Lab or Lesson, in the projector view) driven by the recording, the
// transport (play, pause, speeds, a timeline of the entries), and the
// entries as a table.
type RecordingPlayer struct {
	Layout
	Code string
	// Speed is the player's speed at first (a Speeds value); End the
	// recording's length ("mm:ss").
	Speed   string
	Speeds  []Speed
	End     string
	Entries []RecNow
	Lab     *Lab
	Lesson  *Lesson
}

// RecNow is one entry of a recording: its index (from 0) of Total, its
// time into the workshop ("12:30"), kind, what happened in words, the
// lab's permalink at its state ("" for a lesson room) and its place on
// the timeline (Left, percent of the recording's length).
type RecNow struct {
	Index, Total int
	At, Kind     string
	What         string
	Link, Left   string
	// State is the room's whole state after the entry, in words.
	State string
}
