package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"outlierlab/deploy"
)

// needNginx is the nginx binary, or skips the test with a message on a
// developer's machine without one. In CI ($CI set) it is never skipped:
// .ci/run installs Debian's nginx.
func needNginx(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
			if _, e := os.Stat(p); e == nil {
				return p
			}
		}
		if os.Getenv("CI") != "" {
			t.Fatal("nginx is not installed (.ci/run installs it with apt-get)")
		}
		t.Skip("nginx is not installed: the deploy/nginx.conf test is skipped (apt-get install nginx to run it)")
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startNginxEdited is startNginx with deploy/nginx.conf changed by edit;
// it returns the base URL and the access log's path.
func startNginxEdited(t *testing.T, edit func(string) string, upstreams ...string) (base, accessLog string) {
	t.Helper()
	bin := needNginx(t)
	dir := deploy.NginxDir(t)
	port := freePort(t)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(edit(deploy.NginxConf(t, dir, port, upstreams...))), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-e", "stderr", "-c", conf, "-g", "daemon off;")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the master and its workers, ended as one
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGTERM: a fast shutdown (SIGQUIT's graceful one would wait for
		// the open streams to end).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	base = "http://127.0.0.1:" + strconv.Itoa(port)
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if res, err := http.Get(base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return base, filepath.Join(dir, "access.log")
			}
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("nginx did not answer within 10 s: %s", out.String())
		}
	}
}

// TestNginxConfig: `nginx -t` accepts deploy/nginx.conf as a whole file
// (only its upstreams, port and writable paths replaced: a name such as
// replica1 must resolve for -t), and the file has what the replicas need
// of it: keepalive HTTP/1.1 upstream connections (a dying replica's stream
// then reaches the browser as an error, which it retries, not as a clean
// end), room for a 4 MiB what-if upload, a read timeout above the
// streams' 15 s keepalive, the browser's Host and X-Forwarded-*, a tab's
// stream (a POST) passed to the other replica on a 503 as a GET is, and an
// access log without query strings, bodies or cookies.
func TestNginxConfig(t *testing.T) {
	bin := needNginx(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(deploy.NginxConf(t, dir, freePort(t), "127.0.0.1:1", "127.0.0.1:2")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-t", "-p", dir, "-e", "stderr", "-c", conf).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test is successful") {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
	raw, err := os.ReadFile("deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string // the directives, comments dropped
	for _, l := range strings.Split(string(raw), "\n") {
		l, _, _ = strings.Cut(l, "#")
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	directives := strings.Join(lines, "\n")
	for _, want := range []string{"events {", "http {", "upstream outlierlab {", "keepalive 32;",
		"proxy_http_version 1.1;", `proxy_set_header Connection "";`, "client_max_body_size 5m;",
		"proxy_set_header Host $http_host;", "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
		"proxy_set_header X-Forwarded-Proto $scheme;", "log_format outlierlab", "access_log /dev/stdout outlierlab;",
		// A tab's stream is a POST: a replica's 503 passes it on as a GET's.
		"location ~ ^/(lab|r/[A-Za-z0-9]+/recording)/stream$ {\nproxy_pass http://outlierlab;\nproxy_next_upstream error timeout http_503 non_idempotent;"} {
		if !strings.Contains(directives, want) {
			t.Errorf("deploy/nginx.conf has no %q", want)
		}
	}
	if m := regexp.MustCompile(`proxy_read_timeout (\d+)s;`).FindStringSubmatch(directives); m == nil {
		t.Error("deploy/nginx.conf sets no proxy_read_timeout in seconds")
	} else if s, _ := strconv.Atoi(m[1]); s <= 15 {
		t.Errorf("proxy_read_timeout %ds is not above the streams' 15 s keepalive", s)
	}
	_, format, _ := strings.Cut(directives, "log_format outlierlab")
	format, _, _ = strings.Cut(format, ";")
	for _, v := range []string{"$request ", "$request\"", "$request_uri", "$args", "$query_string", "$is_args", "$arg_", "$http_referer", "$request_body", "$http_cookie", "$cookie_"} {
		if strings.Contains(format, v) {
			t.Errorf("the access log's format writes %s: a query string, a body or a cookie (a tab id, a browser's identity, an instructor key) in the log", strings.Trim(v, ` "`))
		}
	}
}

// follow is a follower's stream through base that reconnects when it
// ends, as Datastar does (here at once), sending each signals patch.
func follow(t *testing.T, base, signals, cookie string, opened *atomic.Int32) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	out := make(chan string, 256)
	go func() {
		for ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, "POST", base+"/lab/stream", strings.NewReader(signals))
			req.Header.Set("Cookie", cookie)
			req.AddCookie(browserCookie())
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			opened.Add(1)
			signalPatches(ctx, res.Body, out)
			res.Body.Close()
		}
	}()
	return out
}

// The deployment recipe for real: Debian's nginx with deploy/nginx.conf
// in front of two replicas (child processes) on one NATS with JetStream,
// round robin, no sticky sessions, keepalive HTTP/1.1 upstream. A room
// is made through nginx; a follower's stream through nginx gets each
// event at once (no buffering); an instructor's move posted as a browser
// does (Origin: the proxy's address) passes the same-origin check; a
// replica killed with SIGKILL, the follower is back on the room through
// the other one within 2 s; a 4 MiB upload reaches the replica; the
// access log names the streams without their tab ids.
func TestNginxTwoReplicas(t *testing.T) {
	needNginx(t)
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server did not start")
	}
	r1 := startChild(t, nil, "-nats-url", ns.ClientURL())
	r2 := startChild(t, nil, "-nats-url", ns.ClientURL())
	r1.ready(t)
	r2.ready(t)
	base, accessLog := startNginxEdited(t, func(conf string) string { return conf }, strings.TrimPrefix(r1.base, "http://"), strings.TrimPrefix(r2.base, "http://"))

	st, body := call(t, "POST", base+"/rooms", `{"preset":"search-cache"}`, "")
	var room struct{ Code, Key string }
	if st != 201 || json.Unmarshal([]byte(body), &room) != nil {
		t.Fatalf("POST /rooms through nginx: %d %s", st, body)
	}
	sig := func(tab, role, rest string) string {
		return `{"tab":"` + tab + `","room":"` + room.Code + `","roomRole":"` + role + `","preset":"search-cache"` + rest + `}`
	}
	instructor, follower := testTab("instructor-tab-000000001"), testTab("follower-tab-00000000001")
	// The join link (and its QR code) on the instructor's page names the
	// proxy's address, not the upstream's.
	if st, body := call(t, "GET", base+"/r/"+room.Code+"/present", "", "olab_key_"+room.Code+"="+room.Key); st != 200 || !strings.Contains(body, strings.TrimPrefix(base, "http://")+"/r") {
		t.Fatalf("the present page through nginx: %d, join link without %s: %s", st, base, body)
	}
	opened := time.Now()
	var streams atomic.Int32
	patches := follow(t, base, sig(follower, "follow", ""), attendee(t, base, room.Code), &streams)
	awaitSignals(t, patches, "the follower's first redraw through nginx", `"max_ejection_percent":10`)
	t.Logf("first event through nginx after %v", time.Since(opened).Round(time.Millisecond))

	seq := 0
	move := func(cap int) {
		t.Helper()
		seq++
		req, _ := http.NewRequest("POST", base+"/lab/cmd/set", strings.NewReader(sig(instructor, "present", `,"seq":`+strconv.Itoa(seq)+`,"cfg":{"max_ejection_percent":`+strconv.Itoa(cap)+`}`)))
		req.Header.Set("Content-Type", "application/json")
		// A browser's POST: the Origin is the proxy's address (a browser
		// without Fetch Metadata sends no Sec-Fetch-Site, and the lab
		// compares the Origin with the Host).
		req.Header.Set("Origin", base)
		req.AddCookie(&http.Cookie{Name: "olab_key_" + room.Code, Value: room.Key})
		req.AddCookie(browserCookie())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := bufio.NewReader(res.Body).ReadString(0)
		res.Body.Close()
		if res.StatusCode != 204 {
			t.Fatalf("the instructor's move through nginx: %d %s", res.StatusCode, b)
		}
	}
	moved := time.Now()
	move(34)
	awaitSignals(t, patches, "the instructor's move through nginx", `"max_ejection_percent":34`)
	t.Logf("a move on the follower's page through nginx after %v", time.Since(moved).Round(time.Millisecond))

	// Kill the replica that holds the follower's stream (its metrics
	// count one follower).
	victim := r2
	if _, m := call(t, "GET", r1.base+"/metrics", "", ""); strings.Contains(m, "\noutlierlab_room_followers 1\n") {
		victim = r1
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = victim.cmd.Wait()
	killed := time.Now()
	move(41)
	deadline := time.After(2 * time.Second)
	for done := false; !done; {
		select {
		case p := <-patches:
			done = strings.Contains(p, `"max_ejection_percent":41`)
		case <-deadline:
			t.Fatal("the follower did not follow the room within 2 s of a replica's SIGKILL")
		}
	}
	if streams.Load() < 2 {
		t.Errorf("the follower's stream was not on the killed replica (%d streams opened)", streams.Load())
	}
	t.Logf("a replica killed: the follower, reconnected through nginx, had the next move after %v", time.Since(killed).Round(time.Millisecond))

	// A what-if upload over the lab's 4 MiB passes nginx (5m) and is
	// refused by the replica, in its own words.
	res, err := http.Post(base+"/whatif", "text/plain", strings.NewReader(strings.Repeat("x", 4<<20+1024)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge || strings.Contains(string(b), "nginx") {
		t.Errorf("a 4 MiB upload through nginx: %d %.200s, want the replica's 413", res.StatusCode, b)
	}

	// The access log has the streams, without the tab's id (in the
	// POST's body) or the browser's identity (a cookie).
	logged, err := os.ReadFile(accessLog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logged), `"POST /lab/stream HTTP/1.1" 200`) || strings.Contains(string(logged), follower[:16]) || strings.Contains(string(logged), testBrowser) || strings.Contains(string(logged), "datastar") {
		t.Errorf("nginx's access log, want the streams without their query:\n%s", logged)
	}
}

// Issue 19, defect 6, through a real nginx that appends to
// X-Forwarded-For: a visitor who writes the header themselves, a new
// address each time, still meets the join limit (60 a minute), because
// the lab takes the right-most entry nginx did not trust, not the first.
func TestNginxForgedForwardedFor(t *testing.T) {
	needNginx(t)
	// nginx reaches the replica from 127.0.0.2, the one proxy trusted; the
	// visitor (this test) is 127.0.0.1, as any other address.
	r := startChild(t, nil, "-data-dir", t.TempDir(), "-trusted-proxies", "127.0.0.2", "-room-joins-per-minute", "60")
	r.ready(t)
	up := strings.TrimPrefix(r.base, "http://")
	base, _ := startNginxEdited(t, func(conf string) string {
		return strings.Replace(conf, "proxy_pass http://outlierlab;", "proxy_pass http://outlierlab;\n            proxy_bind 127.0.0.2;", 1)
	}, up, up) // both upstreams the one replica
	limited := 0
	for i := range 200 {
		req, _ := http.NewRequest("GET", base+"/r/ZZZZZZ", nil)
		req.Header.Set("X-Forwarded-For", "10.9."+strconv.Itoa(i/256)+"."+strconv.Itoa(i%256))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited < 135 {
		t.Errorf("%d of 200 forged guesses through nginx limited, want about 140 (60 a minute pass)", limited)
	}
}
