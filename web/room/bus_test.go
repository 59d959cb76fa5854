package room

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/record"
	"outlierlab/web/room/recording"
	"outlierlab/web/roombus"
)

// natsCluster is a real JetStream cluster in the test process: n
// nats-servers joined by routes, each with its own store directory and
// random ports, asking for credentials as deploy/nats.conf's do (a user
// for clients, another for routes): the replicas give theirs in the URL.
type natsCluster struct {
	t       testing.TB
	servers []*server.Server
	opts    []*server.Options
}

// The test cluster's users: its clients' and its routes'.
const (
	clusterUser, clusterPassword           = "outlierlab", "test-client-password"
	clusterRouteUser, clusterRoutePassword = "route", "test-route-password"
)

func startNATSCluster(t testing.TB, n int) *natsCluster {
	t.Helper()
	c := &natsCluster{t: t}
	// JetStream clustering wants its routes configured: every server
	// routes to all (itself included, which it skips). The route ports
	// are free ones, picked first.
	var routes []*url.URL
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		routes = append(routes, &url.URL{Scheme: "nats", Host: ln.Addr().String(), User: url.UserPassword(clusterRouteUser, clusterRoutePassword)})
	}
	for i := range n {
		c.opts = append(c.opts, &server.Options{
			ServerName: fmt.Sprintf("olab-n%d", i+1), Host: "127.0.0.1", Port: server.RANDOM_PORT,
			NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir(),
			JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 256 << 20,
			Users:   []*server.User{{Username: clusterUser, Password: clusterPassword}},
			Cluster: server.ClusterOpts{Name: "olab", Host: "127.0.0.1", Port: ports[i], Username: clusterRouteUser, Password: clusterRoutePassword},
			Routes:  routes,
		})
	}
	c.servers = make([]*server.Server, n)
	t.Cleanup(func() {
		for _, s := range c.servers {
			if s != nil {
				s.Shutdown()
				s.WaitForShutdown()
			}
		}
	})
	for i := range n {
		c.restart(i)
	}
	for i, s := range c.servers {
		if !webtest.Eventually(20*time.Second, func() bool { return s.JetStreamIsClustered() && s.NumRoutes() >= n-1 }) {
			t.Fatalf("nats server %d did not join the cluster", i+1)
		}
	}
	c.waitLeader()
	return c
}

// waitLeader waits for the cluster to elect its JetStream meta leader
// and for every server to know it.
func (c *natsCluster) waitLeader() {
	c.t.Helper()
	if !webtest.Eventually(20*time.Second, func() bool {
		leaders := 0
		for _, s := range c.servers {
			if s != nil && s.JetStreamIsLeader() {
				leaders++
			}
			if s != nil && !s.JetStreamIsCurrent() {
				return false
			}
		}
		return leaders == 1
	}) {
		c.t.Fatal("the NATS cluster elected no JetStream leader within 20 s")
	}
}

// urls is the cluster's client URLs, as -nats-url takes them, with the
// clients' user and password.
func (c *natsCluster) urls() string {
	var u []string
	for _, o := range c.opts {
		u = append(u, fmt.Sprintf("nats://%s:%s@127.0.0.1:%d", clusterUser, clusterPassword, o.Port))
	}
	return strings.Join(u, ",")
}

// kill stops server i; restart starts it again on its ports and store.
// index is the server whose client URL is u (a connection's
// ConnectedUrl).
func (c *natsCluster) index(u string) int {
	c.t.Helper()
	for i, o := range c.opts {
		if strings.HasSuffix(u, fmt.Sprintf(":%d", o.Port)) {
			return i
		}
	}
	c.t.Fatalf("no server of the cluster at %q", u)
	return -1
}

func (c *natsCluster) kill(i int) {
	c.servers[i].Shutdown()
	c.servers[i].WaitForShutdown()
	c.servers[i] = nil
}

func (c *natsCluster) restart(i int) {
	c.t.Helper()
	o := c.opts[i].Clone()
	o.Routes = c.opts[i].Routes
	s, err := server.NewServer(o)
	if err != nil {
		c.t.Fatalf("nats server: %v", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		c.t.Fatalf("nats server %s did not restart", o.ServerName)
	}
	c.servers[i] = s
	// A restart keeps its client port.
	c.opts[i].Port = s.Addr().(*net.TCPAddr).Port
}

// streamReplicas is the copies a stream has, as the cluster says.
func streamReplicas(t testing.TB, urls, name string) int {
	t.Helper()
	nc, err := nats.Connect(urls)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	return st.CachedInfo().Config.Replicas
}

// The README's production setup, for real: two replicas on a 3-node
// JetStream cluster (-nats-url with the three servers). A room is made on
// one, its question opened there and answered on both, revealed on the
// other; the recording holds it all, read through either replica; the
// bucket and the recordings have three copies; a NATS node killed loses
// nothing, and back it serves again.
func TestBusCluster3(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node NATS cluster: make test runs it, make check does not")
	}
	c := startNATSCluster(t, 3)
	la := startRoomLab(t, roombus.BusOptions{URL: c.urls()}, Limits{})
	lb := startRoomLab(t, roombus.BusOptions{URL: c.urls()}, Limits{})
	if la.Bus.Replicas != 3 || lb.Bus.Replicas != 3 {
		t.Fatalf("copies of the rooms' bucket: %d and %d, want 3", la.Bus.Replicas, lb.Bus.Replicas)
	}
	for _, name := range []string{"KV_" + roombus.RoomBucket, roombus.TimelineStream} {
		if n := streamReplicas(t, c.urls(), name); n != 3 {
			t.Errorf("%s: %d copies, want 3", name, n)
		}
	}
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	follower := roomtest.OpenStreamCtx(t, t.Context(), lb.TS.URL, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`), roomtest.AttendeeCookie(t, lb.TS.URL, code))
	webtest.WaitFor(t, follower, "the first redraw on the other replica", roomtest.Charted)

	st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions", `{"qkind":"ejected","qhost":"h5","qat":60}`, code, key, "")
	var q record.Question
	if st != 201 || json.Unmarshal([]byte(body), &q) != nil {
		t.Fatalf("open a question: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the question on the follower's page", func(ev webtest.Event) bool { return strings.Contains(ev.Data, "Is h5 ejected at 60 s?") })
	answer := func(base, who, a string) {
		t.Helper()
		if st, body := roomtest.Call(t, "POST", base+"/r/"+code+"/answer", `{"q":"`+q.ID+`","qans":"`+a+`"}`, code, "", who); st != 204 {
			t.Fatalf("answer on %s: %d %s", base, st, body)
		}
	}
	answer(la.TS.URL, att(t, la, code, "attendee-01"), "yes")
	answer(lb.TS.URL, att(t, lb, code, "attendee-02"), "no")

	// A NATS node goes: the workshop goes on. Writes wait out the
	// election of the streams' new leaders; a watch whose consumer was on
	// the dead node is re-created by the client once it misses two
	// heartbeats (5 s each), so the count may take that long to show.
	// The node killed is the one replica b is connected to, and the
	// answer goes to b at once: it waits for the client to reconnect to
	// another node (a 503 "reconnecting" in CI, before the grace).
	third := att(t, lb, code, "attendee-03") // minted while the bus is whole
	on := c.index(lb.Bus.Conn().ConnectedUrl())
	c.kill(on)
	killed := time.Now()
	answer(lb.TS.URL, third, "no")
	t.Logf("an answer with a NATS node down: accepted after %v", time.Since(killed).Round(time.Millisecond))
	timeout := time.After(25 * time.Second)
	for counted := false; !counted; {
		select {
		case ev, ok := <-follower:
			if !ok {
				t.Fatal("the follower's stream ended with a NATS node down")
			}
			counted = strings.Contains(ev.Data, ">3</span> answered")
		case <-timeout:
			t.Fatal("no count at 3 on the follower's page within 25 s of a NATS node's death")
		}
	}
	t.Logf("the count on the follower's page with a NATS node down: after %v", time.Since(killed).Round(time.Millisecond))
	c.restart(on)

	st, body = roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, "")
	if st != 200 || json.Unmarshal([]byte(body), &q) != nil || q.Total != 3 || q.Answer != "no" {
		t.Fatalf("reveal: %d %s", st, body)
	}
	for _, l := range []*roomLab{la, lb} {
		st, body := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/recording.json", "", code, key, "")
		var rec recording.Recording
		if st != 200 || json.Unmarshal([]byte(body), &rec) != nil {
			t.Fatalf("recording: %d %s", st, body)
		}
		var kinds []string
		for _, e := range rec.Entries {
			kinds = append(kinds, e.Kind)
		}
		if k := strings.Join(kinds, " "); !strings.HasPrefix(k, "start") || !strings.Contains(k, "question") || !strings.HasSuffix(k, "reveal") {
			t.Errorf("recording's entries: %s\n%s", k, grepLines(l.Logs.String(), "WARN"))
		}
	}
}

// A bucket that exists is opened as it is: a replica never changes its
// copies (here one, on a cluster of three).
func TestBusKeepsBucketReplicas(t *testing.T) {
	c := startNATSCluster(t, 3)
	nc, err := nats.Connect(c.urls())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	// A fresh cluster may still be placing its first stream (CI under
	// load: a 10 s deadline passed): the creation is tried again on a
	// timeout, for up to a minute.
	var cerr error
	if !webtest.Eventually(time.Minute, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, cerr = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: roombus.RoomBucket, History: 1, Replicas: 1})
		return cerr == nil || !roombus.Transient(cerr) && !errors.Is(cerr, context.DeadlineExceeded)
	}) || cerr != nil {
		t.Fatal(cerr)
	}
	l := startRoomLab(t, roombus.BusOptions{URL: c.urls()}, Limits{})
	if l.Bus.Replicas != 1 || streamReplicas(t, c.urls(), "KV_"+roombus.RoomBucket) != 1 {
		t.Fatalf("the bucket's copies changed: %d", l.Bus.Replicas)
	}
	if n := streamReplicas(t, c.urls(), roombus.TimelineStream); n != 1 {
		t.Errorf("the recordings' copies: %d, want the bucket's 1", n)
	}
	l.CreateRoom(t, `{"preset":"search-cache"}`)
}

// grepLines is the lines of s that contain part.
func grepLines(s, part string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, part) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A room that is gone says so on every room page: the stream of an
// attendee's, a projector's or the instructor's page for it patches the
// room's bar ("has ended"), stops following, and ends (Datastar does not
// retry a finished stream; an error status would leave the banner saying
// "Following the instructor").
func TestRoomGoneSaysSo(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	for _, role := range []string{"follow", "projector", "present"} {
		events := webtest.OpenStream(t, l.TS.URL, roomtest.Sig(roomtest.TabFollower, "K7QX2M", role, `"preset":"search-cache"`))
		var got []string
		for ev := range events {
			got = append(got, ev.Data)
		}
		all := strings.Join(got, "\n")
		if !strings.Contains(all, `id="room-bar"`) || !strings.Contains(all, "K7QX2M</span> has ended") || !strings.Contains(all, `"follow":false`) {
			t.Errorf("%s page of a gone room: %q", role, all)
		}
	}
}

// The bus up after the replica, with a page open: a follower's stream on
// a replica whose NATS is down waits (200, keepalives), and once NATS is
// back the page has the room, without a reload.
func TestBusStreamWaitsForBus(t *testing.T) {
	store := t.TempDir()
	opts := &server.Options{Port: server.RANDOM_PORT, JetStream: true, StoreDir: store}
	ns := webtest.StartNATS(t, opts)
	la := startRoomLab(t, roombus.BusOptions{URL: ns.ClientURL()}, Limits{})
	code, _ := la.CreateRoom(t, `{"preset":"search-cache"}`)
	att := roomtest.AttendeeCookie(t, la.TS.URL, code) // the page was loaded while the bus was up
	ns.Shutdown()
	ns.WaitForShutdown()

	bus, err := roombus.OpenBus(roombus.BusOptions{URL: fmt.Sprintf("nats://127.0.0.1:%d", opts.Port)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	s, err := newServer(Options{Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	ts := webtest.Serve(t, s)
	follower := roomtest.OpenStreamCtx(t, t.Context(), ts.URL, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`), att)
	if bus.Ready() {
		t.Fatal("the bus is open with NATS down")
	}
	back := time.Now()
	webtest.StartNATS(t, opts)
	webtest.WaitFor(t, follower, "the room on the waiting page once NATS is back", roomtest.Charted)
	t.Logf("the waiting page had the room %v after NATS came back", time.Since(back).Round(time.Millisecond))
	// The server goes before NATS does (cleanups run last-in first).
	s.lab.Shutdown()
	ts.Close()
}

// An attendee offline (its stream gone, the replica's hub for the room
// closed meanwhile, as after 20 s away and more) while the instructor
// moves on: the stream Datastar opens again has the room's current state
// in its first redraw, and follows on.
func TestRoomOfflineAttendeeResyncs(t *testing.T) {
	t.Parallel()
	la, lb := twoReplicas(t)
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	ctx, cancel := context.WithCancel(context.Background())
	sig := roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`)
	att := roomtest.AttendeeCookie(t, lb.TS.URL, code)
	first := roomtest.OpenStreamCtx(t, ctx, lb.TS.URL, sig, att)
	webtest.WaitFor(t, first, "the first redraw", roomtest.Charted)
	cancel() // offline
	for range first {
	}
	roomtest.WaitUntil(t, "the replica's hub for the room closed", func() bool {
		lb.S.rooms.mu.Lock()
		defer lb.S.rooms.mu.Unlock()
		h := lb.S.rooms.hubs[code]
		if h != nil && h.refs == 0 {
			h.stop()
			delete(lb.S.rooms.hubs, code) // what hubIdle does after 30 s
			return true
		}
		return h == nil
	})
	for i, cap := range []int{22, 37} {
		if st, body := roomtest.Post(t, la.TS.URL, "set", roomtest.Sig(webtest.TabOf("instructor-tab-000000001"), code, "present", fmt.Sprintf(`"preset":"search-cache","seq":%d,"cfg":{"max_ejection_percent":%d}`, i+1, cap)), code, key); st != 204 {
			t.Fatalf("the instructor's move: %d %s", st, body)
		}
	}
	back := roomtest.OpenStreamCtx(t, t.Context(), lb.TS.URL, sig, att) // online again
	webtest.WaitFor(t, back, "the room's current cap on the first redraw back", roomtest.SignalPatch(`"max_ejection_percent":37`))
	if st, body := roomtest.Post(t, la.TS.URL, "set", roomtest.Sig(webtest.TabOf("instructor-tab-000000001"), code, "present", `"preset":"search-cache","seq":3,"cfg":{"max_ejection_percent":45}`), code, key); st != 204 {
		t.Fatalf("the instructor's next move: %d %s", st, body)
	}
	webtest.WaitFor(t, back, "the next move", roomtest.SignalPatch(`"max_ejection_percent":45`))
}

// One data directory, one server: a second one on it is refused, naming
// the directory; once the first has closed, it may start.
func TestBusDataDirLocked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := roombus.StartBus(roombus.BusOptions{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := roombus.OpenBus(roombus.BusOptions{DataDir: dir}); err == nil || !strings.Contains(err.Error(), "another outlierlab serve uses the data directory "+dir) {
		b.Close()
		t.Fatalf("a second server on %s: %v", dir, err)
	}
	a.Close()
	b, err := roombus.StartBus(roombus.BusOptions{DataDir: dir})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	b.Close()
}

// A room made on one replica is there on the other at once: the
// instructor's next page may reach either (round robin). The bucket has
// three copies, and a direct get (the KV's Get) may be answered by a copy
// that has not applied the room's creation yet: a "not found" must be the
// stream leader's answer, not a lagging follower's (roombus.retryKV.Get).
func TestBusClusterReadsItsWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node NATS cluster: make test runs it, make check does not")
	}
	c := startNATSCluster(t, 3)
	lim := Limits{RoomsPerHour: 1000, JoinsPerMinute: 6000, JoinBurst: 1000}
	la := startRoomLab(t, roombus.BusOptions{URL: c.urls()}, lim)
	lb := startRoomLab(t, roombus.BusOptions{URL: c.urls()}, lim)
	const rooms = 60
	var missed []string
	for i := range rooms {
		code, _ := la.CreateRoom(t, `{"preset":"search-cache"}`)
		st, _ := roomtest.Call(t, "GET", lb.TS.URL+"/r/"+code, "", "", "", "")
		if st != 200 {
			missed = append(missed, fmt.Sprintf("room %d (%s): %d", i, code, st))
		}
	}
	if len(missed) > 0 {
		t.Errorf("%d of %d rooms made on A not found on B at once:\n%s", len(missed), rooms, strings.Join(missed, "\n"))
	}
}
