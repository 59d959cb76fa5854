package room

import (
	"encoding/json"
	"net/http"
	"outlierlab/web/internal/browsertest"
	"outlierlab/web/internal/roomtest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserRoomAnswerTargets: an attendee on a phone (390×844) answers
// the room's questions with a finger: the yes/no buttons of a choice, and
// the number field and its Answer button of a count, are each at least
// 44×44 px (issue 33: 40×22).
func TestBrowserRoomAnswerTargets(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	l := planLab(t)
	_, code, key, _ := startPlanRoom(t, l, "plan:lightning")
	b := browsertest.Laptops(t, l.TS.URL, 1)[0]
	b.Step("an attendee on a phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(l.TS.URL+"/r/"+code))
	b.Poll("the attendee's lab", `!!document.querySelector('#chart-lanes canvas')`)
	for _, q := range []struct{ ask, kind, want string }{
		{`{"scene":0}`, "yes/no", "yes,no"},
		{`{"qkind":"out","qat":40}`, "count", ",Answer"},
	} {
		st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions", q.ask, code, key, "")
		var opened struct{ ID string }
		if st != http.StatusCreated || json.Unmarshal([]byte(body), &opened) != nil {
			t.Fatalf("ask the %s question: %d %s", q.kind, st, body)
		}
		b.Poll("the "+q.kind+" question on the phone", `[...document.querySelectorAll('#room-question button, #room-question input')].map(e => e.tagName === 'INPUT' ? '' : e.textContent.trim()).join(',') === '`+q.want+`'`)
		b.Step("scroll to it", chromedp.Evaluate[chromedp.Void](`document.getElementById('room-question').scrollIntoView()`))
		viewShot(t, b, "outlierlab-room-answer-"+strings.ReplaceAll(q.kind, "/", "-")+"-390.png")
		if got := b.Eval(`[...document.querySelectorAll('#room-question button, #room-question input')].map(e => { const r = e.getBoundingClientRect();
			return r.width >= 44 && r.height >= 44 ? '' : (e.textContent.trim() || e.tagName.toLowerCase()) + ' ' + Math.round(r.width) + '×' + Math.round(r.height); }).filter(Boolean).join(', ')`); got != "" {
			t.Errorf("the %s question's answer targets under 44×44 px on a phone: %s", q.kind, got)
		}
	}
	b.CheckOffline()
}
