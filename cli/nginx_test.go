package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
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

// startNginx runs nginx in the foreground with deploy/nginx.conf, its
// upstreams replaced by the given addresses and its listen by a free
// loopback port; it returns the base URL.
func startNginx(t *testing.T, upstreams ...string) string {
	t.Helper()
	return startNginxEdited(t, func(conf string) string { return conf }, upstreams...)
}

// startNginxEdited is startNginx with deploy/nginx.conf changed by edit.
func startNginxEdited(t *testing.T, edit func(string) string, upstreams ...string) string {
	t.Helper()
	bin := needNginx(t)
	site, err := os.ReadFile("deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	conf := string(site)
	for i, u := range upstreams {
		conf = strings.Replace(conf, fmt.Sprintf("server replica%d:8080;", i+1), "server "+u+";", 1)
	}
	if strings.Contains(conf, "replica") && strings.Contains(conf, ":8080;") {
		t.Fatalf("deploy/nginx.conf: upstreams not replaced:\n%s", conf)
	}
	conf = strings.Replace(edit(conf), "listen 8080;", "listen 127.0.0.1:"+strconv.Itoa(port)+";", 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "site.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var temps string
	for _, k := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		temps += fmt.Sprintf("  %s_temp_path %s;\n", k, filepath.Join(dir, k))
	}
	main := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
%[2]s  include %[1]s/site.conf;
}
`, dir, temps)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		_ = cmd.Wait()
	})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if res, err := http.Get(base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return base
			}
		}
		if time.Since(start) > 10*time.Second {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not answer within 10 s: %s %s", out.String(), log)
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
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/lab/stream?datastar="+url.QueryEscape(signals), nil)
			req.Header.Set("Cookie", cookie)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			opened.Add(1)
			sc := bufio.NewScanner(res.Body)
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
					}
				}
			}
			res.Body.Close()
		}
	}()
	return out
}

// The deployment recipe for real: Debian's nginx with deploy/nginx.conf
// in front of two replicas (child processes) on one NATS with JetStream,
// round robin, no sticky sessions. A room is made through nginx; a
// follower's stream through nginx gets each event at once (no buffering);
// an instructor's move posted as a browser does (Origin: the proxy's
// address) passes the same-origin check; a replica killed with SIGKILL,
// the follower is back on the room through the other one within 2 s.
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
	base := startNginx(t, strings.TrimPrefix(r1.base, "http://"), strings.TrimPrefix(r2.base, "http://"))

	st, body := call(t, "POST", base+"/rooms", `{"preset":"search-cache"}`, "")
	var room struct{ Code, Key string }
	if st != 201 || json.Unmarshal([]byte(body), &room) != nil {
		t.Fatalf("POST /rooms through nginx: %d %s", st, body)
	}
	sig := func(tab, role, rest string) string {
		return `{"tab":"` + tab + `","room":"` + room.Code + `","roomRole":"` + role + `","preset":"search-cache"` + rest + `}`
	}
	const instructor, follower = "instructor-tab-000000001", "follower-tab-00000000001"
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
	base := startNginxEdited(t, func(conf string) string {
		return strings.Replace(conf, "proxy_pass http://outlierlab;", "proxy_pass http://outlierlab;\n        proxy_bind 127.0.0.2;", 1)
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
