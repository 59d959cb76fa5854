package room

import (
	"testing"

	"github.com/chromedp/chromedp"

	"outlierlab/web/roombus"
)

// TestBrowserRoomPlan: in headless Chromium, the instructor starts a
// workshop from the lightning plan on the home page, clicks Next twice;
// an attendee (a second browser context) sees the third scene's title
// and its settings (the cap-34 step: the cap slider at 34), and never the
// instructor's notes.
func TestBrowserRoomPlan(t *testing.T) {
	skipWithoutChromium(t)
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	laptops := roomLaptops(t, l.ts.URL, 2)
	teacher, pupil := laptops[0], laptops[1]

	teacher.Step("open the home page", chromedp.Navigate(teacher.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#room-start-from")))
	teacher.Step("pick the lightning plan", chromedp.SetValue(chromedp.CSS("#room-start-from"), "plan:lightning"))
	teacher.Step("start", chromedp.Click(chromedp.CSS("#btn-start-room")))
	teacher.Step("the instructor page", chromedp.WaitVisible(chromedp.CSS("#room-bar.present")), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	teacher.Poll("the first scene", `document.getElementById('room-scene-title').textContent === 'One host fails a third of its searches' &&
		document.getElementById('btn-scene-prev').disabled && /h5 loses its connection/.test(document.getElementById('room-scene-notes').textContent)`)
	code := teacher.Eval(`document.querySelector('#room-bar .room-code').textContent`)

	pupil.Step("join the room", chromedp.Navigate(pupil.URL+"/r/"+code), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	pupil.Poll("the first scene's title", `document.getElementById('room-scene-title').textContent === 'One host fails a third of its searches'`)

	teacher.Step("next", chromedp.Click(chromedp.CSS("#btn-scene-next")))
	teacher.Poll("the second scene", `document.getElementById('room-scene-title').textContent === 'The cap that ejects nothing'`)
	teacher.Step("next again", chromedp.Click(chromedp.CSS("#btn-scene-next")))
	teacher.Poll("the third scene, its notes, the list marking it", `document.getElementById('room-scene-title').textContent === 'Raise the cap to 34' &&
		/34 admits one host of six/.test(document.getElementById('room-scene-notes').textContent) &&
		document.querySelector('.room-scene-list li.current').textContent === 'Raise the cap to 34'`)
	// The notes scroll in their box on a small screen: a keyboard reaches
	// and scrolls them (axe's scrollable-region-focusable).
	if got := teacher.Eval(`(() => { const n = document.getElementById('room-scene-notes'); n.focus(); return String(document.activeElement === n) })()`); got != "true" {
		t.Error("the scene's notes cannot take the keyboard's focus")
	}
	teacher.Poll("the instructor's tab on the scene's step", `document.getElementById('c-max_ejection_percent').value === '34'`)
	pupil.Poll("the third scene's title and its cap on the attendee's page", `document.getElementById('room-scene-title').textContent === 'Raise the cap to 34' &&
		document.getElementById('c-max_ejection_percent').value === '34'`)
	if s := pupil.Eval(`document.body.textContent`); containsAny(s, "34 admits one host", "btn-scene-next") || pupil.Eval(`String(!!document.getElementById('room-scene-notes'))`) != "false" {
		t.Errorf("the attendee's page shows the instructor's notes or buttons")
	}

	teacher.Step("1280×720", chromedp.EmulateViewport(1280, 720), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	viewShot(t, teacher, "outlierlab-room-plan-present.png")
	teacher.Step("390×844", chromedp.EmulateViewport(390, 844), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	viewShot(t, teacher, "outlierlab-room-plan-present-phone.png")
	pupil.Step("the attendee 390×844", chromedp.EmulateViewport(390, 844), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	viewShot(t, pupil, "outlierlab-room-plan-attendee-phone.png")
}
