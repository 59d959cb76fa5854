package web

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"outlierlab/web/internal/webtest"
)

// Every challenge page's ways into the lab open it: each scenario's
// "watch it in the lab" (its preset and settings, as the free lab's query
// names them), and a failed goal's "open this scenario in the lab at T".
func TestChallengeLabLinks(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	h := s.Handler()
	labRE := regexp.MustCompile(`href="(/lab\?[^"]+)"`)
	res := webtest.Do(t, h, "GET", "/challenges", "")
	list := webtest.Body(t, res)
	ids := regexp.MustCompile(`data-challenge="([a-z0-9-]+)"`).FindAllStringSubmatch(list, -1)
	if res.StatusCode != 200 || len(ids) < 5 {
		t.Fatalf("/challenges: %d, %d challenges", res.StatusCode, len(ids))
	}
	links := 0
	for _, id := range ids {
		page := webtest.Body(t, webtest.Do(t, h, "GET", "/challenges/"+id[1], ""))
		for _, m := range labRE.FindAllStringSubmatch(page, -1) {
			link := strings.ReplaceAll(m[1], "&amp;", "&")
			if res := webtest.Do(t, h, "GET", link, ""); res.StatusCode != http.StatusOK {
				t.Errorf("%s: %s: %d %s", id[1], link, res.StatusCode, webtest.Head(webtest.Body(t, res), 300))
			}
			links++
		}
	}
	if links < 9 {
		t.Errorf("%d lab links; want one per scenario of every challenge", links)
	}
}
