// Package view holds the view models the templates render: plain data,
// already formatted, with no engine types. The web package builds them
// from a run; templates only lay them out.
package view

import (
	"github.com/a-h/templ"

	"outlierlab/engine/explain"
)

// Layout is what every page's frame needs.
type Layout struct {
	Title string
	// Nav is the active section: "home", "lab", "lessons".
	Nav string
	// Asset URLs carry a content hash so they can be cached for good.
	// CSS is the stylesheet's files in order; AppJS the entry module
	// (web/static/js/main.js), which imports the others.
	CSS                            []string
	AppJS, Datastar, ECharts, Icon string
	// Modules are the modules AppJS imports, preloaded.
	Modules []string
	// ProgressJS is the home page's progress export and import (an ES
	// module of its own, web/static/progress.js); "" on other pages.
	ProgressJS string
	// Strip is shown first in the page's main: a workshop's bar, or
	// "Start a workshop" (nil: none).
	Strip templ.Component
}

// Home is the front page: the free lab and its presets, then the lessons.
type Home struct {
	Layout
	Presets []PresetLink
	Lessons []LessonLink
}

// PresetLink is one scenario preset on the home page or in the lab's menu.
type PresetLink struct {
	Name, Description, URL string
	Selected               bool
}

// LessonLink is one lesson in the course list, or a previous/next link.
type LessonLink struct {
	ID, Title, Summary, URL string
	Number, Minutes         int
	// StepIDs and Quiz let the page show the progress the browser keeps:
	// which steps are done, how many quiz questions answered.
	StepIDs []string
	Quiz    int
}

// NotFound is the 404 page: what was asked for and the way back.
type NotFound struct {
	Layout
	What    string
	Lessons []LessonLink
}

// BadRequest is the page for an address the lab cannot open: every
// problem, one line each naming its field and what is allowed, and the
// plain page to open instead.
type BadRequest struct {
	Layout
	Problems []string
	Plain    string
}

// HTML is markup the server rendered from a lesson's markdown (raw HTML in
// the source is dropped): templates write it as it is.
type HTML string

// Lesson is a lesson page: the prose on one side, its "Try this" steps and
// the lab on the other.
type Lesson struct {
	Layout
	ID, Title, Summary     string
	Number, Total, Minutes int
	Goals                  []HTML
	Body                   HTML
	Steps                  []Step
	// Predict is asked before the step BeforeStep; nil if the lesson has
	// none.
	Predict *Predict
	Quiz    []Question
	// Ending is what the lesson ends with (nil if its file has none).
	Ending *Ending
	// Streaks is the consecutive-5xx figure under the steps, for a
	// lesson a step of which names it (nil otherwise).
	Streaks *Streaks
	// Prev and Next are the neighbouring lessons (nil at either end).
	Prev, Next *LessonLink
	// Scenario is the preset the lesson starts from.
	Scenario string
	Lab      Lab
}

// Step is one "Try this": its instruction and its live status. A step with
// a scenario of its own (Preset) has a button that loads it.
type Step struct {
	ID     string
	Number int
	Text   HTML
	Preset string
	Status StepStatus
	// PredictFirst: the lesson's prediction is asked just before this step.
	PredictFirst bool
	// Key is the id of the step's key chart (course.Step.Charts[0]): the
	// page brings it into view when the step is made current. Now: the
	// step is the current one as the page is served (the first).
	Key string
	Now bool
}

// StepStatus is what the stream re-renders as the run and the cursor
// change: done or not yet, and what to do next.
type StepStatus struct {
	ID   string
	Done bool
	// Hint says what the learner still has to do ("step to 80 s").
	Hint string
	// Detail is what the check compared, with the numbers.
	Detail string
	// Back is set when the step is about another scenario than the one
	// loaded: the preset the button goes back to.
	Back string
}

// Predict is a predict-then-reveal question.
type Predict struct {
	BeforeStep string
	Question   HTML
	// Choices are in the order this learner sees them (course.ChoiceOrder);
	// Answer is the right one's place among them.
	Choices []Choice
	Answer  int
	Reveal  HTML
	// PauseAt is where playback waits for the answer ("30 s"; "" none).
	PauseAt string
	// Preset is the scenario the question is about (its step's): its
	// choices show only while that scenario is loaded, so it is answered
	// on the run it asks about (issue 38). Loaded is whether the page
	// opens on it; Step is the number of the step whose button loads it.
	Preset string
	Loaded bool
	Step   int
}

// Choice is one answer to a question as the page shows it: its text and
// its place in the lesson file (Index, the button's data-file). The
// page's data-choice, data-answer and the progress it stores count the
// places as shown, so "the answer is C" names the third button: the order
// is the same on every visit from one browser, and in one room.
type Choice struct {
	Index int
	Text  HTML
}

// Question is one end-of-lesson quiz question.
type Question struct {
	Number   int
	Question HTML
	// Choices are in the order this learner sees them (course.ChoiceOrder);
	// Answer is the right one's place among them.
	Choices []Choice
	Answer  int
	Explain HTML
}

// Projector is the View of a lab shown to a room: the charts, the status
// line and the last decisions only, in large type, with the settings as an
// overlay (css/lesson.css .lab.projector, js/fit.js fitChart). A page turns it on by
// setting Lab.View = Projector before rendering LabPanel or LessonLab (the
// lab and lesson pages do so for ?view=projector); the `p` key toggles it
// in the browser. Nothing else changes: the same stream, signals and
// commands drive it.
const Projector = "projector"

// Lab is the lab panel: controls, transport, charts, decision log and
// Envoy's view. Status and Panels are the parts the stream re-renders.
type Lab struct {
	Tab string
	// View is how the lab is laid out: "" the full lab, Projector the
	// room's view.
	View string
	// Title is the lab's heading (the page's <h1> on the free lab).
	Title string
	// Signals is the initial data-signals object (JSON): the tab id, the
	// inputs, the cursor and the speed.
	Signals string
	// InPlace: the lab is patched into a page that has one (a room's
	// page changing lesson in place): its element keeps the signals it
	// has (the stream patches them in order; an attribute's new value
	// would be applied after what the stream sends next).
	InPlace   bool
	StreamURL string
	Controls  Controls
	Charts    []Chart
	Speeds    []Speed
	Status    Status
	Panels    Panels
	// Link: the address bar holds the tab's permalink (the free lab), so
	// the transport offers to copy it.
	Link bool
	// Inject is the free lab's live fault injection (nil on a lesson page).
	Inject *Inject
	// Lint is lint's findings on the page's settings, drawn with the page
	// (empty: the panel asks for them when it loads).
	Lint LintPanel
	// Model is the free lab's "Model your cluster" box at the top of
	// /lab (nil elsewhere: a room's page renders the lab without it).
	Model *ClusterForm
}

// Inject is the "Inject a fault" control: a host menu, a button that makes
// the chosen host fail from the cursor on, and the injections in force,
// each with a remove button. The stream re-renders it with every run.
type Inject struct {
	Hosts  []string
	Active []Injection
}

// Injection is one injected fault: Entry is how the inject knob writes it
// ("h3@60s"), which the remove command names.
type Injection struct {
	Entry, Host, Time, How string
}

// Controls is the settings panel: the preset menu and every control. The
// stream re-renders it when the preset changes (other presets have other
// knobs).
type Controls struct {
	Preset      string
	Description string
	Presets     []PresetLink
	Groups      []ControlGroup
	// Fixed: a lesson page, whose steps load the scenarios; there is no
	// preset menu.
	Fixed bool
	// Focus: a lesson page's controls follow its current step (Control's
	// ShowIf), and an "All settings" toggle shows the others.
	Focus bool
}

// ControlGroup is a titled set of controls.
type ControlGroup struct {
	Title    string
	Controls []Control
	// Open groups are expanded when the page loads.
	Open bool
}

// Control is one slider, switch or select. Name is the Envoy field name
// (the input's name attribute); Signal is its Datastar signal path.
type Control struct {
	Name, Label, Help string
	Toggle            bool
	// Options make the control a select (lb_policy, fault_kind).
	Options        []Option
	Min, Max, Step string
	Value          string
	// Display is the value as shown ("34%", "k = 1.9", "30 s"); DisplayExpr
	// is the same as a Datastar expression, so it follows the slider live.
	Display, DisplayExpr string
	Signal               string
	// Range is the allowed range in words, for the accessible description.
	Range string
	// Field is the Envoy field the control sets, as printed under it
	// (Name, or a longer path such as circuit_breakers.thresholds.max_retries).
	Field string
	// Number: a number field beside the slider, for a value a slider
	// cannot land on (a long range, a finer step); NumberOnly: the number
	// field alone (a range no slider can hold). NumStep is its step;
	// NumSet is the Datastar expression that sets the signal from the
	// field and posts it; NumLabel names the field for assistive
	// technology when the slider has the visible label.
	Number, NumberOnly bool
	NumStep            string
	NumSet, NumLabel   string
	// Focus is a lesson page's Datastar expression, true while the control
	// is in view: a step about it is current, or all settings are asked
	// for (class off-step otherwise: css/lesson.css); Unfocused, as the
	// page is served (it is not the first step's).
	Focus     string
	Unfocused bool
}

// Option is one choice of a select.
type Option struct {
	Value    string
	Selected bool
}

// Chart is an empty chart box the stream fills with setOption calls.
type Chart struct {
	ID, Title, Caption string
	// Alt is what the chart shows at the cursor in one sentence, its text
	// alternative; the stream keeps it current (web/chart/charts.go).
	Alt string
	// Size is the box's CSS class: "wide" charts take the row, "half"
	// ones share it.
	Size string
	// Hidden keeps the box out of a page that does not talk about it (the
	// Envoy/gRPC strip in a lesson that never mentions gRPC); its chart
	// is still fed, so a room's page patched in place stays whole.
	Hidden bool
	// ShowIf, for a box only some runs need, is a Datastar expression
	// over the page's signals that shows it (data-show), and Off whether
	// it starts out of view for the run the page is drawn with.
	ShowIf string
	// ShowControl is the control whose signal ShowIf reads.
	ShowControl string
	// Focus, Unfocused and Key: a lesson page's box is in view while a
	// step about it is current or all charts are asked for (as Control's),
	// and is the key chart (class key: first in the grid) while a step it
	// is key to is current (Key, its expression; IsKey as served).
	Focus     string
	Unfocused bool
	Key       string
	IsKey     bool
	Off       bool
}

// Speed is one playback speed button.
type Speed struct {
	Value, Label, Title string
}

// Status is the transport bar's live part.
type Status struct {
	Cursor, Frames int
	// Time is the current frame's tick ("40 s"), End the run's last.
	Time, End string
	Playing   bool
	Speed     string
	// SpeedLabel is the speed in words: "4 intervals/s", "instant".
	SpeedLabel string
	// Notice is the last rejected input, shown until the next change.
	Notice string
	// Held: playback waits at a pause until a question is answered: the
	// lesson's prediction, or a workshop's question (HeldFor says which the
	// page can show).
	Held bool
	// HeldFor is where the held page's question is: "prediction" (a lesson
	// page outside a workshop: under "Try this"), "room" (the free lab in
	// a workshop: only the workshop's question can hold it), "either" (a
	// lesson page in a workshop).
	HeldFor string
	// Summary is one line about the run so far (failures seen by clients,
	// ejections, overflows).
	Summary string
	// IntervalMs is the time between frames: the go-to-time box turns a
	// time into a cursor with it.
	IntervalMs int64
}

// Panels are the parts below the charts.
type Panels struct {
	Log     []LogEntry
	Omitted int // older log entries not rendered
	// Stats are the stat table's sections, each under the prefix Envoy
	// prints: the cluster's own stats (cluster.<name>.) and its outlier
	// detector's (cluster.<name>.outlier_detection.).
	Stats   []StatSection
	Hosts   []HostRow
	YAML    string
	Cluster string
}

// StatSection is the stats that share one prefix.
type StatSection struct {
	// Prefix is what every name in the section starts with:
	// "cluster.search-cache.outlier_detection.".
	Prefix string
	// Title says in words whose stats they are.
	Title string
	Rows  []StatRow
}

// LogEntry is one decision of the detector (or one decision not taken) as
// a sentence. Tone drives the badge and colour; Badge says the same in
// words so colour is never the only cue.
type LogEntry struct {
	// ID is the entry's element id, stable while the run plays: a run of
	// like non-events keeps the id of its first, so the stream can replace
	// it as it grows.
	ID    string
	Time  string
	Tone  string // eject, overflow, detect, return, skip, info
	Badge string
	Parts []Span
	// Quiet: a non-event (a pass skipped or finding nobody, a host not
	// counted), which the log's "decisions only" filter hides.
	Quiet bool
	// Count is how many intervals in a row said the same non-event (the
	// entry stands for them all, its sentence the newest one's); Time is
	// then their span, "190–300 s". 0 or 1: a single entry.
	Count int
	// Fold is what two quiet entries must share to be folded together:
	// the outcome and the words, not the numbers.
	Fold string
}

// Span is part of a sentence, as the engine's explainer made it: words, an
// Envoy field (rendered as code), a number with its unit, a host.
type Span = explain.Span

// Text is the sentence without its time.
func (e LogEntry) Text() string { return explain.Sentence{Spans: e.Parts}.Text() }

// String is the sentence as the design notes write it: "40 s: h5 …".
func (e LogEntry) String() string { return e.Time + ": " + e.Text() }

// StatRow is one stat at the cursor.
type StatRow struct {
	Name  string // the part after the prefix: "ejections_active"
	Value uint64
	// Delta is the change in the current interval (0: unchanged).
	Delta uint64
	Gauge bool
}

// HostRow is one host as Envoy's admin /clusters page would print it.
type HostRow struct {
	Name        string
	Prefix      string // "search-cache::h5::"
	HealthFlags string // "healthy" or "/failed_outlier_check"
	SuccessRate string // "66.7" or "-1" (not evaluated)
	Requests    uint64
	Ejections   uint32
	Multiplier  uint32
	ReturnsIn   string
	Share       string
	Ejected     bool
}

// Glossary is the /glossary page: the course's words.
type Glossary struct {
	Layout
	Terms []GlossaryEntry
}

// GlossaryEntry is one word: its anchor, its meaning, the settings and
// stats behind it and the Envoy function it rests on.
type GlossaryEntry struct {
	ID, Name string
	Text     HTML
	Fields   []GlossaryField
	Stats    []string
	Envoy    string
}

// GlossaryField is a setting by Envoy's name, with its default and where
// it lives outside outlier_detection ("" for an outlier_detection field).
type GlossaryField struct {
	Name, Default, Where string
}

// Streaks is the consecutive-5xx figure of a lesson (a step's figure:
// streaks): each host's counter at the cursor's tick against the
// threshold, and the most it reached in the interval before the tick.
// The numbers are the engine's (scenario.HostFrame.Consecutive5xx and
// Peak5xx); labview.Streaks words them, the lab sets Focus.
type Streaks struct {
	// Focus is the expression "a step about the figure is current" (or
	// all charts), Unfocused whether it is not as the page is served.
	Focus     string
	Unfocused bool
	// Caption says what is drawn at this cursor; Off, when set, why no
	// counter is (the detector is off, or the dialect keeps none).
	Caption string
	Off     string
	// Cells is how many boxes a row draws (the threshold, at most
	// MaxStreakCells: past it a box stands for several failures).
	Cells int
	Hosts []StreakHost
}

// MaxStreakCells bounds a row's boxes.
const MaxStreakCells = 20

// StreakHost is one host's row: Now and Peak in boxes (0..Cells), Text
// the row in words (its accessible content too).
type StreakHost struct {
	Name      string
	Now, Peak int
	Ejected   bool
	Text      string
}
