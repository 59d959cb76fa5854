// Package roombus is the workshops' bus: NATS with JetStream, embedded
// in the process by default or an external cluster (-nats-url), holding
// the rooms' key-value bucket and the recordings' stream, every call
// retried through a leader election (see below and workshops.md).
package roombus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/httperr"
)

// The room bus is NATS (workshops.md: "no extra servers" is what users of
// follow-me tools ask for most after sync that does not break). By default
// the server is embedded in the process with no network port and the lab
// talks to it in-process, so `make run` needs nothing else; -nats-listen
// gives the embedded server a client port that other replicas connect to,
// with the credentials it asks for there (creds.go); -nats-url uses an
// external NATS (a cluster) and embeds none.
//
// A room's state lives in one JetStream key-value bucket on disk (the
// embedded server's in the data directory, -data-dir), one key per room,
// one revision kept (latest wins), each key expiring 12 h after its last
// write: a late joiner reads the current state, a replica that serves a
// room watches its key (one subscription per room per replica, fanned out
// to the room's streams in the process), and a restart keeps the rooms.
//
// The lab does not wait for the bus: a replica serves the lab at once and
// opens the bus in the background, retrying with backoff (a cluster still
// electing its JetStream leader, NATS started after the replicas); rooms
// answer 503 until it is open, and /healthz?ready says whether it is.

// RoomBucket is the key-value bucket of the rooms' states.
const RoomBucket = "outlierlab_rooms"

// Bounds of the bus. A record the lab writes is about 1–2 KiB; the bucket
// takes up to MaxValue so that a bigger hand-published value still
// reaches the replicas and is refused there with a log line (record.MaxBytes,
// web/room/record) rather than vanishing unnoticed.
// The recordings: one stream of every room's timeline, a subject per room
// (web/room/recording).
const (
	TimelineStream  = "outlierlab_timeline"
	TimelineSubject = "olab.tl."
)

const (
	MaxValue     = 64 << 10
	MaxBucket    = 32 << 20
	busMaxMemory = 64 << 20
	busMaxStore  = 256 << 20
	Timeout      = 5 * time.Second
	// busAttempt bounds one attempt of a key-value call (retry).
	busAttempt = 2 * time.Second
	// busRetryMin and busRetryMax bound the backoff between attempts to
	// open the bus.
	busRetryMin = 200 * time.Millisecond
	busRetryMax = 5 * time.Second
	// busSettle is how long a cluster that cannot place three copies of a
	// new bucket is given before the bucket is created with fewer: a fresh
	// cluster's servers join one by one.
	busSettle = 30 * time.Second
	// timelineDedup is the recordings' stream's window of message ids
	// (its Duplicates): an entry published again within it, with the same
	// id, is stored once (web/room/recording: Append). A retry comes
	// within a write's deadline (Timeout; 2×Timeout without one), far
	// inside it; two minutes is also JetStream's default.
	timelineDedup = 2 * time.Minute
)

// ErrNotReady is what rooms answer before the bus is open.
var ErrNotReady = errors.New("the room bus is not ready yet: try again in a few seconds")

// BusOptions says where the room bus is.
type BusOptions struct {
	// Listen, if set, makes the embedded server accept other replicas'
	// connections on this address (HOST:PORT; port 0 picks a free one).
	// Leave it empty for a single replica: the server then opens no port.
	Listen string
	// URL, if set, is an external NATS server or cluster (comma-separated
	// nats:// URLs, JetStream enabled); no server is embedded.
	URL string
	// Creds is a credentials file (-nats-creds; creds.go says what it may
	// hold): with URL, what this replica connects with (user:password in
	// the URL does too, but not both); with Listen, the user the embedded
	// server accepts, instead of the one it makes in DataDir. Without
	// either it has no use: the in-process bus needs none.
	Creds string
	// DataDir is where the embedded server keeps the rooms (its JetStream
	// store, in DataDir/nats): a restart with the same directory finds
	// them. Empty: a temporary directory, removed at Close (tests).
	DataDir string
	// TTL is how long a room lives after its last change (default 12 h).
	TTL time.Duration
	// Settle is how long a new bucket waits for a cluster to hold three
	// copies before it settles for what it holds (default 30 s).
	Settle time.Duration
	// MaxBucket and MaxTimeline are the bytes a new rooms' bucket and a
	// new recordings' stream hold (default MaxBucket, 32 MiB, each); tests
	// use smaller ones. An existing bucket or stream keeps its own.
	MaxBucket, MaxTimeline int64
	// RoomEntries is how many entries one room's recording keeps (default
	// RoomEntries): past it, that room's oldest go, never another room's
	// (quota.go).
	RoomEntries int
	Log         *slog.Logger
}

// Bus is one replica's connection to the room bus: the embedded server if
// any, one NATS connection, and the rooms' bucket.
type Bus struct {
	ns      *server.Server // nil with an external NATS
	tempDir string         // a temporary store directory, removed at Close
	// creds is the file of the embedded server's user, for the other
	// replicas ("" when it opens no port or is not embedded).
	creds string
	// failed is closed when nats.go closed the connection for good because
	// NATS refused the credentials (failErr says so): no retry mends it.
	failed  chan struct{}
	failErr error
	lock    *os.File // holds the data directory (lockDataDir)
	nc      *nats.Conn
	// kv, js and timeline are set before ready is closed; only code that
	// has seen ready closed (Ready) reads them.
	KV jetstream.KeyValue
	JS jetstream.JetStream
	// timeline is the rooms' recordings (web/room/recording).
	Timeline jetstream.Stream
	bucket   jetstream.KeyValue // KV's bucket, its calls not retried (health.go probes it)
	Replicas int                // the copies the rooms' bucket has
	ready    chan struct{}
	ctx      context.Context // ends at Close
	stop     context.CancelFunc
	done     chan struct{}
	log      *slog.Logger

	// roomStream is the bucket's stream (its keys' messages, with their
	// headers: KeepKey); keyTTL says a key may be created with a TTL of
	// its own (quota.go).
	roomStream jetstream.Stream
	keyTTL     bool

	mu      sync.Mutex
	lastErr error // the last attempt's failure, until ready
	// moved is closed when every watch should start again: at the
	// bucket's next leader election (followLeader), and when the bus is
	// back (health.go).
	moved chan struct{}
	// The bus's health (health.go): downCh is closed when it goes down,
	// back when it is back; wasDown says the connection was lost since
	// JetStream last answered, silent that JetStream has not answered
	// for busSilent; probing that a probe runs.
	downCh, back             chan struct{}
	wasDown, silent, probing bool
	lostAt                   time.Time // when the connection was last lost
	// dialFails counts the tries to reach a NATS server that failed since
	// the connection was last made (their log lines are thinned).
	dialFails int
}

// OpenBus starts the embedded server (or connects to the external NATS)
// and opens the rooms' bucket in the background, creating it if it is
// missing, until it is open or the bus is closed. It fails only on what
// no retry mends: bad options, a data directory it cannot write, a
// credentials file it cannot read, credentials NATS refuses.
func OpenBus(o BusOptions) (*Bus, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.TTL <= 0 {
		o.TTL = 12 * time.Hour
	}
	if o.Settle <= 0 {
		o.Settle = busSettle
	}
	if o.MaxBucket <= 0 {
		o.MaxBucket = MaxBucket
	}
	if o.MaxTimeline <= 0 {
		o.MaxTimeline = MaxBucket
	}
	if o.RoomEntries <= 0 {
		o.RoomEntries = RoomEntries
	}
	if o.Listen != "" && o.URL != "" {
		return nil, errors.New("room bus: -nats-listen and -nats-url exclude each other (an embedded server, or an external one)")
	}
	if o.Creds != "" && o.Listen == "" && o.URL == "" {
		return nil, errors.New("-nats-creds: only with -nats-listen or -nats-url (the in-process bus opens no port and needs no credentials)")
	}
	b := &Bus{log: o.Log, ready: make(chan struct{}), done: make(chan struct{}), moved: make(chan struct{}),
		downCh: make(chan struct{}), back: make(chan struct{}), failed: make(chan struct{})}
	ctx, stop := context.WithCancel(context.Background())
	b.ctx = ctx
	var err error
	if o.URL != "" {
		err = b.connect(o.URL, o.Creds)
	} else {
		err = b.embed(o.Listen, o.DataDir, o.Creds)
	}
	if err != nil {
		stop()
		b.Close()
		return nil, err
	}
	b.stop = stop
	go b.open(ctx, o)
	return b, nil
}

// StartBus is OpenBus, then waits for the bus to open (up to 30 s).
func StartBus(o BusOptions) (*Bus, error) {
	b, err := OpenBus(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.WaitReady(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Ready reports whether the rooms' bucket is open.
func (b *Bus) Ready() bool {
	select {
	case <-b.ready:
		return true
	default:
		return false
	}
}

// WaitReady waits until the bus is open or ctx ends (then it says why the
// bus is not open).
func (b *Bus) WaitReady(ctx context.Context) error {
	select {
	case <-b.ready:
		return nil
	case <-ctx.Done():
		if err := b.Err(); err != nil {
			return fmt.Errorf("%w (%v)", ErrNotReady, err)
		}
		return ErrNotReady
	}
}

// Err is why the bus is not open yet (nil once it is, or before the first
// attempt fails).
func (b *Bus) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failErr != nil {
		return b.failErr
	}
	return b.lastErr
}

// open tries to open the bucket until it succeeds or ctx ends, backing off
// from busRetryMin to busRetryMax between attempts.
func (b *Bus) open(ctx context.Context, o BusOptions) {
	defer close(b.done)
	js, err := jetstream.New(b.nc)
	if err != nil { // only for bad options: never with these
		b.setErr(err)
		return
	}
	b.JS = js
	start := time.Now()
	wait := busRetryMin
	for attempt := 1; ; attempt++ {
		err := errNoConn(b.nc)
		if err == nil {
			err = b.openOnce(ctx, o, time.Since(start) >= o.Settle)
		}
		if err == nil && b.Replicas > 1 {
			err = b.followLeader()
		}
		if err == nil {
			b.log.Info("room bus: open", "bucket", RoomBucket, "copies", b.Replicas, "attempts", attempt,
				"after", time.Since(start).Round(time.Millisecond).String())
			b.setErr(nil)
			b.mu.Lock()
			b.wasDown = false // JetStream just answered; a loss from now on counts
			b.mu.Unlock()
			close(b.ready)
			b.mu.Lock()
			lostMeanwhile := b.wasDown
			b.mu.Unlock()
			if !b.nc.IsConnected() {
				b.lost() // lost as it opened: the reconnect probes
			} else if lostMeanwhile {
				b.suspect() // lost and back as it opened: probe now
			}
			return
		}
		b.setErr(err)
		select {
		case <-b.failed:
			return // the connection is closed for good (Err says why)
		default:
		}
		if attempt == 1 || attempt%10 == 0 {
			b.log.Warn("room bus: not ready yet, retrying", "attempt", attempt, "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, busRetryMax)
	}
}

// errNoConn says that nc is not connected (nil when it is).
func errNoConn(nc *nats.Conn) error {
	if nc.IsConnected() {
		return nil
	}
	return fmt.Errorf("no connection to NATS (%s)", connState(nc.Status().String()))
}

func (b *Bus) setErr(err error) {
	b.mu.Lock()
	b.lastErr = err
	b.mu.Unlock()
}

// connect connects to an external NATS (-nats-url). The first try is
// made here, once per server: NATS refusing the credentials ends it, and
// the replica refuses to start, naming why (no retry mends it). No server
// answering is said at once, then retried in the background as a lost
// connection is (NATS may start after the replicas); if NATS then
// refuses the credentials, nats.go gives up and the bus fails (Failed).
func (b *Bus) connect(urls, credsPath string) error {
	opts := append(b.connOptions(), nats.ConnectHandler(func(nc *nats.Conn) {
		b.countDial(false)
		b.log.Info("room bus: connected to NATS", "url", nc.ConnectedUrlRedacted())
	}))
	how := "none given: -nats-creds FILE, or user:password in -nats-url"
	switch {
	case credsPath != "" && urlHasUser(urls):
		// nats.go would take the URL's and ignore the file's.
		return errors.New("-nats-creds and a user in -nats-url: give the credentials one way, not both")
	case credsPath != "":
		c, err := readCreds(credsPath)
		if err != nil {
			return err
		}
		opt, err := c.clientOption()
		if err != nil {
			return err
		}
		opts, how = append(opts, opt), "-nats-creds "+credsPath
	case urlHasUser(urls):
		how = "the user in -nats-url"
	}
	var err error
	if b.nc, err = nats.Connect(urls, opts...); err == nil {
		return nil
	}
	if authErr(err) {
		return fmt.Errorf("room bus: NATS at %s refused this replica's credentials (%s): %w; %s", Redact(urls), how, err, credsHint)
	}
	why := err.Error()
	if errors.Is(err, nats.ErrNoServers) {
		// What nats.go answers when every server refused the connection.
		why += " (connection refused: nothing listens there)"
	}
	b.log.Error("room bus: cannot connect to NATS (-nats-url): the lab is served, workshops answer 503 until it is reachable; retrying",
		"nats_url", Redact(urls), "err", why)
	b.nc, err = nats.Connect(urls, append(opts, nats.RetryOnFailedConnect(true))...)
	if err != nil {
		return fmt.Errorf("room bus: -nats-url %s: %w", Redact(urls), err)
	}
	return nil
}

// countDial counts a failed try to reach a NATS server, or (failed
// false) starts the count again once connected; it answers the count.
func (b *Bus) countDial(failed bool) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if failed {
		b.dialFails++
	} else {
		b.dialFails = 0
	}
	return b.dialFails
}

// Failed is a channel closed when the bus failed for good: NATS refused
// this replica's credentials and nats.go closed the connection (Err says
// so). The replica should stop: no retry mends it.
func (b *Bus) Failed() <-chan struct{} { return b.failed }

// fail marks the bus failed for good with err, once.
func (b *Bus) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.failed:
		return
	default:
	}
	b.failErr = fmt.Errorf("room bus: NATS refused this replica's credentials: %w; %s", err, credsHint)
	// Logged before Failed fires: whoever waits on it (serve, to stop
	// the replica) finds the reason already in the log.
	b.log.Error("room bus: NATS refused this replica's credentials: the connection is closed for good", "err", b.failErr)
	close(b.failed)
}

// embed starts the embedded server, its JetStream store in dataDir/nats,
// and connects to it in-process. With a port (listen) it asks for
// credentials: the user of credsPath, else its own (ownCreds).
func (b *Bus) embed(listen, dataDir, credsPath string) error {
	store := filepath.Join(dataDir, "nats")
	if dataDir == "" {
		dir, err := os.MkdirTemp("", "outlierlab-nats-")
		if err != nil {
			return fmt.Errorf("room bus: %w", err)
		}
		b.tempDir, store = dir, dir
	} else if err := os.MkdirAll(store, 0o700); err != nil {
		return fmt.Errorf("room bus: the data directory (-data-dir %s) must be writable: %w", dataDir, err)
	} else if b.lock, err = lockDataDir(dataDir); err != nil {
		return err
	}
	opts := &server.Options{
		ServerName: "outlierlab", NoLog: true, NoSigs: true,
		JetStream: true, JetStreamMaxMemory: busMaxMemory, JetStreamMaxStore: busMaxStore, StoreDir: store,
		DontListen: listen == "",
	}
	var conn []nats.Option // the in-process connection's credentials
	if listen != "" {
		host, port, err := splitListen(listen)
		if err != nil {
			return err
		}
		opts.Host, opts.Port = host, port
		var c *creds
		if credsPath != "" {
			c, err = readCreds(credsPath)
		} else {
			dir := dataDir
			if dir == "" {
				dir = b.tempDir // tests: removed at Close
			}
			c, err = ownCreds(dir)
		}
		if err == nil {
			err = c.serve(opts)
		}
		var opt nats.Option
		if err == nil {
			opt, err = c.clientOption()
		}
		if err != nil {
			return err
		}
		b.creds, conn = c.path, []nats.Option{opt}
	}
	var err error
	if b.ns, err = server.NewServer(opts); err != nil {
		return fmt.Errorf("room bus: %w", err)
	}
	b.ns.Start()
	if !b.ns.ReadyForConnections(10 * time.Second) {
		return fmt.Errorf("room bus: the embedded NATS server did not start (listen %q, store %s)", listen, store)
	}
	if !b.ns.JetStreamEnabled() {
		return fmt.Errorf("room bus: the embedded NATS server could not start JetStream in %s (is it writable?)", store)
	}
	b.nc, err = nats.Connect("", append(append(b.connOptions(), conn...), nats.InProcessServer(b.ns))...)
	if err != nil {
		return fmt.Errorf("room bus: %w", err)
	}
	return nil
}

// splitListen reads -nats-listen: HOST:PORT, port 0 for any free one
// (nats-server's own 0 means its default 4222; -1 is "any").
func splitListen(listen string) (string, int, error) {
	host, p, err := net.SplitHostPort(listen)
	port, perr := strconv.Atoi(p)
	if err != nil || perr != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("-nats-listen: %q is not HOST:PORT (allowed ports 0–65535, 0 for any free port)", listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}

func (b *Bus) connOptions() []nats.Option {
	return []nats.Option{
		nats.Name("outlierlab"),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		// A connection that stops answering is lost after two pings
		// (busPing), not nats.go's default of two minutes' worth.
		nats.PingInterval(busPing),
		nats.MaxPingsOutstanding(2),
		// No reconnect buffer: a publication while the connection is
		// lost fails at once rather than waiting out its deadline and
		// landing later, after the request was answered 503.
		nats.ReconnectBufSize(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			b.lost()
			if err != nil { // nil: closed (Close)
				b.log.Warn("room bus: disconnected: room writes are refused (503) until it is back", "err", err)
			}
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			b.lost()
			// Closed by nats.go, not by Close: it gives up when a server
			// refused the credentials twice (the first connection retried,
			// or a reconnect after NATS's users changed).
			if err := nc.LastError(); authErr(err) {
				b.fail(err)
			}
		}),
		// A server that cannot be reached, named with why (nats.go's dial
		// error): the first time, then every 30th try (one a second).
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			if n := b.countDial(true); n == 1 || n%30 == 0 {
				b.log.Warn("room bus: cannot reach a NATS server, retrying", "tries", n, "err", err)
			}
		}),
		// nats.go's asynchronous errors in the log, not on stderr; a
		// watch's consumer gone quiet while the bus is down is not one:
		// the watches start again when it is back.
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrConsumerNotActive) {
				return
			}
			if authErr(err) {
				b.log.Error("room bus: NATS refused this replica's credentials (-nats-creds, or the user in -nats-url)", "err", err)
				return
			}
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			b.log.Warn("room bus: NATS", "subject", subject, "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			b.countDial(false)
			b.log.Info("room bus: reconnected, waiting for JetStream", "url", nc.ConnectedUrlRedacted())
			// Back once JetStream answers (health.go): then the watches
			// start again (the server this replica was on may have held
			// them, or lost them in a restart) and the rooms are read.
			b.suspect()
		}),
	}
}

// openOnce opens the rooms' bucket and the recordings' stream, creating
// what is missing. A bucket that exists is opened as it is: its copies
// are never changed (another replica created it, or an operator resized
// it). A new one gets three copies on an external NATS, where the cluster
// can place them (a cluster of three keeps the rooms when one server
// goes); a single server gets one at once, a smaller cluster what it holds
// once settled (before that, a fresh cluster's servers may still be
// joining, and the attempt is retried). The embedded server keeps one.
func (b *Bus) openOnce(ctx context.Context, o BusOptions, settled bool) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	kv, err := b.JS.KeyValue(ctx, RoomBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = b.createBucket(ctx, o, settled)
	}
	if err != nil {
		return fmt.Errorf("cannot open the %s bucket (the NATS server needs JetStream): %w", RoomBucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return fmt.Errorf("cannot read the %s bucket: %w", RoomBucket, err)
	}
	replicas := 1
	if ks, ok := st.(*jetstream.KeyValueBucketStatus); ok {
		replicas = max(1, ks.StreamInfo().Config.Replicas)
	}
	rs, keyTTL, err := b.allowKeyTTL(ctx)
	if err != nil {
		return fmt.Errorf("cannot open the %s bucket's stream: %w", RoomBucket, err)
	}
	tl, err := b.JS.Stream(ctx, TimelineStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		tl, err = b.createTimeline(ctx, o, replicas)
	}
	if err == nil {
		tl, err = b.boundRoomEntries(ctx, tl, o.RoomEntries)
	}
	if err != nil {
		return fmt.Errorf("cannot open the %s stream: %w", TimelineStream, err)
	}
	if d := tl.CachedInfo().Config.Duplicates; d < timelineDedup {
		b.log.Warn("room bus: the recordings' stream forgets message ids sooner than a write is retried: an entry retried after a lost answer may be recorded twice",
			"stream", TimelineStream, "duplicates", d.String(), "want", timelineDedup.String())
	}
	b.KV, b.bucket, b.Timeline, b.Replicas = retryKV{KeyValue: kv, bus: b}, kv, tl, replicas
	b.roomStream, b.keyTTL = rs, keyTTL
	return nil
}

// createBucket creates the rooms' bucket with as many copies as the NATS
// can place (see openOnce), or opens the one another replica just made.
func (b *Bus) createBucket(ctx context.Context, o BusOptions, settled bool) (jetstream.KeyValue, error) {
	cfg := jetstream.KeyValueConfig{
		Bucket:      RoomBucket,
		Description: "outlierlab workshop rooms: one key per room, its latest state",
		History:     1, TTL: o.TTL, Storage: jetstream.FileStorage,
		MaxValueSize: MaxValue, MaxBytes: o.MaxBucket, Replicas: 1,
		// A key may have a TTL of its own (a room nobody used yet:
		// quota.go); a key that expires leaves a marker that long.
		LimitMarkerTTL: limitMarkerTTL,
	}
	if o.URL != "" {
		cfg.Replicas = 3
	}
	for {
		kv, err := b.JS.CreateKeyValue(ctx, cfg)
		switch {
		case err == nil:
			return kv, nil
		case errors.Is(err, jetstream.ErrBucketExists):
			return b.JS.KeyValue(ctx, RoomBucket)
		case cfg.LimitMarkerTTL != 0 && errors.Is(err, jetstream.ErrLimitMarkerTTLNotSupported):
			// A NATS server before 2.11: no key has a TTL of its own.
			cfg.LimitMarkerTTL = 0
		case cfg.Replicas > 1 && apiCode(err) == server.JSStreamReplicasNotSupportedErr:
			// A single server, not a cluster: one copy is all it holds.
			b.log.Info("room bus: the NATS server is not a cluster: the rooms' bucket has one copy")
			cfg.Replicas = 1
		case cfg.Replicas > 1 && settled && placementErr(err):
			cfg.Replicas--
			b.log.Info("room bus: the NATS cluster cannot place more copies of the rooms' bucket", "copies", cfg.Replicas, "err", err)
		default:
			return nil, err
		}
	}
}

// createTimeline creates the recordings' stream with the bucket's copies,
// or opens the one another replica just made.
func (b *Bus) createTimeline(ctx context.Context, o BusOptions, replicas int) (jetstream.Stream, error) {
	st, err := b.JS.CreateStream(ctx, jetstream.StreamConfig{
		Name:        TimelineStream,
		Description: "outlierlab workshop recordings: one subject per room, every change of its state",
		Subjects:    []string{TimelineSubject + ">"},
		Storage:     jetstream.FileStorage, MaxAge: o.TTL, MaxBytes: o.MaxTimeline,
		MaxMsgSize: MaxValue, Replicas: replicas, Discard: jetstream.DiscardOld,
		Duplicates: timelineDedup, MaxMsgsPerSubject: int64(o.RoomEntries),
	})
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return b.JS.Stream(ctx, TimelineStream)
	}
	return st, err
}

// apiCode is the JetStream API error code of err (0 for none).
func apiCode(err error) server.ErrorIdentifier {
	var ae jetstream.JetStreamError
	if errors.As(err, &ae) && ae.APIError() != nil {
		return server.ErrorIdentifier(ae.APIError().ErrorCode)
	}
	return 0
}

// placementErr is a cluster's "not enough servers for these copies".
func placementErr(err error) bool {
	c := apiCode(err)
	return c == server.JSClusterNoPeersErrF || c == server.JSInsufficientResourcesErr
}

// URL is where other replicas reach the embedded server (their -nats-url),
// or "" when it opens no port or is not embedded.
func (b *Bus) URL() string {
	if b == nil || b.ns == nil || b.ns.Addr() == nil {
		return ""
	}
	return b.ns.ClientURL()
}

// CredsFile is the file of the user the embedded server accepts, which
// other replicas give as -nats-creds ("" when it opens no port or is not
// embedded).
func (b *Bus) CredsFile() string {
	if b == nil {
		return ""
	}
	return b.creds
}

// Replica is how another replica opens this bus: the embedded server's
// URL and credentials (zero when it opens no port or is not embedded).
func (b *Bus) Replica() BusOptions {
	return BusOptions{URL: b.URL(), Creds: b.CredsFile()}
}

// Conn is the replica's NATS connection (its statistics count the bus's
// messages).
func (b *Bus) Conn() *nats.Conn { return b.nc }

// Close closes the connection and stops the embedded server.
func (b *Bus) Close() {
	if b == nil {
		return
	}
	if b.stop != nil {
		b.stop()
		<-b.done
	}
	if b.nc != nil {
		b.nc.Close()
	}
	if b.ns != nil {
		b.ns.Shutdown()
		b.ns.WaitForShutdown()
	}
	if b.tempDir != "" {
		_ = os.RemoveAll(b.tempDir)
	}
	if b.lock != nil {
		_ = b.lock.Close()
	}
}

// A stream's copies elect a new leader when the server that led it goes
// (a NATS node killed, a rolling restart): for a second or two a request
// finds no responder. The bus waits that out instead of failing the
// instructor's or attendee's request: every key-value call and recording
// write is retried on such errors, backing off, within the request's
// deadline (2×Timeout when it has none). A retried write is safe: Put
// and Delete repeat, Update and Create are compare-and-set (a repeat that
// already landed fails as a conflict, which their callers handle), a
// recording's entry carries its id (the stream stores it once).
// The whole bus down is not waited out (health.go): a call fails at once.

// Transient is an error a retry in a moment may not see.
func Transient(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, nats.ErrReconnectBufExceeded) || apiCode(err) == server.JSClusterNotAvailErr
}

// Retry calls f until it succeeds, fails for good, or ctx ends. With a
// bus (nil for none) a call while it is down fails at once and one in
// flight when it goes ends then (ErrDown), and a call that met nothing
// but transient errors until its deadline fails as the bus not answering:
// both of kind KindUnavailable (503 with Retry-After), never a 500
// "context deadline exceeded".
func Retry[T any](ctx context.Context, b *Bus, f func(context.Context) (T, error)) (T, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 2*Timeout)
		defer cancel()
	}
	start := time.Now()
	wait := 50 * time.Millisecond
	for {
		var v T
		if b != nil {
			if err := b.refuseAfterGrace(ctx); err != nil {
				return v, err
			}
		}
		// An attempt sent to a server just as it died waits for an answer
		// that never comes: each attempt has its own shorter deadline, and
		// ends when the bus goes down.
		actx, cancel := context.WithTimeout(ctx, busAttempt)
		if b != nil {
			wentDown := b.wentDown()
			go func() {
				select {
				case <-wentDown:
					cancel()
				case <-actx.Done():
				}
			}()
		}
		v, err := f(actx)
		cancel()
		if err == nil {
			return v, nil
		}
		if b != nil && ctx.Err() == nil && (Transient(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			if herr := b.refuseAfterGrace(ctx); herr != nil {
				return v, herr // the bus went down under the call
			}
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%w: %w", nats.ErrTimeout, err)
		}
		if errors.Is(err, context.Canceled) && ctx.Err() == nil {
			// The attempt ended as the bus went down, and it is back
			// (refuse said so): a NATS node gone, the connection moved to
			// another. Tried again as any reconnect is; it was a 500
			// "context canceled" (TestBusCluster3, under load).
			err = fmt.Errorf("%w: %w", nats.ErrConnectionReconnecting, err)
		}
		if ctx.Err() != nil && (Transient(err) || errors.Is(err, context.DeadlineExceeded)) {
			return v, silence(ctx, start, err)
		}
		if !Transient(err) || ctx.Err() != nil {
			return v, err
		}
		if b != nil {
			b.suspect() // JetStream silent for long is the bus down
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, silence(ctx, start, err)
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// silence is err, the last of a call that ctx ended: a deadline passed
// with JetStream not answering is the bus unavailable for now.
func silence(ctx context.Context, start time.Time, err error) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err // the caller went away
	}
	return httperr.WithKind(httperr.KindUnavailable,
		fmt.Errorf("JetStream did not answer within %v (a NATS server gone, its streams electing leaders): %w", time.Since(start).Round(100*time.Millisecond), err))
}

// retryKV is the rooms' bucket with its calls retried (see Retry) and
// its watches started again when they may have lost their consumer.
type retryKV struct {
	jetstream.KeyValue
	bus *Bus
}

// Get is the key's latest value. The bucket allows direct gets (the
// nats.go default for a KV), which any of its copies may answer, and a
// copy that has not applied the latest write yet says "not found": a room
// made through one NATS node was a 404 on the other replica a moment
// later (TestBusClusterReadsItsWrites: 2 to 3 rooms of 60 on a loaded
// machine). So a "not found" from a bucket of several copies is asked
// again of the stream's leader, which has every write it acknowledged.
func (kv retryKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	return Retry(ctx, kv.bus, func(ctx context.Context) (jetstream.KeyValueEntry, error) {
		e, err := kv.KeyValue.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) && kv.bus.Replicas > 1 {
			return kv.bus.leaderGet(ctx, key)
		}
		return e, err
	})
}

// leaderGet is a key's latest value as the leader of the bucket's stream
// has it: the stream's message get API without "direct", which only the
// leader answers (nats-server's jsMsgGetRequest), where nats.go's KV Get
// asks any copy.
func (b *Bus) leaderGet(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	js, err := b.nc.JetStream()
	if err != nil {
		return nil, err
	}
	m, err := js.GetLastMsg("KV_"+RoomBucket, "$KV."+RoomBucket+"."+key, nats.Context(ctx))
	if errors.Is(err, nats.ErrMsgNotFound) {
		return nil, jetstream.ErrKeyNotFound
	}
	if err != nil {
		return nil, err
	}
	// A delete, a purge or an expired key's marker: gone, as the KV's Get
	// says of it ("KV-Operation" is nats.go's header for the first two).
	if m.Header.Get("KV-Operation") != "" || m.Header.Get(jetstream.MarkerReasonHeader) != "" {
		return nil, jetstream.ErrKeyNotFound
	}
	return leaderEntry{key: key, m: m}, nil
}

// leaderEntry is a value read by leaderGet, as the KV's Get gives it.
type leaderEntry struct {
	key string
	m   *nats.RawStreamMsg
}

func (e leaderEntry) Bucket() string                  { return RoomBucket }
func (e leaderEntry) Key() string                     { return e.key }
func (e leaderEntry) Value() []byte                   { return e.m.Data }
func (e leaderEntry) Revision() uint64                { return e.m.Sequence }
func (e leaderEntry) Created() time.Time              { return e.m.Time }
func (e leaderEntry) Delta() uint64                   { return 0 }
func (e leaderEntry) Operation() jetstream.KeyValueOp { return jetstream.KeyValuePut }

func (kv retryKV) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	return Retry(ctx, kv.bus, func(ctx context.Context) (uint64, error) { return kv.KeyValue.Put(ctx, key, value) })
}

func (kv retryKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	return Retry(ctx, kv.bus, func(ctx context.Context) (uint64, error) { return kv.KeyValue.Create(ctx, key, value, opts...) })
}

func (kv retryKV) Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error) {
	return Retry(ctx, kv.bus, func(ctx context.Context) (uint64, error) { return kv.KeyValue.Update(ctx, key, value, revision) })
}

func (kv retryKV) Delete(ctx context.Context, key string, opts ...jetstream.KVDeleteOpt) error {
	_, err := Retry(ctx, kv.bus, func(ctx context.Context) (struct{}, error) { return struct{}{}, kv.KeyValue.Delete(ctx, key, opts...) })
	return err
}

// A watch (an ordered consumer, one copy) lives on the server that led
// the bucket's stream when it began. When that server goes, the client
// notices only after two missed heartbeats (10 s) and the room's pages on
// this replica freeze meanwhile (20 s measured on a 3-node cluster). The
// cluster announces the stream's new leader at once: every watch of this
// replica then starts again from the revision after the last it gave,
// which costs a consumer per watch, once per election. So does the bus
// coming back after it was down (health.go): a server restarted lost the
// consumers, and nats.go would make new ones only at its next heartbeat
// check, or give up on an error it does not retry.

// Watch is the bucket's Watch, started again after the stream's leader
// changes and when the bus is back.
func (kv retryKV) Watch(ctx context.Context, keys string, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	inner, err := kv.KeyValue.Watch(ctx, keys, opts...)
	if err != nil {
		return inner, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &resumingWatcher{kv: kv, keys: keys, opts: opts, ctx: ctx, cancel: cancel,
		out: make(chan jetstream.KeyValueEntry, 32)}
	go w.run(inner)
	return w, nil
}

type resumingWatcher struct {
	kv     retryKV
	keys   string
	opts   []jetstream.WatchOpt
	ctx    context.Context
	cancel context.CancelFunc
	out    chan jetstream.KeyValueEntry
}

func (w *resumingWatcher) Updates() <-chan jetstream.KeyValueEntry { return w.out }
func (w *resumingWatcher) Stop() error                             { w.cancel(); return nil }

func (w *resumingWatcher) run(inner jetstream.KeyWatcher) {
	defer close(w.out)
	defer func() { _ = inner.Stop() }()
	var last uint64
	caughtUp := false
	moved := w.kv.bus.leaderMoved()
	for {
		select {
		case <-w.ctx.Done():
			return
		case e, ok := <-inner.Updates():
			if !ok {
				return
			}
			if e == nil { // the end of the current values: once
				if caughtUp {
					continue
				}
				caughtUp = true
			} else {
				last = e.Revision()
			}
			select {
			case w.out <- e:
			case <-w.ctx.Done():
				return
			}
		case <-moved:
			_ = inner.Stop()
			wait := busRetryMin
			for attempt := 1; ; attempt++ {
				moved = w.kv.bus.leaderMoved() // a signal from now on starts it again
				nw, err := w.kv.KeyValue.Watch(w.ctx, w.keys, append(w.opts, jetstream.ResumeFromRevision(last+1))...)
				if err == nil {
					inner = nw
					break
				}
				if attempt == 1 || attempt%10 == 0 {
					w.kv.bus.log.Warn("room bus: cannot watch again, retrying", "keys", w.keys, "attempt", attempt, "err", err)
				}
				// The next try comes after the backoff, or at once when
				// the bus is back or the leader moves again.
				t := time.NewTimer(wait)
				select {
				case <-w.ctx.Done():
					t.Stop()
					return
				case <-moved:
					t.Stop()
				case <-t.C:
				}
				wait = min(2*wait, busRetryMax)
			}
		}
	}
}

// leaderMoved is a channel closed when every watch should start again:
// at the next election of the bucket's stream leader, or the bus back.
func (b *Bus) leaderMoved() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.moved
}

// followLeader subscribes to the cluster's announcements of the bucket's
// new stream leaders.
func (b *Bus) followLeader() error {
	_, err := b.nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.KV_"+RoomBucket, func(*nats.Msg) {
		b.log.Info("room bus: the rooms' bucket has a new leader: watches start again")
		b.restartWatches()
	})
	return err
}

// restartWatches starts every watch again.
func (b *Bus) restartWatches() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.moved)
	b.moved = make(chan struct{})
}
