package room

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
)

// browsersOn starts Chromium and opens one browser context (its own
// cookies) on each of bases: the laptops of a room over replicas.
func browsersOn(t *testing.T, width, height int, bases ...string) []*browser {
	t.Helper()
	bctx := browsertest.StartChromium(t, width, height)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	out := make([]*browser, len(bases))
	for i, base := range bases {
		out[i] = browsertest.Tab(t, bctx, base, 90*time.Second)
	}
	return out
}

// offsetClock is the wall clock, moved on by what the test skips.
type offsetClock struct{ off atomic.Int64 }

func (c *offsetClock) Now() time.Time       { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *offsetClock) skip(d time.Duration) { c.off.Add(int64(d)) }

// exploreJS reads a page's explore clock: "hidden", or its text
// ("01:59 left", "time is up"); t_left is the seconds it shows left.
const exploreJS = `window.t_clock = () => { const c = document.getElementById('room-explore'); return !c || c.hidden ? 'hidden' : document.getElementById('room-explore-left').textContent; };
window.t_left = () => { const m = /^(\d\d):(\d\d) left$/.exec(t_clock()); return m ? 60 * +m[1] + +m[2] : -1; };`

// TestBrowserRoomExplore: in headless Chromium, over two replicas, the
// instructor goes to the lightning plan's fourth scene (a 2-minute
// explore) and starts its timer by keyboard; an attendee on the other
// replica sees the countdown go down, and still sees it after breaking
// away to explore; the projector shows it; Stop hides it everywhere, and
// a move to the next scene clears one started again. The look at three
// sizes is saved as screenshots.
func TestBrowserRoomExplore(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	la, lb := twoReplicas(t)
	// Both replicas' clocks run on, then jump as the test says: a page
	// loaded after the end shows "time is up" at once.
	clk := &offsetClock{}
	la.S.lab.Now, lb.S.lab.Now = clk.Now, clk.Now
	bs := browsersOn(t, 1440, 1000, la.TS.URL, lb.TS.URL, lb.TS.URL)
	teacher, pupil, wall := bs[0], bs[1], bs[2]

	teacher.Step("open the home page", chromedp.Navigate(teacher.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#room-start-from")))
	teacher.Step("pick the lightning plan", chromedp.SetValue(chromedp.CSS("#room-start-from"), "plan:lightning"))
	teacher.Step("start", chromedp.Click(chromedp.CSS("#btn-start-room")))
	teacher.Step("the instructor page", chromedp.WaitVisible(chromedp.CSS("#room-bar.present")), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	code := teacher.Eval(`document.querySelector('#room-bar .room-code').textContent`)
	teacher.Eval(exploreJS + `; 'ok'`)
	if teacher.Eval(`String(!!document.getElementById('btn-explore-start'))`) != "false" {
		t.Error("the first scene (no explore) offers a timer")
	}
	for i, title := range []string{"The cap that ejects nothing", "Raise the cap to 34", "Out for 30 s, then 60, then 90"} {
		teacher.Step("next", chromedp.Click(chromedp.CSS("#btn-scene-next")))
		teacher.Poll("scene "+string(rune('2'+i)), `document.getElementById('room-scene-title').textContent === '`+title+`'`)
	}
	teacher.Poll("the timer's button", `document.getElementById('btn-explore-start').textContent === 'Start the 2-minute explore' && t_clock() === 'hidden'`)

	pupil.Step("join on replica B", chromedp.Navigate(pupil.URL+"/r/"+code), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	pupil.Eval(exploreJS + `; 'ok'`)
	pupil.Poll("the fourth scene, no clock yet", `document.getElementById('room-scene-title').textContent === 'Out for 30 s, then 60, then 90' && t_clock() === 'hidden'`)
	wall.Step("the projector on replica B", chromedp.Navigate(wall.URL+"/r/"+code+"/projector"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	wall.Eval(exploreJS + `; 'ok'`)

	teacher.Step("start the explore by keyboard", chromedp.Focus(chromedp.CSS("#btn-explore-start")), chromedp.KeyEvent("\r"))
	teacher.Poll("the instructor's countdown", `t_left() > 100 && t_left() <= 120`)
	pupil.Poll("the attendee's countdown", `t_left() > 100 && t_left() <= 120`)
	wall.Poll("the projector's countdown", `t_left() > 100 && t_left() <= 120`)
	first := pupil.Eval(`String(window.t_first = t_left())`)
	pupil.Poll("the countdown going down from "+first, `t_left() > 0 && t_left() < window.t_first`)

	pupil.Step("break away", chromedp.Click(chromedp.CSS("#btn-step")))
	pupil.Poll("away, the clock still counting", `getComputedStyle(document.querySelector('.room-away')).display !== 'none' && t_left() > 0 && t_left() < window.t_first`)
	pupil.Eval(`String(window.t_away = t_left())`)
	pupil.Poll("the clock going down while away", `t_left() > 0 && t_left() < window.t_away`)

	// axe on the timer's parts (the rest of these pages is the look
	// tests'; what it finds there is logged).
	axe := browsertest.AxeSource(t)
	for i, b := range []*browser{teacher, pupil, wall} {
		for _, v := range browsertest.AxeViolations(b, axe) {
			if strings.Contains(v, "explore") {
				t.Error(v)
			} else {
				t.Logf("page %d (present, attendee, projector): %s", i, v)
			}
		}
	}

	teacher.Step("1280×720", chromedp.EmulateViewport(1280, 720), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	viewShot(t, teacher, "outlierlab-room-explore-present.png")
	for _, sz := range [][2]int64{{390, 844}, {853, 480}} {
		teacher.Step("resize", chromedp.EmulateViewport(sz[0], sz[1]), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		viewShot(t, teacher, "outlierlab-room-explore-present-"+strconv.FormatInt(sz[0], 10)+".png")
	}
	for _, sz := range [][2]int64{{390, 844}, {853, 480}, {1280, 720}} {
		pupil.Step("resize", chromedp.EmulateViewport(sz[0], sz[1]), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		viewShot(t, pupil, "outlierlab-room-explore-attendee-"+strconv.FormatInt(sz[0], 10)+".png")
		wall.Step("resize", chromedp.EmulateViewport(sz[0], sz[1]), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		viewShot(t, wall, "outlierlab-room-explore-projector-"+strconv.FormatInt(sz[0], 10)+".png")
	}
	teacher.Step("back to 1280×720", chromedp.EmulateViewport(1280, 720))

	teacher.Step("stop by keyboard", chromedp.Focus(chromedp.CSS("#btn-explore-stop")), chromedp.KeyEvent("\r"))
	for _, b := range []*browser{teacher, pupil, wall} {
		b.Poll("the clock gone after Stop", `t_clock() === 'hidden'`)
	}
	teacher.Step("start again", chromedp.Click(chromedp.CSS("#btn-explore-start")))
	pupil.Poll("the attendee's countdown again", `t_left() > 100`)
	// Two minutes on, as the servers reckon: a page opened now counts
	// from what the server says is left, nothing.
	clk.skip(2 * time.Minute)
	wall.Step("reload the projector", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	wall.Eval(exploreJS + `; 'ok'`)
	wall.Poll("time is up on the projector", `t_clock() === 'time is up' && document.getElementById('room-explore').classList.contains('up')`)
	teacher.Step("next scene", chromedp.Click(chromedp.CSS("#btn-scene-next")))
	// The next scene is on another lesson (panic): every page loads the
	// room's page (its helpers gone), which shows no clock.
	for _, b := range []*browser{teacher, pupil, wall} {
		b.Poll("the next scene, the clock gone", `(() => { const c = document.getElementById('room-explore'), t = document.getElementById('room-scene-title');
			return !!t && t.textContent === 'A burst, an 80% cap, and panic' && (!c || c.hidden); })()`)
	}
	teacher.Step("the recording", chromedp.Navigate(teacher.URL+"/r/"+code+"/recording"), chromedp.WaitVisible(chromedp.CSS("#rec-timeline")))
	teacher.Poll("the timeline's explore marks and their words", `document.querySelectorAll('.rec-mark.rec-explore').length === 3 &&
		/Instructor started a 2-minute explore \(scene 4 of 6/.test(document.querySelector('.rec-list').textContent) &&
		/Instructor stopped the explore timer/.test(document.querySelector('.rec-list').textContent) && /explore timer/.test(document.querySelector('.rec-legend').textContent)`)
	viewShot(t, teacher, "outlierlab-room-explore-recording.png")
	for _, b := range []*browser{teacher, pupil, wall} {
		b.CheckOffline()
	}
}
