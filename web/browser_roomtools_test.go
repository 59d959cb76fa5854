package web

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserRoomQuestion: in headless Chromium with two browser
// contexts, the instructor asks "Is h5 ejected at 60 s?" on search-cache;
// the attendee's page shows the question and the attendee answers yes;
// the instructor's page counts one answer and Reveal shows, on the
// attendee's page, the histogram with the engine's answer (no: the 10%
// cap refuses the ejection) marked, and the attendee's own answer.
func TestBrowserRoomQuestion(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := findChromium()
	if chromium == "" {
		t.Skip("chromium not found: browser test skipped")
	}
	l := startRoomLab(t, BusOptions{}, RoomLimits{})
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1440, 1000))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	teacher := roomBrowser(t, bctx, l.ts.URL)
	pupil := roomBrowser(t, bctx, l.ts.URL)

	teacher.step("open the free lab", chromedp.Navigate(teacher.url+"/lab"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	teacher.step("start a workshop", chromedp.Click(chromedp.CSS("#btn-start-room")))
	teacher.step("the instructor page", chromedp.WaitVisible(chromedp.CSS("#room-bar.present")), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	code := teacher.eval(`document.querySelector('#room-bar .room-code').textContent`)

	pupil.step("join the room", chromedp.Navigate(pupil.url+"/r/"+code), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))

	teacher.step("open the question form", chromedp.Click(chromedp.CSS(".room-q-open summary")))
	teacher.step("ask", chromedp.Click(chromedp.CSS("#btn-ask")))
	pupil.poll("the question on the attendee's page", `(document.querySelector('#room-question .room-q-text') || {}).textContent === 'Question: Is h5 ejected at 60 s?'`)
	pupil.step("answer yes", chromedp.Click(chromedp.CSS(`#room-question .room-q-choice`)))
	pupil.poll("the attendee's own answer", `/Your answer: yes/.test(document.getElementById('room-question').textContent)`)
	teacher.poll("one answer counted", `(document.getElementById('room-q-count') || {}).textContent === '1'`)
	if s := teacher.eval(`document.getElementById('room-question').textContent`); containsAny(s, "engine", "room-hist") {
		t.Errorf("the instructor's page shows the split before the reveal: %q", s)
	}
	teacher.step("reveal", chromedp.Click(chromedp.CSS("#btn-reveal")))
	pupil.poll("the histogram with the engine's answer marked", `(() => {
		const right = document.querySelector('#room-question .room-hist-row.right');
		return !!right && right.querySelector('.room-hist-label').textContent === 'no' && /the engine's answer/.test(right.textContent) &&
			document.querySelector('#room-question .room-q-answer').textContent === 'no' && /You said yes/.test(document.getElementById('room-question').textContent);
	})()`)
	shot(t, pupil, "outlierlab-room-reveal.png")

	// Spotlight: the instructor shades 40–60 s; the attendee's charts
	// carry the shaded range (a markArea on a series of its own).
	teacher.step("open the spotlight", chromedp.Click(chromedp.CSS(".room-spot summary")))
	teacher.step("spotlight 40–60 s", chromedp.Click(chromedp.CSS("#btn-spot-range")))
	pupil.poll("the range on the attendee's success-rate chart", `document.body.dataset.spot === '|40 s|60 s' &&
		echarts.getInstanceByDom(document.getElementById('chart-sr')).getOption().series.some(s => s.id === 'room-spot' && s.markArea.data.length === 1)`)
	teacher.step("spotlight h5", chromedp.Click(chromedp.CSS("#btn-spot-host")))
	pupil.poll("the host on the attendee's page", `document.body.dataset.spot === 'h5||'`)
	teacher.checkOffline()
	pupil.checkOffline()
}

func containsAny(s string, parts ...string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
