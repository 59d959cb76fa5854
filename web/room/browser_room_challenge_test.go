package room

import (
	"outlierlab/web/internal/browsertest"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserRoomChallenge: in headless Chromium on the single-replica
// room lab, the instructor moves the tune plan's room to its challenge
// scene; three attendees on phones (390×844) submit different caps
// through their pages' form; the board and the scatter show three points
// with the front marked on every page (instructor, projector at 853×480,
// attendees); the instructor spotlights one and every page follows it;
// the handout lists the three submissions.
func TestBrowserRoomChallenge(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	l, _ := challengeLab(t, Limits{Submissions: 10})
	_, code, key, body := startPlanRoom(t, l, "plan:tune")
	if code == "" {
		t.Fatalf("start from tune: %s", body)
	}
	bs := browsertest.Laptops(t, l.TS.URL, 5)
	teacher, projector, pupils := bs[0], bs[1], bs[2:]
	teacher.Step("the instructor page", chromedp.EmulateViewport(1280, 720), chromedp.Navigate(l.TS.URL+"/r/"+code+"/present?key="+key), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	projector.Step("the projector", chromedp.EmulateViewport(853, 480), chromedp.Navigate(l.TS.URL+"/r/"+code+"/projector"), chromedp.WaitReady(chromedp.CSS("#room-challenge")))
	for i, p := range pupils {
		p.Step("attendee "+strconv.Itoa(i)+" joins on a phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(l.TS.URL+"/r/"+code), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	}
	teacher.Step("next: the challenge scene", chromedp.Click(chromedp.CSS("#btn-scene-next")))
	caps := []string{"10", "17", "50"}
	for i, p := range pupils {
		p.Poll("the challenge's form", `!!document.getElementById('set-max_ejection_percent')`)
		p.Step("set the cap to "+caps[i], chromedp.SetValue(chromedp.CSS("#set-max_ejection_percent"), caps[i]))
		p.Step("submit", chromedp.Click(chromedp.CSS("#btn-challenge-submit")))
		p.Poll("graded", `/You are on the board/.test(document.getElementById('room-challenge-status').textContent)`)
	}
	three := `document.querySelectorAll('#room-challenge-board tbody tr').length === 3 &&
		document.querySelectorAll('#room-challenge-plot circle.pt').length === 3 &&
		document.querySelectorAll('#room-challenge-plot circle.front').length >= 1 &&
		document.querySelectorAll('#room-challenge-board tr.front .front-mark').length === document.querySelectorAll('#room-challenge-plot circle.front').length`
	for _, b := range bs {
		b.Poll("three points on the board and the scatter, the front marked", three)
	}
	who := teacher.Eval(`document.querySelector('#room-challenge-board tbody tr[data-who]').dataset.who`)
	teacher.Step("spotlight the first", chromedp.Click(chromedp.CSS("#room-challenge-board tbody tr:first-child .btn-challenge-spot")))
	for _, b := range bs {
		b.Poll("every page follows the spotlight", `(document.querySelector('#room-challenge-spot b') || {}).textContent === `+strconv.Quote(who)+` &&
			document.querySelector('#room-challenge-board tr.spot').dataset.who === `+strconv.Quote(who))
	}
	// The phone's panel fits its width: nothing wider than the screen but
	// the board, which scrolls in its own box.
	if w := pupils[0].Eval(`String(document.getElementById('room-challenge').getBoundingClientRect().width <= window.innerWidth)`); w != "true" {
		t.Error("the challenge panel is wider than the phone's screen")
	}
	teacher.Step("the handout", chromedp.Navigate(l.TS.URL+"/r/"+code+"/handout"), chromedp.WaitVisible(chromedp.CSS(".handout-board")))
	if n := teacher.Eval(`String(document.querySelectorAll('.handout-board tbody tr').length)`); n != "3" {
		t.Errorf("the handout lists %s submissions, want 3", n)
	}
}
