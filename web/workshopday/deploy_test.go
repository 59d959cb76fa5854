package workshopday_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"outlierlab/deploy"
	"outlierlab/web/internal/webtest"
)

// The production setup as processes, as the README runs it outside
// compose: a 3-node NATS cluster on deploy/nats.conf (JetStream, file
// store, credentials for clients and routes), two outlierlab replicas
// pointed at all three, and Debian's nginx with deploy/nginx.conf as
// shipped in front (round robin, no stickiness). Every process is in a
// process group of its own, killed at the test's end; every port is a
// free loopback one, every directory a temporary one.

// deployment is the whole setup of one test.
type deployment struct {
	t        testing.TB
	nats     []*proc
	replicas []*proc
	nginx    *proc
	// Base is nginx's address: every request of the test goes there.
	Base string
	// AccessLog is nginx's access log.
	AccessLog string
	logs      string
}

// proc is a child process that can be killed and started again with the
// same command line (its ports and directories stay its own).
type proc struct {
	t    testing.TB
	name string
	bin  string
	args []string
	log  string
	// addr is the HOST:PORT it serves (a replica's HTTP, a NATS node's
	// clients), for its readiness check; monitor a NATS node's monitoring
	// port (/jsz).
	addr, monitor string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// start runs the process in a process group of its own, its output
// appended to its log file.
func (p *proc) start() {
	p.t.Helper()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	fmt.Fprintf(f, "--- %s: %s %s\n", time.Now().Format(time.TimeOnly), p.bin, strings.Join(p.args, " "))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		p.t.Fatalf("start %s: %v", p.name, err)
	}
	f.Close() // the child has its own copy
	p.mu.Lock()
	p.cmd = cmd
	p.mu.Unlock()
}

// signal sends sig to the process's group and waits for it to exit, for
// up to wait (then SIGKILL); it reports how long the exit took.
func (p *proc) signal(sig syscall.Signal, wait time.Duration) time.Duration {
	p.mu.Lock()
	cmd := p.cmd
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return 0
	}
	start := time.Now()
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		p.t.Errorf("%s did not exit within %v of %v: killed", p.name, wait, sig)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	return time.Since(start)
}

// pid is the running process's id (0 when it is not running).
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// tail is the end of the process's log, for a failure's message.
func (p *proc) tail(n int) string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// newProc is a process of the deployment, ended with the test.
func (d *deployment) newProc(name, bin string, args ...string) *proc {
	p := &proc{t: d.t, name: name, bin: bin, args: args, log: filepath.Join(d.logs, name+".log")}
	d.t.Cleanup(func() { p.signal(syscall.SIGKILL, 10*time.Second) })
	return p
}

// startDeployment starts the NATS cluster, the replicas and nginx, and
// waits until nginx answers and both replicas have the room bus open.
// logs is where every process writes its output.
func startDeployment(t testing.TB, logs string) *deployment {
	t.Helper()
	bins := binaries(t)
	d := &deployment{t: t, logs: logs}

	// NATS: each node runs deploy/nats.conf as shipped (deploy.NATSConf:
	// its own name, ports and store, the test's passwords), so clients
	// and routes give credentials; every node routes to all three (itself
	// included, which it skips). The monitoring port (/jsz) is the
	// test's, on the command line.
	const nodes = 3
	clientPorts, routePorts, monitorPorts := make([]int, nodes), make([]int, nodes), make([]int, nodes)
	var routes [nodes]string
	var urls []string
	for i := range nodes {
		clientPorts[i], routePorts[i], monitorPorts[i] = webtest.FreePort(t), webtest.FreePort(t), webtest.FreePort(t)
		routes[i] = "127.0.0.1:" + strconv.Itoa(routePorts[i])
		urls = append(urls, "nats://127.0.0.1:"+strconv.Itoa(clientPorts[i]))
	}
	const clientPassword, routePassword = "workshop-day-client-password", "workshop-day-route-password"
	for i := range nodes {
		name := fmt.Sprintf("nats%d", i+1)
		conf := deploy.NATSConf(t, deploy.NATSNode{Name: name,
			Listen: "127.0.0.1:" + strconv.Itoa(clientPorts[i]), ClusterListen: routes[i], Routes: routes,
			StoreDir: t.TempDir(), ClientPassword: clientPassword, RoutePassword: routePassword})
		confFile := filepath.Join(t.TempDir(), name+".conf")
		if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		p := d.newProc(name, bins.nats, "-c", confFile, "-m", strconv.Itoa(monitorPorts[i]))
		p.addr, p.monitor = "127.0.0.1:"+strconv.Itoa(clientPorts[i]), "127.0.0.1:"+strconv.Itoa(monitorPorts[i])
		p.start()
		d.nats = append(d.nats, p)
	}
	// The replicas' -nats-creds, as the README's loop writes it.
	creds := filepath.Join(t.TempDir(), "nats-creds")
	if err := os.WriteFile(creds, []byte("outlierlab:"+clientPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The replicas: serve as the README's production setup runs it.
	// -trust-forwarded: nginx is their only client, as in compose. Every
	// page of the test comes from 127.0.0.1 (through nginx), where a
	// class has an address per laptop: the room-join allowance is raised
	// so that a day of page loads from one address is not limited.
	for i := range 2 {
		port := webtest.FreePort(t)
		p := d.newProc(fmt.Sprintf("replica%d", i+1), bins.outlierlab, "serve",
			"-addr", "127.0.0.1:"+strconv.Itoa(port), "-nats-url", strings.Join(urls, ","), "-nats-creds", creds,
			"-data-dir", t.TempDir(), "-trust-forwarded", "-room-joins-per-minute", "600")
		p.addr = "127.0.0.1:" + strconv.Itoa(port)
		p.start()
		d.replicas = append(d.replicas, p)
	}
	for _, r := range d.replicas {
		d.waitReady(r, 90*time.Second)
	}

	// nginx, with deploy/nginx.conf as shipped: only the upstreams'
	// addresses, the listen port and the writable paths replaced.
	dir := deploy.NginxDir(t)
	port := webtest.FreePort(t)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(deploy.NginxConf(t, dir, port, d.replicas[0].addr, d.replicas[1].addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	d.nginx = d.newProc("nginx", nginxPath(), "-p", dir, "-e", "stderr", "-c", conf, "-g", "daemon off;")
	d.nginx.start()
	d.Base = "http://127.0.0.1:" + strconv.Itoa(port)
	d.AccessLog = filepath.Join(dir, "access.log")
	if !webtest.Eventually(10*time.Second, func() bool { return httpOK(d.Base + "/healthz") }) {
		t.Fatalf("nginx did not answer within 10 s:\n%s", d.nginx.tail(20))
	}
	return d
}

// waitReady waits for a replica's /healthz?ready (the room bus open).
func (d *deployment) waitReady(r *proc, within time.Duration) time.Duration {
	d.t.Helper()
	start := time.Now()
	if !webtest.Eventually(within, func() bool { return httpOK("http://" + r.addr + "/healthz?ready") }) {
		d.t.Fatalf("%s: the room bus did not open within %v:\n%s", r.name, within, r.tail(30))
	}
	return time.Since(start)
}

// roomsLeader is the NATS node that leads the rooms' bucket (its stream,
// KV_outlierlab_rooms), as a running node's /jsz says, else the
// JetStream meta leader, else the first node.
func (d *deployment) roomsLeader() *proc {
	var jsz struct {
		Meta struct {
			Leader string `json:"leader"`
		} `json:"meta_cluster"`
		Accounts []struct {
			Streams []struct {
				Name    string `json:"name"`
				Cluster struct {
					Leader string `json:"leader"`
				} `json:"cluster"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	leader := ""
	for _, n := range d.nats {
		c := http.Client{Timeout: 2 * time.Second}
		res, err := c.Get("http://" + n.monitor + "/jsz?accounts=true&streams=true")
		if err != nil {
			continue
		}
		err = json.NewDecoder(res.Body).Decode(&jsz)
		res.Body.Close()
		if err != nil {
			continue
		}
		leader = jsz.Meta.Leader
		for _, a := range jsz.Accounts {
			for _, st := range a.Streams {
				if st.Name == "KV_outlierlab_rooms" && st.Cluster.Leader != "" {
					leader = st.Cluster.Leader
				}
			}
		}
		break
	}
	for _, n := range d.nats {
		if n.name == leader {
			return n
		}
	}
	return d.nats[0]
}

// waitListening waits until a NATS node takes connections again.
func (d *deployment) waitListening(p *proc, within time.Duration) {
	d.t.Helper()
	if !webtest.Eventually(within, func() bool {
		c, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		d.t.Fatalf("%s does not listen again within %v:\n%s", p.name, within, p.tail(30))
	}
}

// cpuSeconds is the CPU time (user + system) every process of the
// deployment has used so far: replicas, NATS nodes and nginx's master and
// workers (read from /proc; 0 where there is none).
func (d *deployment) cpuSeconds() float64 {
	var pids []int
	for _, p := range append(append([]*proc{d.nginx}, d.replicas...), d.nats...) {
		if pid := p.pid(); pid != 0 {
			pids = append(pids, groupPIDs(pid)...)
		}
	}
	total := 0.0
	for _, pid := range pids {
		total += procCPU(pid)
	}
	return total
}

// groupPIDs is every process in the process group pgid.
func groupPIDs(pgid int) []int {
	out := []int{pgid}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// procCPU is a process's user + system CPU time in seconds (/proc/PID/stat).
func procCPU(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces, in parens).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ, 100 on Linux
}

func httpOK(url string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// built is the binaries the deployment runs.
type built struct{ outlierlab, nats string }

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
	buildBins built
	buildErr  error
)

// binaries builds outlierlab (from the module's root) and nats-server
// (the version go.mod pins) once per test binary, without -race: the
// replicas are the product, not the test.
func binaries(t testing.TB) built {
	t.Helper()
	root := moduleRoot(t)
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "outlierlab-workshopday-bin-")
		if buildErr != nil {
			return
		}
		buildBins = built{outlierlab: filepath.Join(buildDir, "outlierlab"), nats: filepath.Join(buildDir, "nats-server")}
		for _, args := range [][]string{
			{"build", "-o", buildBins.outlierlab, "."},
			{"build", "-o", buildBins.nats, "github.com/nats-io/nats-server/v2"},
		} {
			cmd := exec.Command("go", args...)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBins
}

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// moduleRoot is the directory of `go env GOMOD`.
func moduleRoot(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil || len(bytes.TrimSpace(out)) == 0 || string(bytes.TrimSpace(out)) == os.DevNull {
			rootErr = fmt.Errorf("go env GOMOD: %q %v", out, err)
			return
		}
		rootDir = filepath.Dir(string(bytes.TrimSpace(out)))
	})
	if rootErr != nil {
		t.Fatal(rootErr)
	}
	return rootDir
}

// nginxPath is Debian's nginx, or "".
func nginxPath() string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// scanLines calls fn on each line of the file at path (nothing when
// there is none).
func scanLines(path string, fn func(string)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
}

// requests is how each replica answered requests to path, from their
// logs: "replica1: 204×3, replica2: 204×5".
func (d *deployment) requests(path string) string {
	var out []string
	for _, r := range d.replicas {
		by := map[string]int{}
		scanLines(r.log, func(l string) {
			if strings.Contains(l, "msg=request ") && strings.Contains(l, " path="+path+" ") {
				_, st, _ := strings.Cut(l, " status=")
				st, _, _ = strings.Cut(st, " ")
				by[st]++
			}
		})
		var parts []string
		for st, n := range by {
			parts = append(parts, st+"×"+strconv.Itoa(n))
		}
		sort.Strings(parts)
		if len(parts) == 0 {
			parts = []string{"none"}
		}
		out = append(out, r.name+": "+strings.Join(parts, ", "))
	}
	return strings.Join(out, "; ")
}

// streamOpens is how many streams each replica's log has opened:
// "replica1: 1, replica2: 0".
func (d *deployment) streamOpens() string {
	var out []string
	for _, r := range d.replicas {
		n := 0
		scanLines(r.log, func(l string) {
			if strings.Contains(l, `msg="stream open"`) {
				n++
			}
		})
		out = append(out, r.name+": "+strconv.Itoa(n))
	}
	return strings.Join(out, ", ")
}
