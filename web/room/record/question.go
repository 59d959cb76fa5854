package record

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"outlierlab/web/httperr"
	"outlierlab/web/view"
)

// MaxMomentS bounds a moment a room's tool names (seconds): a question's,
// a spotlight's range. Runs last minutes.
const MaxMomentS = 3600

// Question is the room's open (or revealed) question, on its state.
type Question struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // ejected, out, lesson, choice (a plan scene's)
	Host string `json:"host,omitempty"`
	// Scene is the plan scene whose question this is (nil: the
	// instructor's own); never its expected answer, which stays with the
	// plan on the server (web/room/scenes).
	Scene *int   `json:"scene,omitempty"`
	Text  string `json:"text"`
	// Choices are the answers offered; none: the answer is a whole number.
	Choices []string `json:"choices,omitempty"`
	// AtMs is the moment asked about; Hold the frames before it, where
	// the room's playback waits until the reveal.
	AtMs int64 `json:"atMs"`
	Hold int   `json:"hold"`
	// Set at the reveal: the engine's answer and the room's histogram.
	Revealed bool      `json:"revealed,omitempty"`
	Answer   string    `json:"answer,omitempty"`
	Hist     []HistBar `json:"hist,omitempty"`
	Total    int       `json:"total,omitempty"`
}

// HistBar is one answer's count in the room; Right marks the engine's.
type HistBar struct {
	Answer string `json:"answer"`
	N      int    `json:"n"`
	Right  bool   `json:"right,omitempty"`
}

// Answer is one attendee's answer, the value of its key on the bus
// (web/room/answers.go).
type Answer struct {
	Nick   string `json:"nick"`
	Answer string `json:"answer"`
	// From is the answering client's address as a tag (SourceTag): the
	// instructor sees how many addresses the answers came from, never
	// which (web/room: identity.go).
	From string `json:"from,omitempty"`
}

var nickAdj = []string{"amber", "brisk", "calm", "deft", "eager", "fuzzy", "gentle", "hardy", "jolly", "keen", "lucid", "merry", "nimble", "plucky", "quiet", "rapid"}

var nickNoun = []string{"otter", "falcon", "badger", "heron", "lynx", "marten", "osprey", "panda", "quokka", "raven", "stoat", "tapir", "vole", "walrus", "yak", "zebu"}

// Nickname is an attendee's anonymous name, the same on every replica.
func Nickname(attendee string) string {
	sum := sha256.Sum256([]byte(attendee))
	n := binary.BigEndian.Uint32(sum[:4])
	return nickAdj[n%16] + " " + nickNoun[(n/16)%16] + " " + strconv.Itoa(int(n/256%100))
}

// Histogram counts the answers: every choice in order, or the numbers
// given (and the engine's) in numeric order; the engine's is marked.
func Histogram(q *Question, answers map[string]Answer, right string) []HistBar {
	counts := map[string]int{}
	for _, a := range answers {
		counts[a.Answer]++
	}
	keys := q.Choices
	if len(keys) == 0 {
		counts[right] += 0
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, _ := strconv.Atoi(keys[i])
			b, _ := strconv.Atoi(keys[j])
			return a < b
		})
	}
	out := make([]HistBar, 0, len(keys))
	for _, k := range keys {
		out = append(out, HistBar{Answer: k, N: counts[k], Right: k == right})
	}
	return out
}

// CheckAnswer reads an attendee's answer to q: one of its choices, or a
// whole number of hosts.
func CheckAnswer(q *Question, a string) (string, error) {
	a = strings.TrimSpace(a)
	if len(q.Choices) > 0 {
		if !slices.Contains(q.Choices, a) {
			return "", &httperr.FieldError{Field: "answer", Msg: fmt.Sprintf("%q is not a choice (allowed %s)", httperr.Truncate(a, 40), strings.Join(q.Choices, ", "))}
		}
		return a, nil
	}
	n, err := strconv.Atoi(a)
	if err != nil || n < 0 || n > 10000 {
		return "", &httperr.FieldError{Field: "answer", Msg: fmt.Sprintf("%q is not a number of hosts (allowed 0–10000)", httperr.Truncate(a, 20))}
	}
	return strconv.Itoa(n), nil
}

// AnswerBars is a histogram as its bars are drawn: each a share of the
// widest.
func AnswerBars(hist []HistBar) []view.RoomAnswerBar {
	widest := 1
	for _, b := range hist {
		widest = max(widest, b.N)
	}
	out := make([]view.RoomAnswerBar, 0, len(hist))
	for _, b := range hist {
		out = append(out, view.RoomAnswerBar{Answer: b.Answer, N: b.N, Pct: 100 * b.N / widest, Right: b.Right})
	}
	return out
}
