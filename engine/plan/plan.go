package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"outlierlab/engine/course"
)

// Plan is one workshop plan file: its front matter and its markdown body.
// The file format, for authors, is the package documentation (doc.go).
type Plan struct {
	// ID is the file name without .md: /plans/{ID}/handout.
	ID    string
	Title string
	// Summary is one line for the "Start a workshop" list.
	Summary string
	// Minutes is the workshop's length; the scenes' minutes add up to at
	// most this.
	Minutes int
	Scenes  []Scene
	// Markdown is the body: the instructor's overview (no placeholders:
	// a live number needs a scene's run).
	Markdown string
	// File is the plan's path as it was loaded.
	File string
}

// Scene is one step of the workshop: what the room shows, what the
// instructor says, what the room is asked.
type Scene struct {
	ID    string
	Title string
	// Minutes is the time the scene takes in the room.
	Minutes int
	// Preset, or Lesson (and Step, "" for the lesson's start), is what the
	// room loads: exactly one is set.
	Preset string
	Lesson string
	Step   string
	// Settings lie over the preset or the lesson step's settings, by the
	// names lessons use (outlier_detection fields, scenario knobs).
	Settings map[string]string
	// Inject are faults injected into the run, HOST@TIME ("h3@60s"), as
	// the lab's "Inject a fault" adds them.
	Inject []string
	// Cursor is where the scene opens, paused (0: the run's start; End:
	// its last frame). Play, instead, plays From → To and stops there.
	Cursor course.Ms
	Play   *Range
	// Notes are the instructor's (markdown, shown only on the present
	// page), with the lessons' placeholders and stated numbers (doc.go).
	Notes     string
	Question  *Question
	Spotlight *Spotlight
	// ExploreMinutes, if set, is the "explore on your own for N min"
	// timer the present page offers in this scene.
	ExploreMinutes int
	// Challenge, if set, is a tuning challenge's id (challenges/*.md):
	// in this scene attendees tune its unlocked settings on their own
	// pages and submit them to the room's leaderboard. The challenges
	// are engine/challenge's, which imports this package, so the id is
	// held against them by CheckChallenges, not by Parse.
	Challenge string
	// challengeLine is the file's line of Challenge, for CheckChallenges.
	challengeLine int

	// State is the run the scene shows: its preset and every setting
	// (the lesson step's, the scene's, the injections), by course's names.
	State course.State
	// Hosts and EndMs are the run's host count and the time of its last
	// frame, known before any run.
	Hosts int
	EndMs int64
}

// Range is a window of the run, From → To (To may be course.End).
type Range struct{ From, To course.Ms }

// Spotlight is what the room's spotlight shows at the scene: a host, a
// time range, or both (web/room/spotlight.go).
type Spotlight struct {
	Host     string
	From, To course.Ms
}

// The kinds of question: the room's own (web/room/questions.go), so a
// plan's question is asked with one click.
const (
	// KindEjected: "Is HOST ejected at T?"; the answer is yes or no.
	KindEjected = "ejected"
	// KindOut: "How many hosts are ejected at T?"; a whole number.
	KindOut = "out"
	// KindChoice: a question about the run with choices, each with the
	// check that makes it the right one; the answer is a choice's text.
	KindChoice = "choice"
)

// QuestionKinds lists the kinds, for messages.
var QuestionKinds = []string{KindEjected, KindOut, KindChoice}

// Question is a scene's question to the room and the answer its author
// expects, which `plan -check` holds against the engine for every seed.
type Question struct {
	Kind string
	// Host is the host asked about (KindEjected).
	Host string
	// At is the moment asked about: the room holds before it until the
	// reveal.
	At course.Ms
	// Text is the question as asked: the room's own words for ejected and
	// out (Text fills it), the author's for a choice.
	Text    string
	Choices []Choice
	// Answer is what the author expects, as the room's histogram labels
	// it: "yes" or "no", a number of hosts, or a choice's text.
	Answer string
}

// Choice is one answer offered, and the check (the lessons' checks,
// engine/course) that holds on the run when it is the right one.
type Choice struct {
	Text  string
	Check course.Check
}

// SceneByID finds a scene.
func (p *Plan) SceneByID(id string) (*Scene, bool) {
	for i := range p.Scenes {
		if p.Scenes[i].ID == id {
			return &p.Scenes[i], true
		}
	}
	return nil, false
}

// CheckChallenges holds every challenge scene's id against the
// challenges there are (ids): each unknown one is a *FieldError with its
// line, naming the ids allowed (errors.Join; nil when all are known).
func CheckChallenges(plans []Plan, ids []string) error {
	var errs []error
	for _, p := range plans {
		for i, s := range p.Scenes {
			if s.Challenge == "" || slices.Contains(ids, s.Challenge) {
				continue
			}
			errs = append(errs, &FieldError{File: p.File, Line: s.challengeLine,
				Field:   fmt.Sprintf("scenes[%d] (%s).challenge", i, s.ID),
				Problem: fmt.Sprintf("%q is not a challenge (allowed %s)", s.Challenge, strings.Join(ids, ", "))})
		}
	}
	return errors.Join(errs...)
}

// Load reads every *.md file at the root of fsys as a plan (serve -plans
// DIR: an instructor's own), validated against the course's lessons, in
// file-name order. Every malformed field of every file is reported
// (errors.Join of *FieldError).
func Load(fsys fs.FS, lessons []course.Lesson) ([]Plan, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("no plan files (*.md)")
	}
	sort.Strings(names)
	var plans []Plan
	var errs []error
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, &FieldError{File: name, Problem: err.Error()})
			continue
		}
		p, err := Parse(name, data, lessons)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return plans, nil
}

// LoadDir is Load on a directory of the file system.
func LoadDir(dir string, lessons []course.Lesson) ([]Plan, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory that can be read", dir)
	}
	return Load(os.DirFS(dir), lessons)
}

// FieldError is one malformed field of a plan file: the file, the line
// and the field (a path like scenes[2].question.at), and what is wrong.
type FieldError struct {
	File string
	// Line is the file's line (1 is the first), 0 when it is the file's
	// as a whole.
	Line int
	// Field is the field's path; "" for the file as a whole.
	Field   string
	Problem string
}

// Error reads "plans/demo.md:14: scenes[1].question.at: …".
func (e *FieldError) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Problem
}

// idOf is a plan's id: its file name without .md.
func idOf(file string) string { return strings.TrimSuffix(path.Base(file), ".md") }
