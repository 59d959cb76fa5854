package room

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"outlierlab/web/httperr"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/roombus"
)

// Issue 22, items 5 and 6: a room started in the browser keeps its key in
// an HttpOnly cookie, so the instructor's page shows the instructor link
// (present?key=…) that moves the key to another laptop; no other page
// shows it. Scripts send the key as "Authorization: Bearer KEY".
func TestRoomHandoverAndBearer(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	link := l.TS.URL + "/r/" + code + "/present?key=" + url.QueryEscape(key)

	st, page := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/present", "", code, key, "")
	if st != 200 || !strings.Contains(page, `id="room-handover-link">`+link+`</code>`) || !strings.Contains(page, "Keep it secret") {
		t.Fatalf("the instructor's page: %d, no instructor link %s", st, link)
	}
	for _, path := range []string{"/r/" + code, "/r/" + code + "/projector", "/r/" + code + "/recording"} {
		if st, page := roomtest.Call(t, "GET", l.TS.URL+path, "", code, "", ""); st != 200 || strings.Contains(page, key) || strings.Contains(page, "room-handover") {
			t.Errorf("%s: %d, shows the key or the instructor link", path, st)
		}
	}

	// Another laptop opens the link: it gets the key and an address
	// without it, then the instructor's page.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var got *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "olab_key_"+code {
			got = c
		}
	}
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/r/"+code+"/present" || got == nil || got.Value != key || !got.HttpOnly {
		t.Fatalf("the instructor link on another laptop: %d Location %q cookie %v", res.StatusCode, res.Header.Get("Location"), got)
	}
	if st, _ := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/present", "", code, got.Value, ""); st != 200 {
		t.Errorf("the other laptop's instructor page: %d", st)
	}

	for _, tc := range []struct {
		auth string
		want int
	}{{"Bearer " + key, 201}, {"bearer " + key, 201}, {"Bearer nope", 403}, {"Basic " + key, 403}, {"", 403}} {
		req, _ := http.NewRequest("POST", l.TS.URL+"/r/"+code+"/questions", strings.NewReader(`{"qkind":"out","qat":60}`))
		req.Header.Set("Content-Type", "application/json")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("a question with Authorization %q: %d %s, want %d", httperr.Truncate(tc.auth, 12), res.StatusCode, b, tc.want)
		}
	}
}
