// Package scenes is the workshop plans as the rooms play them (issue 23):
// a room started from a plan ("plan:ID") records the plan and the scene it
// is on in its state; the instructor steps through the scenes and the room
// follows, as it follows any state. This package is what a scene is on the
// lab: the state a room takes on it (its lesson step or preset, settings,
// faults, spotlight, cursor), its panel and the board's line for it, its
// question (asked in one click, answered by the engine on the room's run),
// and the plan's printable handout. The rooms (web/room) serve the scene
// routes and keep the room's state; nothing here reads the bus.
package scenes

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"outlierlab/engine/course"
	"outlierlab/engine/plan"
	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/lessonbook"
	"outlierlab/web/room/record"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// Book is the plans the server offers, in file-name order, on the lab
// whose lessons they name and whose runs their scenes show.
type Book struct {
	list []*plan.Plan
	byID map[string]*plan.Plan
	lab  *lab.Lab
}

// Load reads the plan files of fsys (nil: none), validated against the
// lab's lessons: a plan naming a lesson or a step the server does not have
// would break a room at its first scene, so it is refused at start-up, not
// in class.
func Load(fsys fs.FS, l *lab.Lab) (*Book, error) {
	lessons := l.Lessons
	if fsys == nil {
		return &Book{byID: map[string]*plan.Plan{}, lab: l}, nil
	}
	ls := make([]course.Lesson, 0, len(lessons.List))
	for _, d := range lessons.List {
		ls = append(ls, d.Lesson)
	}
	ps, err := plan.Load(fsys, ls)
	if err != nil {
		return nil, fmt.Errorf("plans: %w", err)
	}
	b := &Book{byID: map[string]*plan.Plan{}, lab: l}
	var errs []error
	for i := range ps {
		p := &ps[i]
		for j := range p.Scenes {
			sc := &p.Scenes[j]
			if _, err := Controls(sc.State.Settings, sceneBase(lessons, sc)); err != nil {
				errs = append(errs, fmt.Errorf("plans: %s: scenes[%d] (%s).settings: %w", p.File, j, sc.ID, err))
			}
		}
		b.list = append(b.list, p)
		b.byID[p.ID] = p
	}
	return b, errors.Join(errs...)
}

// CheckChallenges refuses a plan whose challenge scene names a challenge
// the server does not grade (ids): serve -plans DIR holds an instructor's
// plans to what plan -check holds them to, naming the file and line, at
// start-up rather than at the scene in class (plan.CheckChallenges).
func (b *Book) CheckChallenges(ids []string) error {
	ps := make([]plan.Plan, len(b.list))
	for i, p := range b.list {
		ps[i] = *p
	}
	if err := plan.CheckChallenges(ps, ids); err != nil {
		return fmt.Errorf("plans: %w", err)
	}
	return nil
}

// sceneBase is what the room's lesson page sets before any control at a
// scene's step (nil for a preset's scene): the start of the step.
func sceneBase(lessons *lessonbook.Book, sc *plan.Scene) map[string]string {
	if d := lessons.ByID[sc.Lesson]; d != nil {
		return d.Inputs(sc.Step).Base
	}
	return nil
}

// Links are the plans as "Start a workshop" offers them.
func (b *Book) Links() []view.PlanLink {
	if b == nil {
		return nil
	}
	out := make([]view.PlanLink, 0, len(b.list))
	for _, p := range b.list {
		out = append(out, view.PlanLink{ID: p.ID, Title: p.Title, Minutes: p.Minutes})
	}
	return out
}

// Start is a room on plan id's first scene.
func (b *Book) Start(id string) (record.State, error) {
	p := b.byID[id]
	if p == nil {
		return record.State{}, httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "start", Msg: fmt.Sprintf("%q is not a plan", httperr.Truncate(id, 40))})
	}
	return b.State(record.State{Plan: p.ID, Speed: tabstate.Speeds[0].Name}, p, 0, 0)
}

// State is st put on scene i of p: the scene's lesson step or preset,
// its settings as the lab's control values, its faults, its spotlight,
// and its cursor (paused) or the start of its play range (playing from
// nowMs). Playback speed and the room's other tools are st's.
func (b *Book) State(st record.State, p *plan.Plan, i int, nowMs int64) (record.State, error) {
	sc := &p.Scenes[i]
	next := record.State{Speed: st.Speed, Lesson: sc.Lesson, Step: sc.Step, Preset: sc.Preset}
	next.KeepTools(&st)
	next.Plan, next.Scene = p.ID, i // after KeepTools, which keeps st's
	next.Pick = nil                 // a challenge's spotlight goes with its scene
	if next.Explore != nil && next.Explore.Scene != i {
		next.Explore = nil // the last scene's timer is not this one's
	}
	if q := next.Question; q != nil && q.Revealed && (q.Scene == nil || *q.Scene != i) {
		// Another scene's revealed question is done: it goes with its
		// scene (its answers stay in the recording and the handout). One
		// still open stays, to be answered and revealed back on its scene.
		next.Question = nil
	}
	next.MarkVisited(i)
	if next.Speed == "" {
		next.Speed = tabstate.Speeds[0].Name
	}
	if sc.Lesson != "" {
		d := b.lab.Lessons.ByID[sc.Lesson]
		if d == nil {
			return st, fmt.Errorf("plan %s, scene %s: %q is not a lesson here", p.ID, sc.ID, sc.Lesson)
		}
		next.Preset = d.PresetFor(sc.Step)
	}
	cfg, err := Controls(sc.State.Settings, sceneBase(b.lab.Lessons, sc))
	if err != nil {
		return st, fmt.Errorf("plan %s, scene %s: %w", p.ID, sc.ID, err)
	}
	next.Cfg = cfg
	next.Inject = strings.Join(sc.Inject, ",")
	in, _, err := next.Inputs(b.lab.Lessons)
	if err != nil {
		return st, fmt.Errorf("plan %s, scene %s: %w", p.ID, sc.ID, err)
	}
	run, err := b.lab.Runs.Get(in)
	if err != nil {
		return st, err
	}
	at, playing := sc.Cursor, false
	if sc.Play != nil {
		at, playing = sc.Play.From, true
	}
	next.Anchor, next.Playing, next.AnchorAtMs = cursorOf(run, at), playing, nowMs
	// A scene's spotlight is the author's; a scene without one clears the
	// last scene's, which would point at a moment of another run.
	next.Spot = sceneSpot(sc.Spotlight, run)
	return next, nil
}

// sceneSpot is a scene's spotlight as the room carries it (seconds; End
// is the run's last frame), nil for none.
func sceneSpot(sp *plan.Spotlight, run *tabstate.Run) *record.Spot {
	if sp == nil {
		return nil
	}
	out := &record.Spot{Host: sp.Host}
	if sp.To != 0 {
		to := int64(sp.To)
		if sp.To == course.End && len(run.Frames) > 0 {
			to = run.Frames[len(run.Frames)-1].TMs
		}
		out.From, out.To = float64(sp.From)/1000, float64(to)/1000
	}
	return out
}

// Controls is what the room's controls must hold, by the lab's
// control names, for the run to be the scene's: every setting of the
// scene's state (course names, values as typed) that base (the lesson
// page's start of the step) does not already set so. A step's scene shows
// the step's intended settings, as plan -check ran it (a lesson page
// loads a step at its start and leaves the change to the learner).
func Controls(state, base map[string]string) (map[string]float64, error) {
	var out map[string]float64
	for name, raw := range state {
		if name == "inject" || base[name] == raw {
			continue // faults travel as the room's Inject
		}
		c := tabstate.LookupControl(name)
		if c == nil {
			return nil, fmt.Errorf("setting %s: the lab has no control for it", name)
		}
		v, ok := c.Number(raw)
		if !ok {
			return nil, fmt.Errorf("setting %s: %q is not a value its control can show", name, raw)
		}
		if err := c.Check(v); err != nil {
			return nil, fmt.Errorf("setting %s: %w", name, err)
		}
		if out == nil {
			out = map[string]float64{}
		}
		out[c.Name] = v
	}
	return out, nil
}

// cursorOf is the cursor (frames shown) at ms: every frame at or before
// it, as a permalink's t is read; course.End is the last frame.
func cursorOf(run *tabstate.Run, ms course.Ms) int {
	if ms == course.End {
		return len(run.Frames)
	}
	return tabstate.FramesAt(run, int64(ms))
}

// Plan is plan id (nil: not one of the server's).
func (b *Book) Plan(id string) *plan.Plan { return b.byID[id] }
