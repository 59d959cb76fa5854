package roombus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"outlierlab/deploy"
	"outlierlab/web/internal/webtest"
)

// quiet is a logger that says nothing.
func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func waitUntil(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}

// confCluster starts three nats-servers in the test's process, each run
// with deploy/nats.conf as shipped (deploy.NATSConf: only the names,
// ports, store and passwords are the test's), and waits until they are a
// JetStream cluster. It answers the client URLs and the clients'
// password.
func confCluster(t *testing.T) (urls string, password string) {
	t.Helper()
	const clientPW, routePW = "c0ffee-client-pw", "c0ffee-route-pw"
	var routes [3]string
	var clients []string
	for i := range routes {
		routes[i] = fmt.Sprintf("127.0.0.1:%d", webtest.FreePort(t))
	}
	var servers []*server.Server
	for i := range 3 {
		client := fmt.Sprintf("127.0.0.1:%d", webtest.FreePort(t))
		conf := deploy.NATSConf(t, deploy.NATSNode{
			Name: fmt.Sprintf("nats-%d", i+1), Listen: client, ClusterListen: routes[i], Routes: routes,
			StoreDir: t.TempDir(), ClientPassword: clientPW, RoutePassword: routePW})
		opts, err := server.ProcessConfigFile(writeFile(t, "nats.conf", conf))
		if err != nil {
			t.Fatalf("deploy/nats.conf: %v", err)
		}
		if opts.Cluster.Username == "" || len(opts.Users) == 0 {
			t.Fatalf("deploy/nats.conf asks no credentials of clients (%d users) or routes (%q)", len(opts.Users), opts.Cluster.Username)
		}
		opts.NoLog, opts.NoSigs = true, true
		ns, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		ns.Start()
		t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
		if !ns.ReadyForConnections(10 * time.Second) {
			t.Fatalf("nats-%d did not start", i+1)
		}
		servers = append(servers, ns)
		clients = append(clients, "nats://"+client)
	}
	// The routes carry the route password: without it the servers would
	// never be a cluster.
	for i, ns := range servers {
		if !waitUntil(30*time.Second, func() bool { return ns.NumRoutes() >= 2 && ns.JetStreamIsClustered() && ns.JetStreamIsCurrent() }) {
			t.Fatalf("nats-%d did not join the cluster (%d routes)", i+1, ns.NumRoutes())
		}
	}
	return strings.Join(clients, ","), clientPW
}

// Whoever reaches the bus's port without its credentials can neither
// connect, nor so list the rooms or write one: against the embedded
// server opened to other replicas (-nats-listen) and against the cluster
// deploy/nats.conf makes. With them, a client lists and writes.
func TestBusRefusesClientsWithoutCredentials(t *testing.T) {
	embedded, err := StartBus(BusOptions{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(embedded.Close)
	own, err := readCreds(embedded.CredsFile())
	if err != nil {
		t.Fatal(err)
	}
	clusterURLs, clusterPW := confCluster(t)
	clusterCreds := writeFile(t, "creds", "outlierlab:"+clusterPW+"\n")
	cluster, err := StartBus(BusOptions{URL: clusterURLs, Creds: clusterCreds, Log: quiet()})
	if err != nil {
		t.Fatalf("a replica with the cluster's credentials: %v", err)
	}
	t.Cleanup(cluster.Close)

	withUser := func(urls, user, pw string) string {
		var out []string
		for _, s := range strings.Split(urls, ",") {
			u, _ := url.Parse(s)
			u.User = url.UserPassword(user, pw)
			out = append(out, u.String())
		}
		return strings.Join(out, ",")
	}
	for _, bus := range []struct {
		name, urls, creds, user, password string
		b                                 *Bus
	}{
		{"embedded -nats-listen", embedded.URL(), embedded.CredsFile(), own.user, own.password, embedded},
		{"deploy/nats.conf cluster", clusterURLs, clusterCreds, "outlierlab", clusterPW, cluster},
	} {
		if _, err := bus.b.KV.Put(t.Context(), "ROOM42", []byte(`{"preset":"search-cache"}`)); err != nil {
			t.Fatalf("%s: the replica's own write: %v", bus.name, err)
		}
		credsOpt, err := (&creds{path: bus.creds, kind: credsPassword, user: bus.user, password: bus.password}).clientOption()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			url  string
			opts []nats.Option
			ok   bool
		}{
			{"no credentials", bus.urls, nil, false},
			{"a wrong password", bus.urls, []nats.Option{nats.UserInfo(bus.user, bus.password+"x")}, false},
			{"another user", bus.urls, []nats.Option{nats.UserInfo("admin", bus.password)}, false},
			{"a wrong password in the URL", withUser(bus.urls, bus.user, "guess"), nil, false},
			{"the credentials file", bus.urls, []nats.Option{credsOpt}, true},
			{"user:password in the URL", withUser(bus.urls, bus.user, bus.password), nil, true},
		} {
			t.Run(bus.name+"/"+c.name, func(t *testing.T) {
				nc, err := nats.Connect(c.url, c.opts...)
				if !c.ok {
					if err == nil {
						nc.Close()
						t.Fatal("connected without the bus's credentials")
					}
					if !authErr(err) {
						t.Fatalf("refused, but not for its credentials: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("refused with the bus's credentials: %v", err)
				}
				defer nc.Close()
				js, _ := jetstream.New(nc)
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				kv, err := js.KeyValue(ctx, RoomBucket)
				if err != nil {
					t.Fatal(err)
				}
				keys, err := kv.Keys(ctx)
				if err != nil || !slices.Contains(keys, "ROOM42") {
					t.Fatalf("list the rooms: %v, %v", keys, err)
				}
				if _, err := kv.Put(ctx, "ROOM42", []byte(`{"preset":"slow-host"}`)); err != nil {
					t.Fatalf("write a room: %v", err)
				}
			})
		}
	}
}

// A replica whose credentials NATS refuses does not start: OpenBus fails
// at once, naming the authorization violation and where the credentials
// came from, instead of retrying in the background. With the right ones,
// of either kind, it opens.
func TestReplicaWithWrongCredentialsRefusesToStart(t *testing.T) {
	seed := func(t *testing.T) string {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		s, _ := kp.Seed()
		return string(s)
	}
	pwFile := writeFile(t, "pw", "# the bus's user\noutlierlab:s3cret-enough\n")
	nkeyFile := writeFile(t, "nkey", seed(t)+"\n")
	for _, serverCreds := range []struct{ name, file string }{{"its own", ""}, {"a password", pwFile}, {"an nkey", nkeyFile}} {
		a, err := StartBus(BusOptions{Listen: "127.0.0.1:0", Creds: serverCreds.file, Log: quiet()})
		if err != nil {
			t.Fatalf("%s: %v", serverCreds.name, err)
		}
		u, _ := url.Parse(a.URL())
		u.User = url.UserPassword("outlierlab", "guess")
		for _, c := range []struct {
			name, url, creds string
			// want: "" opens, else what the error names.
			want []string
		}{
			{"none", a.URL(), "", []string{"authorization violation", "none given: -nats-creds FILE"}},
			{"a wrong password", a.URL(), writeFile(t, "wrong", "outlierlab:not-it\n"), []string{"authorization violation", "-nats-creds "}},
			{"an unknown nkey", a.URL(), writeFile(t, "other-nkey", seed(t)), []string{"-nats-creds ", "refused this replica's credentials"}},
			{"a wrong password in the URL", u.String(), "", []string{"authorization violation", "the user in -nats-url", "xxxxx"}},
			{"the bus's own", a.URL(), a.CredsFile(), nil},
		} {
			t.Run(serverCreds.name+"/"+c.name, func(t *testing.T) {
				start := time.Now()
				b, err := OpenBus(BusOptions{URL: c.url, Creds: c.creds, Log: quiet()})
				took := time.Since(start)
				if c.want == nil {
					if err != nil {
						t.Fatal(err)
					}
					defer b.Close()
					ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
					defer cancel()
					if err := b.WaitReady(ctx); err != nil {
						t.Fatal(err)
					}
					return
				}
				if err == nil {
					b.Close()
					t.Fatal("started")
				}
				for _, w := range c.want {
					if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(w)) {
						t.Errorf("the error does not say %q: %v", w, err)
					}
				}
				if strings.Contains(err.Error(), "guess") {
					t.Errorf("the error shows the URL's password: %v", err)
				}
				if took > 3*time.Second {
					t.Errorf("refused after %v, not at once", took)
				}
			})
		}
		a.Close()
	}
}

// A replica started before NATS, which then refuses its credentials,
// fails for good once nats.go gives up (Failed, Err naming why), instead
// of retrying for ever with the rooms answering 503.
func TestCredentialsRefusedAfterStart(t *testing.T) {
	port := webtest.FreePort(t)
	var logs webtest.SyncBuffer
	b, err := OpenBus(BusOptions{URL: fmt.Sprintf("nats://127.0.0.1:%d", port), Creds: writeFile(t, "c", "outlierlab:not-it\n"),
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir(),
		Users: []*server.User{{Username: "outlierlab", Password: "the-right-one"}}})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	defer ns.Shutdown()
	select {
	case <-b.Failed():
	case <-time.After(20 * time.Second):
		t.Fatalf("the bus did not fail within 20 s of NATS refusing it:\n%s", logs.String())
	}
	if err := b.Err(); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization violation") || !strings.Contains(err.Error(), "-nats-creds") {
		t.Errorf("Err: %v", err)
	}
	if !strings.Contains(logs.String(), "refused this replica's credentials") {
		t.Errorf("the log does not say so:\n%s", logs.String())
	}
}

// The embedded server's own credentials are made at its first start in
// the data directory, readable by its user alone, and the same file is
// used again after a restart: a replica given it still connects.
func TestCredentialsKeptInDataDir(t *testing.T) {
	dir := t.TempDir()
	var first []byte
	for start := range 2 {
		a, err := StartBus(BusOptions{Listen: "127.0.0.1:0", DataDir: dir, Log: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, CredsFileName)
		if a.CredsFile() != path {
			t.Errorf("start %d: credentials in %q, want %q", start+1, a.CredsFile(), path)
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("start %d: %s: %v, %v; want mode 0600", start+1, path, st.Mode(), err)
		}
		raw, _ := os.ReadFile(path)
		if start == 0 {
			first = raw
		} else if !bytes.Equal(raw, first) {
			t.Errorf("a restart made new credentials:\n%s\nthen\n%s", first, raw)
		}
		r, err := StartBus(BusOptions{URL: a.URL(), Creds: path, Log: quiet()})
		if err != nil {
			t.Fatalf("start %d: a replica with the file: %v", start+1, err)
		}
		r.Close()
		a.Close()
	}
	if m, _ := filepath.Glob(filepath.Join(dir, CredsFileName+".new-*")); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}
}

// The default bus, in-process, opens no port and needs no credentials:
// none are made, and -nats-creds without a port is refused, naming it.
func TestInProcessBusNeedsNoCredentials(t *testing.T) {
	dir := t.TempDir()
	b, err := StartBus(BusOptions{DataDir: dir, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.URL() != "" || b.CredsFile() != "" {
		t.Errorf("the in-process bus: URL %q, credentials %q", b.URL(), b.CredsFile())
	}
	if _, err := os.Stat(filepath.Join(dir, CredsFileName)); err == nil {
		t.Error("credentials made for a bus with no port")
	}
	if _, err := b.KV.Put(t.Context(), "ROOM42", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenBus(BusOptions{Creds: writeFile(t, "c", "a:b"), Log: quiet()}); err == nil || !strings.Contains(err.Error(), "-nats-creds: only with -nats-listen or -nats-url") {
		t.Errorf("-nats-creds without a port: %v", err)
	}
}

// A -nats-creds file that is none of the three kinds is refused, naming
// the flag, the file and what it may hold; so is a .creds file given to
// the embedded server, and credentials given twice.
func TestCredsFileRefused(t *testing.T) {
	for _, c := range []struct {
		name, content string
		o             BusOptions
		want          string
	}{
		{"empty", "# nothing\n\n", BusOptions{URL: "nats://127.0.0.1:4222"}, "holds 0 lines that are not comments, want one (a line USER:PASSWORD"},
		{"two lines", "a:b\nc:d\n", BusOptions{URL: "nats://127.0.0.1:4222"}, "holds 2 lines"},
		{"no password", "outlierlab\n", BusOptions{URL: "nats://127.0.0.1:4222"}, "is not a line USER:PASSWORD, an nkey seed (SU…), or a NATS .creds file"},
		{"a bad seed", "SUNOTASEED\n", BusOptions{URL: "nats://127.0.0.1:4222"}, "is not a valid nkey user seed"},
		{"a .creds file, embedded", "-----BEGIN NATS USER JWT-----\nx\n------END NATS USER JWT------\n", BusOptions{Listen: "127.0.0.1:0"}, "only an external NATS run with an operator checks"},
		{"twice", "a:b\n", BusOptions{URL: "nats://u:p@127.0.0.1:4222"}, "-nats-creds and a user in -nats-url: give the credentials one way"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Creds, o.Log = writeFile(t, "creds", c.content), quiet()
			b, err := OpenBus(o)
			if err == nil {
				b.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "-nats-creds") {
				t.Errorf("%v\nwant %q", err, c.want)
			}
		})
	}
}

// A -nats-url where nothing listens is said at once by the bus, naming
// the URL (its password hidden) and why; the bus keeps trying meanwhile.
func TestUnreachableURLSaidAtOnce(t *testing.T) {
	port := webtest.FreePort(t)
	var logs webtest.SyncBuffer
	start := time.Now()
	b, err := OpenBus(BusOptions{URL: fmt.Sprintf("nats://outlierlab:hidden@127.0.0.1:%d", port), Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("OpenBus took %v", took)
	}
	line := ""
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "cannot connect to NATS (-nats-url)") {
			line = l
		}
	}
	want := fmt.Sprintf("nats_url=nats://outlierlab:xxxxx@127.0.0.1:%d", port)
	if !strings.Contains(line, want) || !strings.Contains(line, "connection refused") || strings.Contains(logs.String(), "hidden") {
		t.Errorf("the line does not name the server and why, or shows the password (want %s):\n%s", want, logs.String())
	}
	if b.Ready() {
		t.Error("ready with no NATS")
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"nats://a:4222,nats://b:4222":           "nats://a:4222,nats://b:4222",
		"nats://u:pw@a:4222,nats://u:pw@b:4222": "nats://u:xxxxx@a:4222,nats://u:xxxxx@b:4222",
		"nats://tok3n@a:4222":                   "nats://xxxxx@a:4222",
		"nats://u:p%zz@a:4222":                  "nats://xxxxx@a:4222",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
