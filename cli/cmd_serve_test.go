package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"outlierlab/web/budget"
)

func TestServeAddr(t *testing.T) {
	env := func(port string) func(string) string {
		return func(k string) string {
			if k == "PORT" {
				return port
			}
			return ""
		}
	}
	for _, tt := range []struct {
		flag string
		set  bool
		port string
		want string
	}{
		{"", false, "", "127.0.0.1:8080"},
		{"", false, "9090", ":9090"},
		{"0.0.0.0:7000", true, "9090", "0.0.0.0:7000"},
	} {
		if got := serveAddr(tt.flag, tt.set, env(tt.port)); got != tt.want {
			t.Errorf("serveAddr(%q, %v, PORT=%q) = %q, want %q", tt.flag, tt.set, tt.port, got, tt.want)
		}
	}
}

// serve answers, and a shutdown ends it promptly even with a stream open
// (streams never go idle by themselves).
func TestServeGracefulShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan serving, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- serve(ctx, serveConfig{addr: "127.0.0.1:0"}, &out, io.Discard, ready) }()
	var addr serving
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	base := "http://" + addr.HTTP
	res, err := http.Get(base + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", err, res)
	}
	res.Body.Close()

	req, _ := http.NewRequest("POST", base+"/lab/stream", strings.NewReader(`{"tab":"`+testTab("0123456789abcdef0123")+`","preset":"search-cache"}`))
	req.AddCookie(browserCookie())
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("stream: %v", err)
	}
	defer stream.Body.Close()
	buf := make([]byte, 512)
	if _, err := stream.Body.Read(buf); err != nil {
		t.Fatalf("stream read: %v", err)
	}

	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown hung on the open stream")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	if !strings.Contains(out.String(), "stopped") {
		t.Errorf("output: %q", out.String())
	}
}

// startServe runs serve with flags until the test ends and returns where
// it listens.
func startServe(t *testing.T, args ...string) serving {
	t.Helper()
	dir := t.TempDir()
	cfg, err := parseServe(args, io.Discard, func(k string) string {
		if k == "OUTLIERLAB_DATA_DIR" {
			return dir
		}
		return ""
	})
	if err != nil {
		t.Fatalf("flags %v: %v", args, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan serving, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, io.Discard, io.Discard, ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve %v: %v", args, err)
		}
	})
	select {
	case s := <-ready:
		return s
	case err := <-done:
		t.Fatalf("serve %v: %v", args, err)
	}
	return serving{}
}

// signalStream opens a tab's stream and sends each signals patch's data.
func signalStream(t *testing.T, base, signals string, cookies ...*http.Cookie) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/lab/stream", strings.NewReader(signals))
	req.AddCookie(browserCookie())
	for _, c := range cookies {
		req.AddCookie(c)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("stream on %s: %v %v", base, err, res)
	}
	out := make(chan string, 256)
	go func() {
		defer close(out)
		defer res.Body.Close()
		signalPatches(ctx, res.Body, out)
	}()
	return out
}

// signalPatches sends each signals patch of the event stream body to out
// (its "signals" line's JSON), until the body or ctx ends.
func signalPatches(ctx context.Context, body io.Reader, out chan<- string) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	kind := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			kind = strings.TrimPrefix(line, "event: ")
		case kind == "datastar-patch-signals" && strings.HasPrefix(line, "data: signals "):
			select {
			case out <- strings.TrimPrefix(line, "data: signals "):
			case <-ctx.Done():
				return
			}
		}
	}
}

// awaitSignals waits for a signals patch containing every part.
func awaitSignals(t *testing.T, patches <-chan string, what string, parts ...string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case p, ok := <-patches:
			if !ok {
				t.Fatalf("stream ended waiting for %s", what)
			}
			match := true
			for _, part := range parts {
				match = match && strings.Contains(p, part)
			}
			if match {
				return
			}
		case <-timeout:
			t.Fatalf("no %s within 10 s", what)
		}
	}
}

// awaitEach waits until every part has been in a signals patch, in one
// patch or in several.
func awaitEach(t *testing.T, patches <-chan string, what string, parts ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, p := range parts {
		left[p] = true
	}
	timeout := time.After(10 * time.Second)
	for len(left) > 0 {
		select {
		case p, ok := <-patches:
			if !ok {
				t.Fatalf("stream ended waiting for %s", what)
			}
			for part := range left {
				if strings.Contains(p, part) {
					delete(left, part)
				}
			}
		case <-timeout:
			t.Fatalf("no %s within 10 s (missing %v)", what, left)
		}
	}
}

// post sends a command with a tab's signals and, if key is set, the room's
// key cookie; it returns the status.
func post(t *testing.T, base, verb, signals, code, key string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/lab/cmd/"+verb, strings.NewReader(signals))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(browserCookie())
	if key != "" {
		req.AddCookie(&http.Cookie{Name: "olab_key_" + code, Value: key})
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Two replicas in one process sharing one NATS, set up with serve's own
// flags: the first embeds the bus and opens it on a loopback port, the
// second uses it. A room made on the first is joined on the second; the
// instructor's cap on the first reaches the follower's stream on the
// second; the follower's own move breaks away and leaves the room as it
// was (a late joiner on the first still gets the instructor's cap); Rejoin
// restores the room's state.
func TestServeRoomsTwoReplicas(t *testing.T) {
	a := startServe(t, "-addr", "127.0.0.1:0", "-nats-listen", "127.0.0.1:0")
	if !strings.HasPrefix(a.NATS, "nats://127.0.0.1:") {
		t.Fatalf("the first replica's bus: %q", a.NATS)
	}
	if a.NATSCreds == "" {
		t.Fatal("the first replica's bus opens a port without credentials")
	}
	b := startServe(t, "-addr", "127.0.0.1:0", "-nats-url", a.NATS, "-nats-creds", a.NATSCreds)
	baseA, baseB := "http://"+a.HTTP, "http://"+b.HTTP

	req, _ := http.NewRequest("POST", baseA+"/rooms", strings.NewReader(`{"preset":"search-cache"}`))
	req.Header.Set("Accept", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var room struct{ Code, Key string }
	_ = json.NewDecoder(res.Body).Decode(&room)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || room.Code == "" {
		t.Fatalf("POST /rooms: %d %+v", res.StatusCode, room)
	}
	// An attendee's stream needs the identity the room's page gives.
	attendee := func(base string) *http.Cookie {
		res, err := http.Get(base + "/r/" + room.Code)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("the room's page on %s: %v %v", base, err, res.Status)
		}
		res.Body.Close()
		for _, c := range res.Cookies() {
			if c.Name == "olab_att_"+room.Code {
				return c
			}
		}
		t.Fatalf("the room's page on %s gave no attendee identity", base)
		return nil
	}
	sig := func(tab, role, rest string) string {
		return `{"tab":"` + tab + `","room":"` + room.Code + `","roomRole":"` + role + `","preset":"search-cache"` + rest + `}`
	}
	instructor, follower, late := testTab("instructor-tab-000000001"), testTab("follower-tab-00000000001"), testTab("late-joiner-tab-00000001")
	patches := signalStream(t, baseB, sig(follower, "follow", ""), attendee(baseB))
	awaitSignals(t, patches, "the follower's first redraw", `"max_ejection_percent":10`)

	for i, cap := range []int{20, 27, 34} { // a quick drag: the last one wins
		if st := post(t, baseA, "set", sig(instructor, "present", `,"seq":`+strconv.Itoa(i+1)+`,"cfg":{"max_ejection_percent":`+strconv.Itoa(cap)+`}`), room.Code, room.Key); st != 204 {
			t.Fatalf("the instructor's slider: %d", st)
		}
	}
	awaitSignals(t, patches, "the instructor's cap on the second replica", `"max_ejection_percent":34`)

	if st := post(t, baseB, "set", sig(follower, "follow", `,"seq":1,"cfg":{"max_ejection_percent":60}`), room.Code, ""); st != 204 {
		t.Fatalf("the follower's slider: %d", st)
	}
	awaitSignals(t, patches, "the break-away", `"follow":false`)
	awaitSignals(t, signalStream(t, baseA, sig(late, "follow", ""), attendee(baseA)), "the room's cap, unchanged, for a late joiner", `"max_ejection_percent":34`)

	if st := post(t, baseB, "rejoin", sig(follower, "follow", `,"follow":false`), room.Code, ""); st != 204 {
		t.Fatalf("rejoin: %d", st)
	}
	awaitEach(t, patches, "the room's state again, following", `"max_ejection_percent":34`, `"follow":true`)
}

// A replica without the bus's credentials, or with wrong ones, does not
// start: serve exits 1 at once, saying NATS refused them and which flag
// gives them, before it serves anything.
func TestServeWrongCredentialsExits(t *testing.T) {
	a := startServe(t, "-addr", "127.0.0.1:0", "-nats-listen", "127.0.0.1:0")
	wrong := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(wrong, []byte("outlierlab:not-the-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"none", []string{"-nats-url", a.NATS}, "none given: -nats-creds FILE, or user:password in -nats-url"},
		{"a wrong password", []string{"-nats-url", a.NATS, "-nats-creds", wrong}, "-nats-creds " + wrong},
		{"a wrong password in the URL", []string{"-nats-url", strings.Replace(a.NATS, "nats://", "nats://outlierlab:guess@", 1)}, "the user in -nats-url"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			start := time.Now()
			code := runServe(append([]string{"-addr", "127.0.0.1:0"}, tt.args...), &out, &errb)
			if code != 1 || !strings.Contains(strings.ToLower(errb.String()), "authorization violation") || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, want 1 naming the authorization violation and %q:\n%s", code, tt.want, errb.String())
			}
			if strings.Contains(out.String(), "serving the lab") || strings.Contains(errb.String(), "guess") {
				t.Errorf("served, or showed the password:\n%s%s", out.String(), errb.String())
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("refused after %v, not at once", took)
			}
		})
	}
}

// serve's soft memory limit: -memory-limit in MiB, none at 0, and
// $GOMEMLIMIT (which the runtime read itself) wins.
func TestMemoryLimit(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOMEMLIMIT" {
				return v
			}
			return ""
		}
	}
	for _, tt := range []struct {
		mib  int
		env  string
		want int64
	}{{400, "", 400 << 20}, {0, "", 0}, {400, "1GiB", 0}, {1, "", 1 << 20}} {
		if got := memoryLimit(tt.mib, env(tt.env)); got != tt.want {
			t.Errorf("memoryLimit(%d, GOMEMLIMIT=%q) = %d, want %d", tt.mib, tt.env, got, tt.want)
		}
	}
}

func TestParseServeFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-nats-listen", "127.0.0.1:0", "-nats-url", "nats://x:4222"}, "-nats-listen and -nats-url exclude each other"},
		{[]string{"-max-rooms", "0"}, "-max-rooms: 0 is out of range (allowed 1–1000000)"},
		{[]string{"-max-attendees", "-3"}, "-max-attendees: -3 is out of range"},
		{[]string{"-attendees-per-address", "0"}, "-attendees-per-address: 0 is out of range (allowed 1–1000000)"},
		{[]string{"-room-identities-per-address", "0"}, "-room-identities-per-address: 0 is out of range (allowed 1–10000)"},
		{[]string{"-room-identities-per-address", "10001"}, "-room-identities-per-address: 10001 is out of range (allowed 1–10000)"},
		{[]string{"extra"}, "serve takes no arguments"},
		{[]string{"-max-tabs", "0"}, "-max-tabs: 0 is out of range (allowed 1–1000000)"},
		{[]string{"-tabs-per-minute", "2000000"}, "-tabs-per-minute: 2000000 is out of range"},
		{[]string{"-commands-per-minute", "-1"}, "-commands-per-minute: -1 is out of range"},
		{[]string{"-memory-limit", "-5"}, "-memory-limit: -5 is out of range (allowed 0–1048576 MiB; 0 for none)"},
		{[]string{"-trusted-proxies", "10.0.0.0/8,nginx"}, `-trusted-proxies: "nginx" is not an address or CIDR prefix`},
		{[]string{"-max-work", "10"}, "-max-work: 10 is out of range (allowed 1000–1000000000000)"},
		{[]string{"-max-replay-cells", "0"}, "-max-replay-cells: 0 is out of range"},
		{[]string{"-max-run-work", "5"}, "-max-run-work: 5 is out of range (allowed 1000–1000000000000)"},
		{[]string{"-max-run-mib", "0"}, "-max-run-mib: 0 is out of range (allowed 1–1048576 MiB)"},
		{[]string{"-run-cache-mib", "99999999999"}, "-run-cache-mib: 99999999999 is out of range"},
		{[]string{"-max-run-mib", "100"}, "-max-run-mib: 100 is more than -run-cache-mib 64 (a run the lab admits must fit in its run cache)"},
		{[]string{"-heavy-queue", "0"}, "-heavy-queue: 0 is out of range (allowed 1–1000000)"},
		{[]string{"-heavy-wait", "1h"}, "-heavy-wait: 1h0m0s is out of range (allowed 100ms–10m)"},
		{[]string{"-shutdown-grace", "0s"}, "-shutdown-grace: 0s is out of range (allowed 1s–1h)"},
		{[]string{"-log-format", "xml"}, `-log-format: "xml" is not a format (allowed text, json)`},
		{[]string{"-plans", "/no/such/dir"}, "-plans: /no/such/dir is not a directory that can be read"},
		{[]string{"-nats-creds", "/etc/olab/creds"}, "-nats-creds (or $OUTLIERLAB_NATS_CREDS) /etc/olab/creds: only with -nats-listen or -nats-url"},
	} {
		if _, err := parseServe(tt.args, io.Discard, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.want)
		}
	}
	home := func(k string) string {
		if k == "HOME" {
			return "/home/u"
		}
		return ""
	}
	c, err := parseServe([]string{"-max-attendees", "50", "-room-joins-per-minute", "120", "-attendees-per-address", "300", "-room-identities-per-address", "90"}, io.Discard, home)
	if err != nil || c.rooms.MaxAttendees != 50 || c.rooms.AttendeesPerAddress != 300 || c.rooms.JoinsPerMinute != 120 || c.rooms.JoinBurst != 120 || c.rooms.IDsPerAddress != 90 || c.addr != defaultAddr {
		t.Errorf("parsed %+v, %v", c, err)
	}
	c, err = parseServe([]string{"-max-tabs", "300", "-tabs-per-minute", "60", "-commands-per-minute", "600", "-memory-limit", "0"}, io.Discard, home)
	if err != nil || c.tabs != 300 || c.tabsPerMinute != 60 || c.cmdsPerMinute != 600 || c.memoryMiB != 0 {
		t.Errorf("parsed %+v, %v", c, err)
	}
	c, err = parseServe([]string{"-trusted-proxies", "127.0.0.1, 10.0.0.0/8"}, io.Discard, home)
	if err != nil || len(c.proxies.Nets) != 2 || c.proxies.Nets[1].String() != "10.0.0.0/8" || c.proxies.Peer {
		t.Errorf("-trusted-proxies: %+v, %v", c.proxies, err)
	}
	c, err = parseServe([]string{"-max-work", "5000000", "-heavy-workers", "3", "-heavy-queue", "2", "-heavy-wait", "2s", "-max-run-work", "20000000", "-max-run-mib", "100", "-run-cache-mib", "200"}, io.Discard, home)
	if err != nil || c.budget != (budget.BudgetOptions{MaxWork: 5_000_000, MaxReplayCells: 250_000, MaxRunWork: 20_000_000, MaxRunBytes: 100 << 20, RunCacheBytes: 200 << 20,
		Workers: 3, Queue: 2, Wait: 2 * time.Second}) {
		t.Errorf("the budget: %+v, %v", c.budget, err)
	}
	if c, _ := parseServe(nil, io.Discard, home); c.memoryMiB != 400 || c.tabs != 2000 || c.proxies.Active() || c.grace != 30*time.Second || c.grace < c.budget.Wait+15*time.Second {
		t.Errorf("defaults: memory %d MiB, %d tabs", c.memoryMiB, c.tabs)
	}
	if code := runServe([]string{"-nats-listen", "not-an-address"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("a bad -nats-listen: exit %d, want 2", code)
	}
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OUTLIERLAB_DATA_DIR": "/data", "HOME": "/home/u"}, "/data"},
		{map[string]string{"XDG_STATE_HOME": "/st", "HOME": "/home/u"}, "/st/outlierlab"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/home/u"}, "/home/u/.local/state/outlierlab"},
	} {
		if c, err := parseServe(nil, io.Discard, env(tt.env)); err != nil || c.bus.DataDir != tt.want {
			t.Errorf("data dir with %v: %q, %v; want %q", tt.env, c.bus.DataDir, err, tt.want)
		}
	}
	if _, err := parseServe(nil, io.Discard, env(nil)); err == nil || !strings.Contains(err.Error(), "-data-dir") {
		t.Errorf("no data dir and no home: %v", err)
	}
	if c, err := parseServe([]string{"-nats-url", "nats://x:4222"}, io.Discard, env(nil)); err != nil || c.bus.URL == "" {
		t.Errorf("an external bus needs no data dir: %v", err)
	}
	if c, err := parseServe([]string{"-nats-url", "nats://x:4222"}, io.Discard, env(map[string]string{"OUTLIERLAB_NATS_CREDS": "/run/creds"})); err != nil || c.bus.Creds != "/run/creds" {
		t.Errorf("$OUTLIERLAB_NATS_CREDS: %q, %v", c.bus.Creds, err)
	}
	if c, err := parseServe([]string{"-data-dir", "/var/lib/olab"}, io.Discard, env(nil)); err != nil || c.bus.DataDir != "/var/lib/olab" {
		t.Errorf("-data-dir: %q, %v", c.bus.DataDir, err)
	}
}
