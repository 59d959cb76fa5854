package record

import (
	"math"

	"outlierlab/engine/challenge"
)

// Submission is one attendee's latest settings for a room's challenge,
// graded, the value of its key on the bus (web/room: submissions.go).
type Submission struct {
	Nick string `json:"nick"`
	// Settings are the challenge's unlocked settings as submitted.
	Settings map[string]string `json:"settings"`
	// Passed is how many goals held on every hidden seed, of Total.
	Passed int `json:"passed"`
	Total  int `json:"total"`
	// X and Y are the submission's worst values on the challenge's two
	// main goals (challenge.Grade.Worst); nil for +Inf (a host never
	// ejected in time), which JSON cannot carry.
	X *float64 `json:"x"`
	Y *float64 `json:"y"`
	// From is the client's address as a tag (SourceTag), as an answer's.
	From string `json:"from,omitempty"`
}

// NewSubmission is a graded submission as the room keeps it.
func NewSubmission(nick string, settings map[string]string, e challenge.Entry, from string) Submission {
	return Submission{Nick: nick, Settings: settings, Passed: e.Passed, Total: e.Total, X: Finite(e.X), Y: Finite(e.Y), From: from}
}

// Entry is the submission on a board (seq orders submissions: the bus's
// revision of its key).
func (s Submission) Entry(seq int) challenge.Entry {
	return challenge.Entry{Who: s.Nick, Seq: seq, Passed: s.Passed, Total: s.Total, X: inFinite(s.X), Y: inFinite(s.Y)}
}

// Finite is v for JSON: nil for an infinite value (never).
func Finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

func inFinite(p *float64) float64 {
	if p == nil {
		return math.Inf(1)
	}
	return *p
}

// ChallengePick is what the instructor put before the room on a
// challenge scene: a submission in the spotlight (its settings are the
// room's run, so every following page shows them), and the reference
// revealed. It goes with the scene.
type ChallengePick struct {
	// Who is the spotlit submission's nickname, Settings its values.
	Who      string            `json:"who,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	// Reference: the challenge's reference solution is shown to all.
	Reference bool `json:"reference,omitempty"`
}
