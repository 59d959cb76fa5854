package room

import (
	"outlierlab/web/internal/browsertest"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserRoomPlanAsk is issue 23's acceptance test of a room run from
// a plan, in headless Chromium over two replicas sharing one NATS: the
// instructor (on replica A) starts a workshop from the lightning plan on
// the home page and steps through three scenes; two attendees, each in a
// browser context of their own, one on each replica, follow; the
// instructor asks the third scene's question (by keyboard: the scene
// panel's button), whose expected answer only the instructor's page
// shows; the attendees answer 1 and 2; the reveal shows both the
// histogram with the engine's answer (1) marked, and the board counts
// one right and one wrong against the plan; the recording, read through
// replica B, names each scene on its timeline.
func TestBrowserRoomPlanAsk(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	la, lb := twoReplicas(t)
	bs := browsersOn(t, 1280, 720, la.TS.URL, la.TS.URL, lb.TS.URL)
	teacher, ada, bo := bs[0], bs[1], bs[2]
	attendees := []*browser{ada, bo}
	title := func(b *browser, what, want string) {
		t.Helper()
		b.Poll(what, `(document.getElementById('room-scene-title') || {}).textContent === '`+want+`'`)
	}

	teacher.Step("open the home page", chromedp.Navigate(teacher.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#room-start-from")))
	teacher.Step("pick the lightning plan", chromedp.SetValue(chromedp.CSS("#room-start-from"), "plan:lightning"))
	teacher.Step("start", chromedp.Click(chromedp.CSS("#btn-start-room")))
	teacher.Step("the instructor page", chromedp.WaitVisible(chromedp.CSS("#room-bar.present")), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	title(teacher, "the first scene", "One host fails a third of its searches")
	code := teacher.Eval(`document.querySelector('#room-bar .room-code').textContent`)
	for _, b := range attendees {
		b.Step("join on "+b.URL, chromedp.Navigate(b.URL+"/r/"+code), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
		title(b, "the first scene on "+b.URL, "One host fails a third of its searches")
	}

	teacher.Step("next", chromedp.Click(chromedp.CSS("#btn-scene-next")))
	title(teacher, "the second scene", "The cap that ejects nothing")
	for _, b := range attendees {
		title(b, "the second scene on "+b.URL, "The cap that ejects nothing")
	}
	teacher.Step("next again", chromedp.Click(chromedp.CSS("#btn-scene-next")))
	teacher.Poll("the third scene, its question and the plan's answer", `document.getElementById('room-scene-title').textContent === 'Raise the cap to 34' &&
		document.getElementById('room-scene-question').textContent === 'How many hosts are ejected at 40 s?' &&
		document.getElementById('room-scene-expect').textContent === '1'`)
	for _, b := range attendees {
		b.Poll("the third scene and its cap on "+b.URL, `document.getElementById('room-scene-title').textContent === 'Raise the cap to 34' &&
			document.getElementById('c-max_ejection_percent').value === '34'`)
	}

	teacher.Eval(`document.getElementById('btn-scene-ask').focus(), 'ok'`)
	teacher.Step("ask the scene's question by keyboard", chromedp.KeyEvent(kb.Enter))
	for i, b := range attendees {
		b.Poll("the question on "+b.URL, `(document.querySelector('#room-question .room-q-text') || {}).textContent === 'Question: How many hosts are ejected at 40 s?'`)
		if s := b.Eval(`document.body.textContent`); containsAny(s, "The plan's answer", "Ask the room") || b.Eval(`String(!!document.getElementById('room-scene-expect'))`) != "false" {
			t.Errorf("the attendee on %s sees the plan's answer before the reveal", b.URL)
		}
		n := []string{"1", "2"}[i]
		b.Eval(`(() => { const el = document.querySelector('#room-question input[type=number]'); el.value = '` + n + `'; el.dispatchEvent(new Event('input', {bubbles: true})); return 'ok'; })()`)
		b.Step("answer "+n, chromedp.Click(chromedp.CSS("#room-question .room-q-choice")))
		b.Poll("the attendee's own answer "+n, `/Your answer: `+n+`/.test(document.getElementById('room-question').textContent)`)
	}
	teacher.Poll("two answers counted (one on each replica)", `(document.getElementById('room-q-count') || {}).textContent === '2'`)
	if s := teacher.Eval(`document.getElementById('room-question').textContent`); containsAny(s, "engine", "answered:") {
		t.Errorf("the instructor's question panel shows the split before the reveal: %q", s)
	}
	teacher.Step("open the board's scenes", chromedp.Click(chromedp.CSS("#room-board-scenes summary")))
	teacher.Poll("the board: three scenes shown, the third asked", `document.querySelector('#room-board-scenes summary').textContent === 'Scenes: 3 of 6 shown, 0 questions revealed' &&
		document.querySelector('#room-board-scene-3 .room-board-answers').textContent.trim() === 'asked, not revealed yet'`)

	teacher.Step("reveal", chromedp.Click(chromedp.CSS("#btn-reveal")))
	for i, b := range attendees {
		b.Poll("the histogram with the engine's answer on "+b.URL, `(() => {
			const right = document.querySelector('#room-question .room-hist-row.right');
			return !!right && right.querySelector('.room-hist-label').textContent === '1' &&
				document.querySelector('#room-question .room-q-answer').textContent === '1' &&
				/You said `+[]string{"1", "2"}[i]+`/.test(document.getElementById('room-question').textContent);
		})()`)
	}
	teacher.Poll("the board: one right, one wrong, its scenes still open", `document.getElementById('room-board-scenes').open &&
		document.querySelector('#room-board-scenes summary').textContent === 'Scenes: 3 of 6 shown, 1 question revealed' &&
		document.querySelector('#room-board-scene-3 .room-board-answers').textContent.trim() === '2 answered: 1 right, 1 wrong'`)

	for _, size := range []struct {
		w, h int
		name string
	}{{1280, 720, "outlierlab-room-plan-ask-present.png"}, {853, 480, "outlierlab-room-plan-ask-present-853.png"}, {390, 844, "outlierlab-room-plan-ask-present-phone.png"}} {
		teacher.Step("the instructor's page", chromedp.EmulateViewport(int64(size.w), int64(size.h)), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		viewShot(t, teacher, size.name)
	}
	teacher.Step("the board's scenes on a phone", chromedp.Evaluate[chromedp.Void](`document.getElementById('room-board-scenes').scrollIntoView()`))
	viewShot(t, teacher, "outlierlab-room-plan-ask-board-phone.png")
	bo.Step("the attendee on a phone", chromedp.EmulateViewport(390, 844), chromedp.Evaluate[chromedp.Void](`document.getElementById('room-question').scrollIntoView()`))
	viewShot(t, bo, "outlierlab-room-plan-ask-attendee-phone.png")

	// The recording, read through the other replica, names each scene on
	// its timeline: a mark of the scene kind per move, its words the
	// scene's number and title.
	bo.Step("the recording on replica B", chromedp.EmulateViewport(1280, 720), chromedp.Navigate(bo.URL+"/r/"+code+"/recording"), chromedp.WaitVisible(chromedp.CSS("#rec-timeline")),
		chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	bo.Poll("a scene mark per scene shown, named", `(() => {
		const marks = [...document.querySelectorAll('#rec-timeline .rec-mark.rec-scene')].map(m => m.getAttribute('aria-label'));
		return marks.length === 2 && /scene 2 of 6, "The cap that ejects nothing"/.test(marks[0]) && /scene 3 of 6, "Raise the cap to 34"/.test(marks[1]) &&
			/started from the plan "Outlier detection in 15 minutes" on scene 1 of 6/.test(document.querySelector('#rec-timeline .rec-mark.rec-start').getAttribute('aria-label'));
	})()`)
	viewShot(t, bo, "outlierlab-room-plan-recording.png")
	bo.Step("the recording's timeline on a phone", chromedp.EmulateViewport(390, 844), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	viewShot(t, bo, "outlierlab-room-plan-recording-phone.png")
	for _, b := range []*browser{teacher, ada, bo} {
		b.CheckOffline()
	}
}
