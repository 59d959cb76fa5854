package room

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"outlierlab/web/lessonbook"
	"outlierlab/web/room/record"
	"strings"

	"outlierlab/engine/course"
	"outlierlab/engine/plan"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// Workshop plans (issue 23): a room started from a plan ("plan:ID") records
// the plan and the scene it is on in its state; the instructor steps
// through the scenes and the room follows, as it follows any state.
//
//	POST /r/{code}/scene   {"tab":…, "scene": N} or ?scene=N   (key)

// planBook is the plans the server offers, in file-name order.
type planBook struct {
	list []*plan.Plan
	byID map[string]*plan.Plan
}

// loadPlans reads the plan files of fsys (nil: none),
// validated against the course's lessons: a plan naming a lesson or a
// step the server does not have would break a room at its first scene, so
// it is refused at start-up, not in class.
func loadPlans(fsys fs.FS, lessons *lessonbook.Book) (*planBook, error) {
	if fsys == nil {
		return &planBook{byID: map[string]*plan.Plan{}}, nil
	}
	ls := make([]course.Lesson, 0, len(lessons.List))
	for _, d := range lessons.List {
		ls = append(ls, d.Lesson)
	}
	ps, err := plan.Load(fsys, ls)
	if err != nil {
		return nil, fmt.Errorf("plans: %w", err)
	}
	b := &planBook{byID: map[string]*plan.Plan{}}
	var errs []error
	for i := range ps {
		p := &ps[i]
		for j := range p.Scenes {
			sc := &p.Scenes[j]
			if _, err := sceneControls(sc.State.Settings, sceneBase(lessons, sc)); err != nil {
				errs = append(errs, fmt.Errorf("plans: %s: scenes[%d] (%s).settings: %w", p.File, j, sc.ID, err))
			}
		}
		b.list = append(b.list, p)
		b.byID[p.ID] = p
	}
	return b, errors.Join(errs...)
}

// sceneBase is what the room's lesson page sets before any control at a
// scene's step (nil for a preset's scene): the start of the step.
func sceneBase(lessons *lessonbook.Book, sc *plan.Scene) map[string]string {
	if d := lessons.ByID[sc.Lesson]; d != nil {
		return d.Inputs(sc.Step).Base
	}
	return nil
}

// links are the plans as "Start a workshop" offers them.
func (b *planBook) links() []view.PlanLink {
	if b == nil {
		return nil
	}
	out := make([]view.PlanLink, 0, len(b.list))
	for _, p := range b.list {
		out = append(out, view.PlanLink{ID: p.ID, Title: p.Title, Minutes: p.Minutes})
	}
	return out
}

// startPlan is a room on plan id's first scene.
func (s *Workshops) startPlan(id string) (record.State, error) {
	p := s.plans.byID[id]
	if p == nil {
		return record.State{}, httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "start", Msg: fmt.Sprintf("%q is not a plan", httperr.Truncate(id, 40))})
	}
	return s.sceneState(record.State{Plan: p.ID, Speed: tabstate.Speeds[0].Name}, p, 0, 0)
}

// sceneState is st put on scene i of p: the scene's lesson step or preset,
// its settings as the lab's control values, its faults, its spotlight,
// and its cursor (paused) or the start of its play range (playing from
// nowMs). Playback speed and the room's other tools are st's.
func (s *Workshops) sceneState(st record.State, p *plan.Plan, i int, nowMs int64) (record.State, error) {
	sc := &p.Scenes[i]
	next := record.State{Speed: st.Speed, Lesson: sc.Lesson, Step: sc.Step, Preset: sc.Preset}
	next.KeepTools(&st)
	next.Plan, next.Scene = p.ID, i // after keepTools, which keeps st's
	if next.Explore != nil && next.Explore.Scene != i {
		next.Explore = nil // the last scene's timer is not this one's
	}
	next.MarkVisited(i)
	if next.Speed == "" {
		next.Speed = tabstate.Speeds[0].Name
	}
	if sc.Lesson != "" {
		d := s.Lessons.ByID[sc.Lesson]
		if d == nil {
			return st, fmt.Errorf("plan %s, scene %s: %q is not a lesson here", p.ID, sc.ID, sc.Lesson)
		}
		next.Preset = d.PresetFor(sc.Step)
	}
	cfg, err := sceneControls(sc.State.Settings, sceneBase(s.Lessons, sc))
	if err != nil {
		return st, fmt.Errorf("plan %s, scene %s: %w", p.ID, sc.ID, err)
	}
	next.Cfg = cfg
	next.Inject = strings.Join(sc.Inject, ",")
	in, _, err := next.Inputs(s.Lessons)
	if err != nil {
		return st, fmt.Errorf("plan %s, scene %s: %w", p.ID, sc.ID, err)
	}
	run, err := s.Runs.Get(in)
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

// sceneControls is what the room's controls must hold, by the lab's
// control names, for the run to be the scene's: every setting of the
// scene's state (course names, values as typed) that base (the lesson
// page's start of the step) does not already set so. A step's scene shows
// the step's intended settings, as plan -check ran it (a lesson page
// loads a step at its start and leaves the change to the learner).
func sceneControls(state, base map[string]string) (map[string]float64, error) {
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

// sceneRequest is /scene's body. The page's other signals come with it
// (Datastar posts them all) and are ignored.
type sceneRequest struct {
	Tab   string `json:"tab"`
	Scene *int   `json:"scene"`
}

// sceneRoom handles POST /r/{code}/scene: the room goes to a scene of its
// plan, and the instructor's tab with it.
func (s *Workshops) sceneRoom(w http.ResponseWriter, r *http.Request) {
	code, rec, ok := s.roomAPI(w, r, true)
	if !ok {
		return
	}
	var req sceneRequest
	if err := s.readJSON(r, &req); err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	if err := sceneParam(r, &req.Scene); err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	p, ok := s.roomPlan(w, code, &rec, "scenes")
	if !ok {
		return
	}
	if err := sceneInRange(p, req.Scene); err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	n, now := *req.Scene, s.Now().UnixMilli()
	_, rev, err := s.rooms.updateState(r.Context(), code, "scene", func(st *record.State) error {
		next, err := s.sceneState(*st, p, n, now)
		if err != nil {
			return err
		}
		*st = next
		return nil
	})
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	s.resyncTab(code, req.Tab, rev)
	s.Log.Info("room scene", "room", code, "plan", p.ID, "scene", n)
	writeJSON(w, r, http.StatusOK, map[string]any{"scene": n, "id": p.Scenes[n].ID, "title": p.Scenes[n].Title})
}

// roomPlan is the plan rec's room was started from; a room without one
// is answered 409 naming scene: it has no what ("scenes").
func (s *Workshops) roomPlan(w http.ResponseWriter, code string, rec *record.Record, what string) (*plan.Plan, bool) {
	p := s.plans.byID[rec.State.Plan]
	if p == nil {
		httperr.Write(w, httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "scene", Msg: "room " + code + " was not started from a plan: it has no " + what}), httperr.KindConflict)
	}
	return p, p != nil
}

// sceneView is the room's scene as role sees it: every role the title;
// the instructor the scene list, the notes (with the run's numbers) and
// the explore timer. nil when the room follows no plan.
func (s *Workshops) sceneView(code, role string, st *record.State) *view.RoomScene {
	p := s.plans.byID[st.Plan]
	if p == nil || st.Scene < 0 || st.Scene >= len(p.Scenes) {
		return nil
	}
	sc := &p.Scenes[st.Scene]
	v := &view.RoomScene{Code: code, Role: role, Plan: p.Title, Index: st.Scene, Count: len(p.Scenes), Title: sc.Title}
	if role != "present" {
		return v // the notes are the instructor's alone
	}
	for _, o := range p.Scenes {
		v.Scenes = append(v.Scenes, o.Title)
	}
	v.ExploreMinutes = sc.ExploreMinutes
	v.Question, v.Expect = sceneAsk(sc)
	v.Notes = s.sceneNotes(st, sc)
	return v
}

// sceneNotes is a scene's notes as HTML, their placeholders filled from
// the room's run.
func (s *Workshops) sceneNotes(st *record.State, sc *plan.Scene) view.HTML {
	text := sc.Notes
	if in, _, err := st.Inputs(s.Lessons); err == nil {
		if run, err := s.Runs.Get(in); err == nil {
			text = sc.NotesOn(run.Result)
		}
	}
	var buf bytes.Buffer
	if err := lessonbook.Markdown.Convert([]byte(text), &buf); err != nil {
		return view.HTML("<p>" + template.HTMLEscapeString(text) + "</p>")
	}
	return view.HTML(buf.String())
}
