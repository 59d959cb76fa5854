package cli

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"outlierlab/web/tabid"
)

// child is serve running as a child process (the test binary as the
// program, asMainEnv), so that it can be killed for real.
type child struct {
	cmd  *exec.Cmd
	base string
}

func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append([]string{asMainEnv + "=1", "PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`serving the lab on (http://[^/ ]+)/`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("serve %v exited: %s", args, stderr.String())
		}
		c.base = a
	case <-time.After(20 * time.Second):
		t.Fatalf("serve %v: no address within 20 s: %s", args, stderr.String())
	}
	return c
}

// ready waits for /healthz?ready and returns how long it took.
func (c *child) ready(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < 20*time.Second {
		if res, err := http.Get(c.base + "/healthz?ready"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return time.Since(start)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the bus did not open within 20 s")
	return 0
}

func call(t *testing.T, method, url, body, cookie string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(res.Body).WriteTo(&b)
	return res.StatusCode, b.String()
}

// The tests' browser: its identity cookie (web/tabid) goes with every
// stream and command the tests send, and their tabs are issued for it.
const testBrowser = "0123456789abcdef0123456789abcdef"

// testTab is the tab id of nonce issued for testBrowser.
func testTab(nonce string) string { return tabid.For(testBrowser, nonce) }

// browserCookie is testBrowser's identity cookie.
func browserCookie() *http.Cookie { return &http.Cookie{Name: tabid.Cookie, Value: testBrowser} }

// attendee is a new browser's identity in a room, as its page gives it:
// "olab_att_CODE=…", for a Cookie header.
func attendee(t *testing.T, base, code string) string {
	t.Helper()
	res, err := http.Get(base + "/r/" + code)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, c := range res.Cookies() {
		if c.Name == "olab_att_"+code {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("the room's page (%d) gave no attendee identity", res.StatusCode)
	return ""
}

// The default server (embedded bus, its data directory) killed with
// SIGKILL mid-workshop and started again on the same directory: the room,
// its open question with its answers, and the recording are there, and a
// follower's stream on the new process shows the question at once. The
// process runs with no writable temporary directory and no home: the
// data directory is all it writes (a read-only container root).
func TestServeRestartKeepsWorkshop(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	env := []string{"TMPDIR=/nonexistent/tmp"}
	a := startChild(t, env, "-data-dir", dir)
	t.Logf("first start: bus open after %v", a.ready(t))

	st, body := call(t, "POST", a.base+"/rooms", `{"preset":"search-cache"}`, "")
	var room struct{ Code, Key string }
	if st != 201 || json.Unmarshal([]byte(body), &room) != nil {
		t.Fatalf("POST /rooms: %d %s", st, body)
	}
	key := "olab_key_" + room.Code + "=" + room.Key
	st, body = call(t, "POST", a.base+"/r/"+room.Code+"/questions", `{"qkind":"ejected","qhost":"h5","qat":60}`, key)
	var q struct{ ID string }
	if st != 201 || json.Unmarshal([]byte(body), &q) != nil {
		t.Fatalf("open a question: %d %s", st, body)
	}
	for i := range 2 {
		if st, body := call(t, "POST", a.base+"/r/"+room.Code+"/answer", `{"q":"`+q.ID+`","qans":"`+[]string{"yes", "no"}[i]+`"}`, attendee(t, a.base, room.Code)); st != 204 {
			t.Fatalf("answer: %d %s", st, body)
		}
	}

	// A follower's page, loaded before the crash: its identity is still
	// good after it (signed with a secret derived from the room's key hash,
	// which is on disk with the room).
	followerID, _ := http.ParseCookie(attendee(t, a.base, room.Code))

	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	restarted := time.Now()
	b := startChild(t, env, "-data-dir", dir)
	t.Logf("after kill -9: serving after %v, bus open after %v more", time.Since(restarted).Round(time.Millisecond), b.ready(t))

	if st, body := call(t, "GET", b.base+"/r/"+room.Code, "", ""); st != 200 {
		t.Fatalf("the room's page after the restart: %d %s", st, body)
	}
	if st, body := call(t, "GET", b.base+"/r/"+room.Code+"/question", "", key); st != 200 || !strings.Contains(body, `"count":2`) || !strings.Contains(body, q.ID) {
		t.Fatalf("the open question after the restart: %d %s", st, body)
	}
	st, body = call(t, "GET", b.base+"/r/"+room.Code+"/recording.json", "", key)
	if st != 200 || !strings.Contains(body, `"kind":"start"`) || !strings.Contains(body, `"kind":"question"`) {
		t.Fatalf("the recording after the restart: %d %s", st, body)
	}
	patches := signalStream(t, b.base, `{"tab":"`+testTab("follower-tab-00000000001")+`","room":"`+room.Code+`","roomRole":"follow","preset":"search-cache"}`, followerID...)
	awaitSignals(t, patches, "the follower's page on the restarted server", `"max_ejection_percent":10`)
	t.Logf("a follower's stream resynced %v after the restart", time.Since(restarted).Round(time.Millisecond))
	// The answer goes on in the restarted room.
	if st, body := call(t, "POST", b.base+"/r/"+room.Code+"/questions/"+q.ID+"/reveal", "", key); st != 200 || !strings.Contains(body, `"total":2`) {
		t.Fatalf("reveal after the restart: %d %s", st, body)
	}
}
