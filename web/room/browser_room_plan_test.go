package room

import (
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/roombus"
)

// TestBrowserRoomPlan: in headless Chromium, the instructor starts a
// workshop from the lightning plan on the home page, clicks Next twice;
// an attendee (a second browser context) sees the third scene's title
// and its settings (the cap-34 step: the cap slider at 34), and never the
// instructor's notes.
func TestBrowserRoomPlan(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	laptops := browsertest.Laptops(t, l.TS.URL, 2)
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
		/It admits 2 at a time/.test(document.getElementById('room-scene-notes').textContent) &&
		document.querySelector('.room-scene-list li.current').textContent === 'Raise the cap to 34'`)
	// The notes scroll in their box on a small screen: a keyboard reaches
	// and scrolls them (axe's scrollable-region-focusable).
	if got := teacher.Eval(`(() => { const n = document.getElementById('room-scene-notes'); n.focus(); return String(document.activeElement === n) })()`); got != "true" {
		t.Error("the scene's notes cannot take the keyboard's focus")
	}
	teacher.Poll("the instructor's tab on the scene's step", `document.getElementById('c-max_ejection_percent').value === '34'`)
	pupil.Poll("the third scene's title and its cap on the attendee's page", `document.getElementById('room-scene-title').textContent === 'Raise the cap to 34' &&
		document.getElementById('c-max_ejection_percent').value === '34'`)
	if s := pupil.Eval(`document.body.textContent`); containsAny(s, "It admits 2 at a time", "btn-scene-next") || pupil.Eval(`String(!!document.getElementById('room-scene-notes'))`) != "false" {
		t.Errorf("the attendee's page shows the instructor's notes or buttons")
	}

	// Scene 5 is on another lesson (panic), scene 6 back on cap: each
	// page changes lesson in place (issue 33: it was a page load, 3–6 s
	// through nginx). The same document (a mark set now stays), one
	// stream (no new one opened), the new lesson's title and prose, its
	// charts drawn, its settings; an instructor's slider move after it
	// reaches the attendee.
	for _, b := range []*browser{teacher, pupil} {
		b.Step("mark the document, count its streams", chromedp.Evaluate[chromedp.Void](`window.__sameDoc = true; window.__streams = 0;
			const f = window.fetch; window.fetch = function (u) { if (String(u && u.url || u).includes('/lab/stream')) window.__streams++; return f.apply(this, arguments); }; undefined`))
	}
	teacher.Step("next to scene 4", chromedp.Click(chromedp.CSS("#btn-scene-next")))
	teacher.Poll("scene 4", `document.getElementById('room-scene-title').textContent === 'Out for 30 s, then 60, then 90'`)
	pupil.Step("the attendee on a phone", chromedp.EmulateViewport(390, 844))
	teacher.Step("next to scene 5, on the panic lesson", chromedp.Click(chromedp.CSS("#btn-scene-next")))
	inPlace := func(what, title, prose string) {
		t.Helper()
		for _, b := range []*browser{teacher, pupil} {
			b.Poll(what, `window.__sameDoc === true && window.__streams === 0 &&
				document.getElementById('lesson-title').textContent === `+jsString(title)+` &&
				document.querySelector('.lesson-page').dataset.lesson === `+jsString(prose)+` &&
				document.title.startsWith(`+jsString(title)+`) &&
				document.querySelectorAll('#stream').length === 1 && document.querySelectorAll('#lab').length === 1 &&
				(() => { const c = echarts.getInstanceByDom(document.getElementById('chart-sr')); return !!c && c.getOption().series.length > 0; })() &&
				document.querySelector('#stream').dataset.conn === 'live'`)
		}
	}
	inPlace("the panic lesson, in place", "Panic: when ejected hosts get traffic again", "panic")
	pupil.Poll("the burst scene's title on the attendee's page", `document.getElementById('room-scene-title').textContent === 'A burst, an 80% cap, and panic'`)
	viewShot(t, pupil, "outlierlab-room-plan-inplace-phone.png")
	teacher.Step("next to scene 6, back on cap", chromedp.Click(chromedp.CSS("#btn-scene-next")))
	inPlace("the cap lesson again, in place", "max_ejection_percent: how many hosts may go", "cap")
	pupil.Poll("scene 6's cap on the attendee's page", `document.getElementById('room-scene-title').textContent === 'Three settings to take home' &&
		document.getElementById('c-max_ejection_percent').value === '34'`)
	teacher.Step("the instructor moves the cap to 50", chromedp.SetValue(chromedp.CSS("#c-max_ejection_percent"), "50"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('c-max_ejection_percent').dispatchEvent(new Event('input', {bubbles: true})); document.getElementById('c-max_ejection_percent').dispatchEvent(new Event('change', {bubbles: true}))`))
	pupil.Poll("the move on the attendee's page", `document.getElementById('c-max_ejection_percent').value === '50'`)

	// The recording replays the workshop across its lessons: an entry on
	// the panic lesson switches the player's lab to it in place, and
	// back (its entries used to be skipped as "another lesson").
	pupil.Step("the recording", chromedp.Navigate(pupil.URL+"/r/"+code+"/recording"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	pupil.Step("mark the document", chromedp.Evaluate[chromedp.Void](`window.__sameDoc = true`))
	seek := func(scene, preset, control string) {
		t.Helper()
		pupil.Step("seek to scene "+scene, chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('#rec-timeline .rec-mark.rec-scene')].find(m => /scene `+scene+` of 6/.test(m.getAttribute('aria-label'))).click()`))
		pupil.Poll("scene "+scene+"'s lab in the player, in place", `window.__sameDoc === true && document.getElementById('scenario-name').textContent.trim() === `+jsString(preset)+` &&
			!!document.getElementById(`+jsString(control)+`) && document.querySelectorAll('#stream').length === 1 &&
			echarts.getInstanceByDom(document.getElementById('chart-sr')).getOption().series.length > 0`)
	}
	seek("5", "burst", "c-healthy_panic_threshold")
	viewShot(t, pupil, "outlierlab-room-plan-recording-panic.png")
	seek("6", "search-cache", "c-max_ejection_percent")

	teacher.Step("1280×720", chromedp.EmulateViewport(1280, 720), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	viewShot(t, teacher, "outlierlab-room-plan-present.png")
	teacher.Step("390×844", chromedp.EmulateViewport(390, 844), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	viewShot(t, teacher, "outlierlab-room-plan-present-phone.png")
	pupil.Step("the attendee 390×844", chromedp.EmulateViewport(390, 844), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	viewShot(t, pupil, "outlierlab-room-plan-attendee-phone.png")
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
