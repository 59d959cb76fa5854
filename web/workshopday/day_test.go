package workshopday_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outlierlab/engine/course"
	"outlierlab/engine/plan"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/lessons"
	"outlierlab/plans"
	"outlierlab/web/room/question"
	"outlierlab/web/tabstate"
)

// How long a page may take to show what the room shows: after a move
// (a person looking up at the projector), and after a replica or NATS
// node went down (the page reconnects by itself).
const (
	followWithin    = 3 * time.Second
	reconnectWithin = 10 * time.Second
	loadWithin      = 15 * time.Second // a page opened (the first load)
)

// TestWorkshopDay is a workshop day in the production setup: every
// shipped plan, played through nginx (round robin, no stickiness) to two
// replicas on a 3-node NATS cluster by an instructor (1280×720) with a
// second tab of the same browser, a projector (853×480) and four
// attendees (three phones at 390×844, a laptop at 1280×720). The
// instructor starts each room on the home page and clicks Next through
// every scene; after every move every page shows the scene (its title,
// its lesson or preset, its settings, its cursor, paused, and no other
// scene's question) within 3 s, without a reload. A scene's question is
// asked, every attendee answers it with the page's buttons, each page
// shows it, the instructor's count and each reveal count every answer.
// On the way a replica is killed (SIGKILL, started again after the next
// move), both replicas restarted one after the other (SIGTERM), and a
// NATS node killed (SIGKILL, started again after the next move): each
// page whose stream was cut shows that it is reconnecting, and every page
// follows the next move within 10 s by itself. At the end the room's
// recording has every move once.
func TestWorkshopDay(t *testing.T) {
	needTools(t, true)
	began := time.Now()
	art := t.ArtifactDir()
	d := startDeployment(t, art)
	t.Logf("deployment up after %v (nginx %s; logs and screenshots in %s)", time.Since(began).Round(time.Millisecond), d.Base, art)
	ps := startPeople(t, 15*time.Minute)
	book := loadBook(t)

	// The day's accidents, after a scene of a plan (0-based): a replica
	// killed in the first plan's second scene, both restarted in its
	// fourth, a NATS node killed in the next plan's third.
	type slot struct{ plan, scene int }
	accidents := map[slot]accident{{0, 1}: killReplica, {0, 3}: restartReplicas, {1, 2}: killNATSNode}
	if len(book.plans) == 1 {
		accidents = map[slot]accident{{0, 1}: killReplica, {0, 3}: restartReplicas, {0, 4}: killNATSNode}
	}
	for i, pl := range book.plans {
		t.Run(pl.ID, func(t *testing.T) {
			day := &dayRun{t: t, d: d, ps: ps, book: book, plan: pl, shots: art}
			day.accidents = map[int]accident{}
			for s, a := range accidents {
				if s.plan == i {
					day.accidents[s.scene] = a
				}
			}
			day.shoot = i == 0
			day.run()
		})
	}
	t.Logf("the day took %v", time.Since(began).Round(time.Millisecond))
}

// book is what the test knows of the plans and lessons, from the same
// files the replicas embed.
type book struct {
	plans   []plan.Plan
	lessons map[string]course.Lesson
}

func loadBook(t *testing.T) *book {
	t.Helper()
	ls, err := course.Load(lessons.FS)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := plan.Load(plans.FS, ls)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		t.Fatal("no shipped plan")
	}
	b := &book{plans: ps, lessons: map[string]course.Lesson{}}
	for _, l := range ls {
		b.lessons[l.ID] = l
	}
	return b
}

// dayRun is one plan played in one room.
type dayRun struct {
	t         *testing.T
	d         *deployment
	ps        *people
	book      *book
	plan      plan.Plan
	code, key string
	accidents map[int]accident
	shoot     bool
	shots     string
	// after is what the last accident left to do after the next move
	// (start again what it killed).
	after func()
	// moves is what the recording should have, in order: "scene N",
	// "question N", "reveal N" (N from 1).
	moves []string
}

func (r *dayRun) run() {
	t := r.t
	started := time.Now()
	r.startRoom()
	r.joinRoom()
	for i := range r.plan.Scenes {
		within := followWithin
		if i > 0 {
			if r.after != nil {
				within = reconnectWithin
			}
			r.next(i, within)
			if r.after != nil {
				r.after()
				r.after = nil
			}
		}
		if r.plan.Scenes[i].Question != nil {
			r.askAndReveal(i)
		}
		if a, ok := r.accidents[i]; ok {
			r.after = a(r)
		}
	}
	if r.after != nil {
		r.after()
	}
	r.checkRecording()
	t.Logf("plan %s: %d scenes in %v", r.plan.ID, len(r.plan.Scenes), time.Since(started).Round(time.Millisecond))
}

// startRoom: the instructor starts the workshop on the home page, picking
// the plan in "Start a workshop".
func (r *dayRun) startRoom() {
	t, in := r.t, r.ps.instructor
	if err := in.navigate(r.d.Base, "/"); err != nil {
		t.Fatalf("%s: the home page: %v", in, err)
	}
	if err := chromedp.Do(in.ctx, chromedp.WaitVisible(chromedp.CSS("#room-start-from")),
		chromedp.SetValue(chromedp.CSS("#room-start-from"), "plan:"+r.plan.ID)); err != nil {
		t.Fatalf("%s: the home page's Start a workshop: %v", in, err)
	}
	if err := in.click("#btn-start-room"); err != nil {
		t.Fatalf("%s: Start: %v", in, err)
	}
	code, err := poll[string](in, `location.pathname.match(/^\/r\/([A-Z0-9]{6})\/present$/)?.[1]`, loadWithin)
	if err != nil {
		t.Fatalf("%s: the instructor page after Start: %v (%s)", in, err, in.snap())
	}
	r.code = code
	// The address bar changes when the navigation commits, before the
	// document is parsed: wait for the link the server rendered (CI at load
	// 8.9 read the page while it was still loading and found no link).
	link, err := poll[string](in, `(document.getElementById('room-handover-link') || {}).textContent || ''`, loadWithin)
	if u, perr := url.Parse(strings.TrimSpace(link)); err == nil && perr == nil {
		r.key = u.Query().Get("key")
	}
	if r.key == "" {
		t.Errorf("%s: no instructor link with the key on the present page (%q)", in, link)
	}
	t.Logf("room %s from plan %s (%d scenes)", r.code, r.plan.ID, len(r.plan.Scenes))
}

// joinRoom: the instructor's second tab opens the present page, the
// projector its view, the attendees join with the code (the home page's
// join box goes to /r?code=CODE); every page shows the first scene.
func (r *dayRun) joinRoom() {
	t := r.t
	for _, p := range r.ps.all() {
		p.newRoom()
	}
	errs := each(r.ps.all()[1:], func(p *page) error {
		path := "/r?code=" + r.code
		switch p.role {
		case "present":
			path = "/r/" + r.code + "/present"
		case "projector":
			path = "/r/" + r.code + "/projector"
		}
		return p.navigate(r.d.Base, path)
	})
	for p, err := range errs {
		t.Errorf("%s: open the room: %v", p, err)
	}
	for _, p := range r.ps.all() {
		n, err := poll[int](p, `+(sessionStorage.getItem('wdLoads') || 0)`, loadWithin)
		if err != nil {
			t.Fatalf("%s: its loads: %v", p, err)
		}
		p.loads = n
	}
	r.moves = append(r.moves, "start 1")
	checkPages(t, r.sceneWhat(0, "the room opened"), r.ps.all(), time.Now(), loadWithin, r.sceneWant(0))
}

// next: an instructor tab that shows scene i-1 clicks Next (the first
// tab, unless it is behind); every page shows scene i within.
func (r *dayRun) next(i int, within time.Duration) {
	t := r.t
	mover := r.mover(i - 1)
	start := time.Now()
	if err := mover.click("#btn-scene-next"); err != nil {
		t.Fatalf("%s: Next to scene %d: %v", mover, i+1, err)
	}
	r.moves = append(r.moves, "scene "+strconv.Itoa(i+1))
	wantFor := r.sceneWant(i)
	if within > followWithin {
		// After an accident: following again, and no longer saying it
		// is reconnecting.
		wantFor = func(p *page) (want, bool) {
			w, ok := r.sceneWant(i)(p)
			w.NotReconnect = true
			return w, ok
		}
	}
	checkPages(t, r.sceneWhat(i, "after Next on "+mover.name), r.ps.all(), start, within, wantFor)
}

// mover is the instructor tab a person would use at scene i: the first,
// or the second when the first does not show the scene.
func (r *dayRun) mover(i int) *page {
	w := want{SceneN: r.sceneN(i)}
	for _, p := range []*page{r.ps.instructor, r.ps.instructor2} {
		if p.shows(w, time.Now().Add(time.Second)) == nil {
			return p
		}
	}
	r.t.Fatalf("no instructor tab shows scene %d (%s / %s): the workshop cannot go on", i+1, r.ps.instructor.snap(), r.ps.instructor2.snap())
	return nil
}

func (r *dayRun) sceneN(i int) string {
	return fmt.Sprintf("Scene %d of %d:", i+1, len(r.plan.Scenes))
}

func (r *dayRun) sceneWhat(i int, what string) string {
	return fmt.Sprintf("plan %s, scene %d %q, %s", r.plan.ID, i+1, r.plan.Scenes[i].Title, what)
}

// sceneWant is what each page shows at scene i: its title and number;
// its lesson's title (the instructor's and attendees' pages; the
// projector shows no title) or, for a preset's scene, none; the preset
// the run is of; every setting the page has a control for; the cursor,
// paused; no question but this scene's; the present pages also the
// scene's question to ask.
func (r *dayRun) sceneWant(i int) func(*page) (want, bool) {
	sc := &r.plan.Scenes[i]
	w := want{Scene: sc.Title, SceneN: r.sceneN(i), Preset: sc.State.Preset, Controls: r.controls(sc),
		Time: "t = " + cursorText(sc), State: "paused", QNotOther: ptr(questionText(sc))}
	lesson := ""
	if sc.Lesson != "" {
		lesson = r.book.lessons[sc.Lesson].Title
	}
	return func(p *page) (want, bool) {
		pw := w
		pw.Loads = &p.loads
		if p.role != "projector" {
			pw.Lesson = &lesson
		}
		if p.role == "present" {
			q := ""
			if sc.Question != nil {
				q = sc.Question.Words()
			}
			pw.SceneQuestion = &q
		}
		return pw, true
	}
}

// controls is the value of every setting of the scene's run, by the
// lab's control names, as the controls hold them.
func (r *dayRun) controls(sc *plan.Scene) map[string]ctlValue {
	p, ok := scenario.Lookup(sc.State.Preset)
	if !ok {
		r.t.Fatalf("scene %s: no preset %s", sc.ID, sc.State.Preset)
	}
	s, cfg, err := settings.Apply(p, sc.State.Settings)
	if err != nil {
		r.t.Fatalf("scene %s: %v", sc.ID, err)
	}
	out := map[string]ctlValue{}
	for name, raw := range settings.Values(s, cfg) {
		c := tabstate.LookupControl(name)
		if c == nil {
			continue
		}
		if c.Kind == tabstate.KindChoice {
			out[c.Name] = ctlValue{Str: ptr(raw)}
			continue
		}
		if v, ok := c.Number(raw); ok {
			out[c.Name] = ctlValue{Num: ptr(v)}
		}
	}
	return out
}

// cursorText is the status line's time at the scene's cursor.
func cursorText(sc *plan.Scene) string {
	ms := sc.Cursor
	if sc.Play != nil {
		ms = sc.Play.From
	}
	if ms == course.End {
		ms = course.Ms(sc.EndMs)
	}
	return ms.String()
}

// questionText is the scene's question as the question panel heads it
// ("" for a scene without one).
func questionText(sc *plan.Scene) string {
	if sc.Question == nil {
		return ""
	}
	return "Question: " + sc.Question.Words()
}

// askAndReveal: the instructor asks scene i's question (the scene's "Ask
// the room"); every page shows it; each attendee answers with the page's
// buttons (the k-th the k-th choice, or the number k); the instructor
// tabs count the answers; Reveal; every page shows the histogram with
// every answer counted and the plan's answer.
func (r *dayRun) askAndReveal(i int) {
	t, sc := r.t, &r.plan.Scenes[i]
	mover := r.mover(i)
	start := time.Now()
	if err := mover.click("#btn-scene-ask"); err != nil {
		t.Errorf("%s: Ask the room at scene %d: %v", mover, i+1, err)
		return
	}
	r.moves = append(r.moves, "question "+strconv.Itoa(i+1))
	text := questionText(sc)
	checkPages(t, r.sceneWhat(i, "its question asked"), r.ps.all(), start, followWithin, func(p *page) (want, bool) {
		return want{QOpen: text}, true
	})
	if r.shoot && i == 2 {
		r.screenshots(i)
	}

	// The pages offer a choice question's choices in the room's order
	// (shuffled by its code, web/room/question); yes and no as they are.
	choices := sc.Question.ChoiceTexts()
	if cs := choices; sc.Question.Kind == plan.KindChoice {
		choices = nil
		for _, k := range course.ChoiceOrder(r.code, question.PlanChoiceKey(r.plan.ID, i), len(cs)) {
			choices = append(choices, cs[k])
		}
	}
	answerOf := func(k int) string {
		if len(choices) > 0 {
			return choices[k%len(choices)]
		}
		return strconv.Itoa(k % 3)
	}
	idx := map[*page]int{}
	for k, p := range r.ps.attendees {
		idx[p] = k
	}
	errs := each(r.ps.attendees, func(p *page) error { return answer(p, choices, answerOf(idx[p])) })
	answered := len(r.ps.attendees) - len(errs)
	for p, err := range errs {
		t.Errorf("%s, %s answers: %v", r.sceneWhat(i, "its question"), p, err)
	}
	checkPages(t, r.sceneWhat(i, fmt.Sprintf("%d answers in", answered)), []*page{r.ps.instructor, r.ps.instructor2}, time.Now(), followWithin, func(p *page) (want, bool) {
		return want{Count: strconv.Itoa(answered)}, true
	})

	mover = r.mover(i)
	start = time.Now()
	if err := mover.click("#btn-reveal"); err != nil {
		t.Errorf("%s: Reveal at scene %d: %v (%s)", mover, i+1, err, mover.snap())
		return
	}
	r.moves = append(r.moves, "reveal "+strconv.Itoa(i+1))
	checkPages(t, r.sceneWhat(i, "its question revealed"), r.ps.all(), start, followWithin, func(p *page) (want, bool) {
		return want{QRevealed: &revealed{Text: text, Total: strconv.Itoa(answered), Answer: sc.Question.Answer}}, true
	})
}

// answer: the attendee clicks the choice a (or types the number a and
// clicks Answer); the page says "Your answer: a".
func answer(p *page, choices []string, a string) error {
	if len(choices) > 0 {
		n := -1
		for k, c := range choices {
			if c == a {
				n = k + 1
			}
		}
		got, err := eval[string](p, `[...document.querySelectorAll('#room-question button.room-q-choice')].map(b => b.textContent.trim()).join(' | ')`)
		if err != nil {
			return err
		}
		if got != strings.Join(choices, " | ") {
			return fmt.Errorf("the page offers %q, want the choices %q", got, strings.Join(choices, " | "))
		}
		if err := p.click(fmt.Sprintf("#room-question button.room-q-choice:nth-of-type(%d)", n)); err != nil {
			return fmt.Errorf("click %q: %v", a, err)
		}
	} else {
		if _, err := eval[string](p, `(() => { const el = document.querySelector('#room-question input[type=number]'); if (!el) return 'none';
			el.value = '`+a+`'; el.dispatchEvent(new Event('input', {bubbles: true})); return 'ok'; })()`); err != nil {
			return err
		}
		if err := p.click("#room-question button.room-q-choice"); err != nil {
			return fmt.Errorf("click Answer with %s: %v", a, err)
		}
	}
	if err := p.shows(want{Mine: a}, time.Now().Add(followWithin)); err != nil {
		return fmt.Errorf("answered %q, within %v: %v", a, followWithin, err)
	}
	return nil
}

// screenshots: the projector at 853×480 and at 1280×720, a phone and the
// instructor, with scene i's question open.
func (r *dayRun) screenshots(i int) {
	t, pj := r.t, r.ps.projector
	name := func(who string) string { return fmt.Sprintf("%s-scene%d-%s.png", r.plan.ID, i+1, who) }
	pj.shot(t, r.shots, name("projector-853x480"))
	if err := chromedp.Do(pj.ctx, chromedp.EmulateViewport(1280, 720)); err == nil {
		// The charts redraw at the new size; a frame later it is drawn.
		_ = pj.shows(want{QOpen: questionText(&r.plan.Scenes[i])}, time.Now().Add(time.Second))
		pj.shot(t, r.shots, name("projector-1280x720"))
		_ = chromedp.Do(pj.ctx, chromedp.EmulateViewport(int64(pj.w), int64(pj.h)))
	}
	r.ps.attendees[0].shot(t, r.shots, name("phone-390x844"))
	r.ps.instructor.shot(t, r.shots, name("instructor-1280x720"))
}

// An accident happens after a scene; what it returns (if anything) runs
// after the next move's check (starting again what it killed).
type accident func(r *dayRun) (after func())

// marks are each page's counts before an accident.
type marks map[*page][2]int

func (r *dayRun) mark() marks {
	m := marks{}
	for _, p := range r.ps.all() {
		_, ended, _ := p.streams()
		m[p] = [2]int{ended, p.reconnectings()}
	}
	return m
}

// checkReconnecting: every page whose stream ended since m shows that it
// is reconnecting (pageLib's watch saw it), each within 10 s of the
// accident; the pages whose stream was not cut are named in the log.
func (r *dayRun) checkReconnecting(what string, m marks, since time.Time) {
	t := r.t
	var cut, whole []string
	errs := each(r.ps.all(), func(p *page) error {
		deadline := since.Add(reconnectWithin)
		for {
			_, ended, how := p.streams()
			if ended > m[p][0] && p.reconnectings() > m[p][1] {
				return nil
			}
			if time.Now().After(deadline) {
				if ended == m[p][0] {
					return errNotCut
				}
				return fmt.Errorf("its stream ended (%s) and it did not show that it is reconnecting (reconnectingJS never held)", strings.Join(how, ", "))
			}
			_, _ = chromedp.Run(p.ctx, chromedp.Poll[bool](`+(sessionStorage.getItem('wdReconnecting') || 0) > `+strconv.Itoa(m[p][1]),
				chromedp.WithPollingTimeout(200*time.Millisecond), chromedp.WithPollingInterval(50*time.Millisecond)))
		}
	})
	for _, p := range r.ps.all() {
		switch err := errs[p]; {
		case err == nil:
			cut = append(cut, p.name)
		case err == errNotCut:
			whole = append(whole, p.name)
		default:
			cut = append(cut, p.name)
			t.Errorf("%s: %s: %v", what, p, err)
		}
	}
	t.Logf("%s: streams cut on %v, not on %v", what, cut, whole)
}

var errNotCut = fmt.Errorf("its stream was not cut")

// killReplica: replica 1 killed with SIGKILL; it is started again after
// the next move (which the survivor serves).
func killReplica(r *dayRun) func() {
	rep := r.d.replicas[0]
	m := r.mark()
	at := time.Now()
	rep.signal(syscall.SIGKILL, 10*time.Second)
	r.t.Logf("%s killed (SIGKILL)", rep.name)
	r.checkReconnecting(rep.name+" killed", m, at)
	return func() {
		rep.start()
		r.t.Logf("%s started again: bus open after %v", rep.name, r.d.waitReady(rep, 60*time.Second).Round(time.Millisecond))
	}
}

// restartReplicas: each replica stopped (SIGTERM) and started again, one
// after the other, each ready before the next stops.
func restartReplicas(r *dayRun) func() {
	m := r.mark()
	at := time.Now()
	for _, rep := range r.d.replicas {
		took := rep.signal(syscall.SIGTERM, 20*time.Second)
		rep.start()
		r.t.Logf("%s stopped (SIGTERM, %v) and started again: bus open after %v", rep.name, took.Round(time.Millisecond), r.d.waitReady(rep, 60*time.Second).Round(time.Millisecond))
	}
	r.checkReconnecting("both replicas restarted", m, at)
	return func() {}
}

// killNATSNode: a NATS node killed with SIGKILL, the one that leads the
// rooms' bucket (a write then waits out an election); it is started
// again after the next move.
func killNATSNode(r *dayRun) func() {
	node := r.d.roomsLeader()
	m := r.mark()
	at := time.Now()
	node.signal(syscall.SIGKILL, 10*time.Second)
	r.t.Logf("%s (the rooms' bucket's leader) killed (SIGKILL)", node.name)
	r.checkReconnecting(node.name+" killed", m, at)
	return func() {
		node.start()
		r.d.waitListening(node, 30*time.Second)
		r.t.Logf("%s started again", node.name)
	}
}

// checkRecording: the room's recording (GET /r/CODE/recording.json with
// the key) has every move once, in order: the start on scene 1, each
// scene moved to, each question asked and revealed.
func (r *dayRun) checkRecording() {
	t := r.t
	req, _ := http.NewRequest("GET", r.d.Base+"/r/"+r.code+"/recording.json", nil)
	req.Header.Set("Authorization", "Bearer "+r.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("the recording: %v", err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var rec struct {
		Entries []struct {
			Kind  string `json:"kind"`
			Scene *struct {
				N int `json:"n"`
			} `json:"scene"`
		} `json:"entries"`
	}
	if res.StatusCode != 200 || json.Unmarshal(body, &rec) != nil {
		t.Errorf("GET /r/%s/recording.json: %d %.300s", r.code, res.StatusCode, body)
		return
	}
	var got []string
	for _, e := range rec.Entries {
		n := 0
		if e.Scene != nil {
			n = e.Scene.N
		}
		got = append(got, e.Kind+" "+strconv.Itoa(n))
	}
	if strings.Join(got, ", ") != strings.Join(r.moves, ", ") {
		t.Errorf("plan %s: the recording has\n\t%s\nwant every move once:\n\t%s", r.plan.ID, strings.Join(got, ", "), strings.Join(r.moves, ", "))
	}
}
