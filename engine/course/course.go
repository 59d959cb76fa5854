package course

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// Lesson is one lesson file: its front matter and its markdown body. The
// file format, for authors, is the package documentation (doc.go): the
// front matter keys, the check kinds (setting among them), passes_before,
// the placeholders, and the "::: after-prediction" blocks of the body
// (see Markdown below).
type Lesson struct {
	// ID is the file name without .md; the page lives at /lessons/{ID}.
	ID    string `json:"id"`
	Title string `json:"title"`
	// Summary is one line for the index page.
	Summary string `json:"summary"`
	// Order is the lesson's place in the course (1, 2, ...); unique.
	Order   int `json:"order"`
	Minutes int `json:"minutes"`
	// Goals are the learning goals, stated up front.
	Goals []string `json:"goals"`
	// Preset is the scenario the lesson loads (scenario.Lookup).
	Preset string `json:"preset"`
	// Seed fixes the run, so the numbers in the prose are the room's
	// numbers. 0 in the file means 1.
	Seed uint64 `json:"seed,omitempty"`
	// Start are the settings the lesson opens with, over the preset:
	// outlier_detection fields by Envoy name ("max_ejection_percent":
	// "10") and scenario knobs ("hosts": "6"), values as typed.
	Start map[string]string `json:"start,omitempty"`
	// Controls are the settings the page shows as controls, by the same
	// names.
	Controls []string `json:"controls"`
	Steps    []Step   `json:"steps"`
	Predict  Predict  `json:"predict"`
	Quiz     []Quiz   `json:"quiz"`
	// CompareStrip shows the Envoy-and-gRPC strip under the charts: only a
	// lesson whose text reads it asks for it (issue 38: the strip showed in
	// all thirteen lessons and was explained in two).
	CompareStrip bool `json:"compare_strip,omitempty"`
	// Ending is what the lesson ends with: the settings it taught and
	// their defaults, the stats to watch, a rule, an exercise (ending.go).
	Ending *Ending `json:"ending,omitempty"`

	// File is the lesson's path in the file system it was loaded from.
	File string `json:"-"`
	// Markdown is the body after the front matter, placeholders unresolved.
	// Prose that would give the prediction's answer away goes between a
	// line "::: after-prediction" and a line ":::": the page renders it
	// hidden (not shown, not read out) until the learner has answered the
	// prediction, and shows it at once to a learner who answered on an
	// earlier visit or whose browser runs no script. Blocks do not nest;
	// markers inside fenced code are text. BodyParts splits the body.
	Markdown string `json:"-"`

	// bodyLine is the file line the body starts on, for error messages.
	bodyLine int
}

// Step is one "Try this": an instruction, the settings it leads to, and
// the check that says it worked.
type Step struct {
	ID string `json:"id"`
	// Text is the instruction (markdown, may hold placeholders).
	Text string `json:"text"`
	// Preset, if set, is another scenario the step loads (the capstone's
	// bad deploy after the search cluster). Such a step starts from that
	// preset as it is: the lesson's Start does not apply to it.
	Preset string `json:"preset,omitempty"`
	// Settings are what the learner is meant to end up with, laid over the
	// lesson's Start (not over the previous step: each step stands alone,
	// so the page can jump to it).
	Settings map[string]string `json:"settings,omitempty"`
	Check    Check             `json:"check"`
	// Controls are the controls the step is about (setting names, each one
	// the page shows: Lesson.ControlNames), and Charts the charts it is
	// about (Charts' ids), its key chart first: the one its text asks the
	// learner to look at. While the step is current the page shows these
	// and folds the others behind "All settings" and "All charts".
	Controls []string `json:"controls,omitempty"`
	Charts   []string `json:"charts"`
	// Figure names a small figure the step is about besides its charts
	// (Figures), shown beside the step while it is current.
	Figure string `json:"figure,omitempty"`
	// PassesBefore is set on a step whose check may already hold before
	// the learner does anything (a step about looking: "play to the end
	// and watch the log"), and says why. Without it the check must fail
	// in every state the learner can be in before the step, on the step's
	// scenario: the lesson's start, the scenario a step's button loads,
	// and what each previous step leads to (Before). That is what keeps a
	// step from ticking before its own action. A reason is required.
	PassesBefore *string `json:"passes_before,omitempty"`
	// FailsAtStart is the old form, refused with a message that says how
	// to convert it.
	FailsAtStart *bool `json:"fails_at_start,omitempty"`
}

// MustFailBefore reports whether the step's check must fail before the
// step is done (no passes_before).
func (s *Step) MustFailBefore() bool { return s.PassesBefore == nil }

// Predict is a question asked before the lesson's key moment; the page
// shows Reveal once the learner has answered (and stepped past PauseAt).
type Predict struct {
	// BeforeStep is the id of the step the question comes before.
	BeforeStep string `json:"before_step"`
	// PauseAt, if set, is where the page pauses playback to ask.
	PauseAt  Ms       `json:"pause_at,omitempty"`
	Question string   `json:"question"`
	Choices  []string `json:"choices"`
	// Answer is the index of the right choice.
	Answer int    `json:"answer"`
	Reveal string `json:"reveal"`
}

// Quiz is an end-of-lesson question.
type Quiz struct {
	Question string   `json:"question"`
	Choices  []string `json:"choices"`
	Answer   int      `json:"answer"`
	Explain  string   `json:"explain"`
}

// SeedOrDefault is the seed the lesson's runs use.
func (l *Lesson) SeedOrDefault() uint64 {
	if l.Seed == 0 {
		return 1
	}
	return l.Seed
}

// PresetFor is the preset a step loads: its own, or the lesson's (step ""
// is the lesson's start).
func (l *Lesson) PresetFor(step string) string {
	if s, ok := l.StepByID(step); ok && s.Preset != "" {
		return s.Preset
	}
	return l.Preset
}

// StepByID finds a step.
func (l *Lesson) StepByID(id string) (*Step, bool) {
	for i := range l.Steps {
		if l.Steps[i].ID == id {
			return &l.Steps[i], true
		}
	}
	return nil, false
}

// LessonError is a malformed lesson file: which file, and what is wrong.
type LessonError struct {
	File    string
	Problem string
}

func (e *LessonError) Error() string { return e.File + ": " + e.Problem }

// Load reads every *.md file at the root of fsys as a lesson, validates
// it, and returns the lessons in course order. Every malformed file is
// reported (errors.Join of *LessonError), not only the first.
func Load(fsys fs.FS) ([]Lesson, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("no lesson files (*.md)")
	}
	sort.Strings(names)
	var lessons []Lesson
	var errs []error
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, &LessonError{File: name, Problem: err.Error()})
			continue
		}
		l, err := Parse(name, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		lessons = append(lessons, l)
	}
	// Orders must be unique across files; the error names both.
	byOrder := map[int]string{}
	for _, l := range lessons {
		if other, ok := byOrder[l.Order]; ok {
			errs = append(errs, &LessonError{File: l.File, Problem: fmt.Sprintf("order %d is already used by %s", l.Order, other)})
			continue
		}
		byOrder[l.Order] = l.File
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(lessons, func(a, b Lesson) int { return a.Order - b.Order })
	return lessons, nil
}

// Parse reads and validates one lesson file. name is its path in the
// lesson file system; the lesson's id must be its base name without .md.
func Parse(name string, data []byte) (Lesson, error) {
	fail := func(format string, args ...any) (Lesson, error) {
		return Lesson{}, &LessonError{File: name, Problem: fmt.Sprintf(format, args...)}
	}
	front, body, err := splitFrontMatter(data)
	if err != nil {
		return fail("%v", err)
	}
	var l Lesson
	if err := yaml.UnmarshalStrict(front, &l); err != nil {
		return fail("front matter: %s", cleanYAMLError(err))
	}
	l.File = name
	l.Markdown = body
	// The body is the tail of the file (line ends normalised): its first
	// line follows every line break before it.
	norm := bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	l.bodyLine = bytes.Count(norm[:len(norm)-len(body)], []byte("\n")) + 1
	if err := l.validate(); err != nil {
		return fail("%v", err)
	}
	return l, nil
}

// splitFrontMatter cuts "---\n<yaml>\n---\n<body>".
func splitFrontMatter(data []byte) (front []byte, body string, err error) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		return nil, "", errors.New("does not start with a front matter block (a line \"---\")")
	}
	if f, b, ok := bytes.Cut(rest, []byte("\n---\n")); ok {
		return f, string(b), nil
	}
	if f, ok := bytes.CutSuffix(rest, []byte("\n---")); ok {
		return f, "", nil
	}
	return nil, "", errors.New("the front matter block is not closed (no line \"---\" after it)")
}

// cleanYAMLError drops the decoder's layers of prefixes, keeping the part
// that names the key: `json: unknown field "foo"`.
func cleanYAMLError(err error) string {
	s := err.Error()
	for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	s = strings.Join(strings.Fields(s), " ") // one line: the YAML decoder lists problems on several
	return strings.TrimPrefix(s, "json: ")
}

// validate returns the first problem with a parsed lesson, in words that
// name the key: the validators below, in the order of the front matter.
func (l *Lesson) validate() error {
	for _, v := range []func() error{l.validateHead, l.validateStart, l.validateControls, l.validateBody, l.validateSteps, l.validatePredict, l.validateQuiz, l.validateEnding} {
		if err := v(); err != nil {
			return err
		}
	}
	return nil
}

// validateHead checks the keys every lesson must have.
func (l *Lesson) validateHead() error {
	id := strings.TrimSuffix(path.Base(l.File), ".md")
	switch {
	case l.ID == "":
		return errors.New("missing id")
	case l.ID != id:
		return fmt.Errorf("id %q does not match the file name (want %q)", l.ID, id)
	case strings.TrimSpace(l.Title) == "":
		return errors.New("missing title")
	case strings.TrimSpace(l.Summary) == "":
		return errors.New("missing summary")
	case l.Order < 1:
		return errors.New("missing order (1, 2, ...)")
	case l.Minutes < 1:
		return errors.New("missing minutes (the time the lesson takes)")
	case len(l.Goals) == 0:
		return errors.New("missing goals")
	case l.Preset == "":
		return errors.New("missing preset")
	case len(l.Controls) == 0:
		return errors.New("missing controls")
	case len(l.Steps) == 0:
		return errors.New("missing steps")
	case len(l.Quiz) < 2 || len(l.Quiz) > 3:
		return fmt.Errorf("quiz has %d questions; want 2 or 3", len(l.Quiz))
	case strings.TrimSpace(l.Markdown) == "":
		return errors.New("the lesson has no body after its front matter")
	}
	for i, g := range l.Goals {
		if strings.TrimSpace(g) == "" {
			return fmt.Errorf("goals[%d] is empty", i)
		}
	}
	return nil
}

// lookupPreset finds a preset named in the lesson, or says which exist.
func lookupPreset(name string) (scenario.Preset, error) {
	p, ok := scenario.Lookup(name)
	if !ok {
		var names []string
		for _, p := range scenario.Presets() {
			names = append(names, p.Name)
		}
		return p, fmt.Errorf("unknown preset %q (presets: %s)", name, strings.Join(names, ", "))
	}
	return p, nil
}

// validateStart checks the preset and the settings the lesson opens with.
func (l *Lesson) validateStart() error {
	p, err := lookupPreset(l.Preset)
	if err != nil {
		return err
	}
	if msg := checkSettingNames("start", l.Start); msg != "" {
		return errors.New(msg)
	}
	if _, _, err := settings.Apply(p, l.Start, nil); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return nil
}

// validateControls checks that every control is a setting, listed once.
func (l *Lesson) validateControls() error {
	seen := map[string]bool{}
	for i, c := range l.Controls {
		if !isSetting(c) {
			return fmt.Errorf("controls[%d]: unknown setting %q (an outlier_detection field or a scenario knob)", i, c)
		}
		if seen[c] {
			return fmt.Errorf("controls[%d]: %q is listed twice", i, c)
		}
		seen[c] = true
	}
	return nil
}

// validateBody checks the body's placeholders and its blocks.
func (l *Lesson) validateBody() error {
	if err := validatePlaceholders("body", l.Markdown); err != nil {
		return err
	}
	_, err := splitBody(l.Markdown, l.bodyLine)
	return err
}

// validateSteps checks every step: a unique id, its text, its settings
// over its scenario, its check and its placeholders.
func (l *Lesson) validateSteps() error {
	stepIDs := map[string]bool{}
	for i := range l.Steps {
		s := &l.Steps[i]
		where := fmt.Sprintf("steps[%d]", i)
		switch {
		case s.ID == "":
			return errors.New(where + ": missing id")
		case stepIDs[s.ID]:
			return fmt.Errorf("%s: id %q is used twice", where, s.ID)
		}
		stepIDs[s.ID] = true
		if err := l.validateStep(s, fmt.Sprintf("steps[%d] (%s)", i, s.ID)); err != nil {
			return err
		}
	}
	return nil
}

// validateStep checks one step, named where in errors.
func (l *Lesson) validateStep(s *Step, where string) error {
	switch {
	case strings.TrimSpace(s.Text) == "":
		return errors.New(where + ": missing text")
	case s.PassesBefore != nil && strings.TrimSpace(*s.PassesBefore) == "":
		return errors.New(where + ": passes_before needs a reason (why the check may hold before the step is done), or leave it out")
	case s.FailsAtStart != nil:
		return errors.New(where + `: fails_at_start is gone: delete it (a check must now fail before its step, not only at the start), and for a step about looking whose check holds before it write passes_before: "<why>"`)
	}
	p, _ := scenario.Lookup(l.Preset) // the lesson's own, checked before its steps
	start := l.Start
	if s.Preset != "" {
		sp, ok := scenario.Lookup(s.Preset)
		if !ok {
			return fmt.Errorf("%s: unknown preset %q", where, s.Preset)
		}
		p, start = sp, nil
	}
	if msg := checkSettingNames(where+".settings", s.Settings); msg != "" {
		return errors.New(msg)
	}
	if _, _, err := settings.Apply(p, start, s.Settings); err != nil {
		return fmt.Errorf("%s.settings: %w", where, err)
	}
	if err := s.Check.validate(where + ".check"); err != nil {
		return err
	}
	if err := l.validateFocus(s, where); err != nil {
		return err
	}
	return validatePlaceholders(where+".text", s.Text)
}

// validatePredict checks the prediction and the step it comes before.
func (l *Lesson) validatePredict() error {
	pr := &l.Predict
	switch {
	case pr.Question == "":
		return errors.New("predict: missing question")
	case pr.Reveal == "":
		return errors.New("predict: missing reveal")
	case pr.BeforeStep == "":
		return errors.New("predict: missing before_step (the id of the step it comes before)")
	}
	if _, ok := l.StepByID(pr.BeforeStep); !ok {
		return fmt.Errorf("predict: before_step %q is not a step id", pr.BeforeStep)
	}
	if err := checkChoices("predict", pr.Choices, pr.Answer); err != nil {
		return err
	}
	return validatePlaceholders("predict.reveal", pr.Reveal)
}

// validateQuiz checks the end-of-lesson questions.
func (l *Lesson) validateQuiz() error {
	for i, q := range l.Quiz {
		where := fmt.Sprintf("quiz[%d]", i)
		switch {
		case q.Question == "":
			return errors.New(where + ": missing question")
		case q.Explain == "":
			return errors.New(where + ": missing explain")
		}
		if err := checkChoices(where, q.Choices, q.Answer); err != nil {
			return err
		}
	}
	return nil
}

func checkChoices(where string, choices []string, answer int) error {
	if len(choices) < 2 {
		return fmt.Errorf("%s: needs at least 2 choices, has %d", where, len(choices))
	}
	for i, c := range choices {
		if strings.TrimSpace(c) == "" {
			return fmt.Errorf("%s: choices[%d] is empty", where, i)
		}
	}
	if answer < 0 || answer >= len(choices) {
		return fmt.Errorf("%s: answer %d is not a choice index (0–%d)", where, answer, len(choices)-1)
	}
	return nil
}

func validatePlaceholders(where, text string) error {
	for _, raw := range findPlaceholders(text) {
		if _, err := ParsePlaceholder(raw); err != nil {
			return fmt.Errorf("%s: placeholder {{%s}}: %w", where, raw, err)
		}
	}
	if strings.Count(text, "{{") != strings.Count(text, "}}") {
		return errors.New(where + ": unbalanced {{ }}")
	}
	return nil
}

// isSetting reports whether name is a setting of the catalog by its own
// name: an outlier_detection field (by its snake_case Envoy name) or a
// scenario knob.
func isSetting(name string) bool {
	s, ok := settings.Lookup(name)
	return ok && s.Name == name
}

func checkSettingNames(where string, set map[string]string) string {
	for _, name := range slices.Sorted(maps.Keys(set)) {
		if _, ok := settings.Lookup(name); !ok {
			return fmt.Sprintf("%s: unknown setting %q (an outlier_detection field by its Envoy name, or a scenario knob)", where, name)
		}
	}
	return ""
}

// Merge lays maps over each other, later ones winning; nil maps are fine.
// A setting named by its alias (healthy_panic_threshold) is kept under its
// catalog name (panic_threshold), so either name overrides the other.
func Merge(layers ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range layers {
		for k, v := range m {
			if s, ok := settings.Lookup(k); ok {
				k = s.Name
			}
			out[k] = v
		}
	}
	return out
}

// SplitFrontMatter cuts a file into its YAML front matter and its markdown
// body: the one file format of lessons and of workshop plans (engine/plan).
func SplitFrontMatter(data []byte) (front []byte, body string, err error) {
	return splitFrontMatter(data)
}
