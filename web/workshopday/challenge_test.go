package workshopday_test

import (
	"strconv"
	"testing"
	"time"
)

// TestWorkshopChallenge is a challenge scene in the production setup
// (nginx with the shipped config, two replicas, a 3-node NATS cluster;
// the people of TestWorkshopDay): the instructor starts the production
// plan and moves the room to its bad-deploy challenge scene; the three
// phone attendees (390×844) submit different caps through their pages'
// form; the board and the scatter show three points with the front marked
// on every page (both instructor tabs, the projector, the attendees);
// the instructor spotlights one and every page follows it; the recording
// and the handout list the three submissions.
func TestWorkshopChallenge(t *testing.T) {
	needTools(t, true)
	d := startDeployment(t, t.ArtifactDir())
	ps := startPeople(t, 5*time.Minute)
	bk := loadBook(t)
	var pl *dayRun
	for _, p := range bk.plans {
		if p.ID == "production" {
			pl = &dayRun{t: t, d: d, ps: ps, book: bk, plan: p}
		}
	}
	if pl == nil {
		t.Fatal("no production plan")
	}
	scene := -1
	for i, sc := range pl.plan.Scenes {
		if sc.Challenge != "" {
			scene = i
		}
	}
	if scene < 0 {
		t.Fatal("the production plan has no challenge scene")
	}
	pl.startRoom()
	pl.joinRoom()
	title := strconv.Quote(pl.plan.Scenes[scene].Title)
	in := ps.instructor
	if _, err := eval[bool](in, `(() => { const b = [...document.querySelectorAll('.room-scene-list button')].find(b => b.textContent.trim() === `+title+`); b.click(); return true })()`); err != nil {
		t.Fatalf("%s: move to the challenge scene: %v", in, err)
	}
	phones := ps.attendees[:3]
	caps := []string{"10", "20", "50"}
	for i, p := range phones {
		if _, err := poll[bool](p, `!!document.getElementById('set-max_ejection_percent')`, loadWithin); err != nil {
			t.Fatalf("%s: the challenge's form: %v (%s)", p, err, p.snap())
		}
		if _, err := eval[bool](p, `(() => { const el = document.getElementById('set-max_ejection_percent'); el.value = `+strconv.Quote(caps[i])+`; el.dispatchEvent(new Event('input', {bubbles: true})); return true })()`); err != nil {
			t.Fatalf("%s: set the cap: %v", p, err)
		}
		if err := p.click("#btn-challenge-submit"); err != nil {
			t.Fatalf("%s: submit: %v", p, err)
		}
		if _, err := poll[bool](p, `/You are on the board/.test((document.getElementById('room-challenge-status') || {}).textContent || '')`, loadWithin); err != nil {
			st, _ := eval[string](p, `(document.getElementById('room-challenge-status') || {}).textContent || ''`)
			t.Fatalf("%s: graded: %v (status %q)", p, err, st)
		}
	}
	three := `document.querySelectorAll('#room-challenge-board tbody tr').length === 3 &&
		document.querySelectorAll('#room-challenge-plot circle.pt').length === 3 &&
		document.querySelectorAll('#room-challenge-plot circle.front').length >= 1 &&
		document.querySelectorAll('#room-challenge-board tr.front .front-mark').length === document.querySelectorAll('#room-challenge-plot circle.front').length`
	for _, p := range ps.all() {
		if _, err := poll[bool](p, three, reconnectWithin); err != nil {
			t.Errorf("%s: three points on the board and the scatter, the front marked: %v", p, err)
		}
	}
	who, err := eval[string](in, `document.querySelector('#room-challenge-board tbody tr[data-who]').dataset.who`)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.click("#room-challenge-board tbody tr:first-child .btn-challenge-spot"); err != nil {
		t.Fatalf("%s: spotlight: %v", in, err)
	}
	for _, p := range ps.all() {
		if _, err := poll[bool](p, `(document.querySelector('#room-challenge-spot b') || {}).textContent === `+strconv.Quote(who)+` &&
			(document.querySelector('#room-challenge-board tr.spot') || {dataset: {}}).dataset.who === `+strconv.Quote(who), reconnectWithin); err != nil {
			t.Errorf("%s: follows the spotlight on %s: %v", p, who, err)
		}
	}
	// The recording has each submission (its export, as anyone with the
	// room's code reads it).
	if n, err := poll[int](in, `fetch('/r/`+pl.code+`/recording.json').then(r => r.json()).then(j => j.entries.filter(e => e.kind === 'submission' && e.submission).length)
		.then(n => n === 3 ? n : 0)`, loadWithin); err != nil || n != 3 {
		t.Errorf("the recording has %d submissions (%v), want 3", n, err)
	}
	if err := in.navigate(d.Base, "/r/"+pl.code+"/handout"); err != nil {
		t.Fatal(err)
	}
	if n, err := poll[int](in, `document.querySelectorAll('.handout-board tbody tr').length`, loadWithin); err != nil || n != 3 {
		t.Errorf("the handout lists %d submissions (%v), want 3", n, err)
	}
	t.Logf("room %s: three submissions, the spotlight on %s", pl.code, who)
}
