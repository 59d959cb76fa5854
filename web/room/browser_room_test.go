package room

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/roombus"
)

// TestBrowserRoom drives a workshop in headless Chromium with two browser
// contexts (their own cookies, as two laptops): the instructor starts a
// room from the free lab and plays to the end; the attendee joins by the
// code and sees what the instructor shows; the instructor drags the cap to
// 34 and the attendee's slider and ejection chart follow; the attendee
// moves the cap and gets the break-away banner while the instructor's page
// keeps its own; Rejoin brings the attendee back. The projector view shows
// the code, the QR code and the charts, no controls.
func TestBrowserRoom(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	laptops := browsertest.Laptops(t, l.TS.URL, 2)
	teacher, pupil := laptops[0], laptops[1]
	const helpers = `
window.t_opt = id => echarts.getInstanceByDom(document.getElementById(id)).getOption();
window.t_lanes = name => (t_opt('chart-lanes').series.find(s => s.name === name).data || []).length;
window.t_shown = sel => { const el = document.querySelector(sel); return !!el && getComputedStyle(el).display !== 'none'; };
window.t_slide = (id, v) => { const el = document.getElementById(id); el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); return 'ok'; };
true`
	open := func(b *browser, path, what string) {
		b.Step(what, chromedp.Navigate(b.URL+path), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
		if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](helpers)); err != nil {
			t.Fatalf("helpers: %v", err)
		}
	}

	open(teacher, "/lab", "open the free lab")
	teacher.Step("start a workshop", chromedp.Click(chromedp.CSS("#btn-start-room")))
	teacher.Step("the instructor page", chromedp.WaitVisible(chromedp.CSS("#room-bar.present")), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	teacher.Poll("the instructor page's address", `/^\/r\/[2-9A-Z]{6}\/present$/.test(location.pathname)`)
	code := teacher.Eval(`document.querySelector('#room-bar .room-code').textContent`)
	teacher.Eval(helpers + `; 'ok'`)
	teacher.Step("instant speed", chromedp.Click(chromedp.CSS(`button.speed[title="instant"]`)))
	teacher.Step("play", chromedp.Click(chromedp.CSS("#btn-play")))
	teacher.Poll("the run's end", `document.getElementById('scrub').value === '30'`)

	open(pupil, "/r/"+code, "join the room")
	pupil.Poll("following, at the instructor's cursor", `t_shown('.room-following') && !t_shown('.room-away') && document.getElementById('scrub').value === '30'`)
	if n := pupil.Eval(`String(t_lanes('ejected'))`); n != "0" {
		t.Errorf("attendee with the default cap: %s ejected cells, want none", n)
	}

	teacher.Eval(`t_slide('c-max_ejection_percent', '34')`)
	pupil.Poll("the instructor's cap on the attendee's page", `document.getElementById('c-max_ejection_percent').value === '34' &&
		document.querySelector('output[for=c-max_ejection_percent]').textContent === '34%' && t_lanes('ejected') > 0`)

	pupil.Eval(`t_slide('c-max_ejection_percent', '10')`)
	pupil.Poll("the break-away banner", `t_shown('.room-away') && !t_shown('.room-following') && t_lanes('ejected') === 0`)
	time.Sleep(300 * time.Millisecond) // what the instructor's page would show by now
	if got := teacher.Eval(`document.getElementById('c-max_ejection_percent').value + ' ' + String(t_lanes('ejected') > 0)`); got != "34 true" {
		t.Errorf("instructor's page after the attendee's move: %q, want cap 34 with ejections", got)
	}
	browsertest.Shot(t, pupil, "outlierlab-room-attendee.png")

	pupil.Step("rejoin", chromedp.Click(chromedp.CSS("#btn-rejoin")))
	pupil.Poll("back with the room", `!t_shown('.room-away') && document.getElementById('c-max_ejection_percent').value === '34' && t_lanes('ejected') > 0`)

	open(pupil, "/r/"+code+"/projector", "open the projector view")
	pupil.Poll("the projector's parts", `document.querySelector('.room-projector-head .room-code').textContent === '`+code+`' &&
		!!document.querySelector('.room-projector svg.qr path') && !t_shown('#controls') && !t_shown('.transport') && t_lanes('ejected') > 0`)
	browsertest.Shot(t, pupil, "outlierlab-room-projector.png")
	teacher.CheckOffline()
	pupil.CheckOffline()
}
