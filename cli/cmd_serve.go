package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"outlierlab/web"
	"outlierlab/web/budget"
	"outlierlab/web/clientaddr"
	"outlierlab/web/room"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
)

const defaultAddr = "127.0.0.1:8080"

// serveAddr picks the listen address: -addr wins, then $PORT, then the
// default. Loopback by default: an instructor opens the lab to a room on
// purpose (-addr 0.0.0.0:8080). $PORT is what container platforms set, and
// there the port must be reachable from outside the container, so it
// listens on every interface.
func serveAddr(flagAddr string, flagSet bool, getenv func(string) string) string {
	if flagSet {
		return flagAddr
	}
	if p := getenv("PORT"); p != "" {
		return ":" + p
	}
	return defaultAddr
}

// serveConfig is what serve's flags say.
type serveConfig struct {
	addr string
	// bus is where the room bus is: embedded (no port, or Listen), or an
	// external NATS (URL).
	bus   roombus.BusOptions
	rooms room.Limits
	// proxies are the proxies whose X-Forwarded-* are believed.
	proxies clientaddr.Proxies
	// logFormat is how the log is written: "text" (key=value) or "json".
	logFormat string
	// tabs bounds the sessions held at once; tabsPerMinute and
	// cmdsPerMinute are the per-address limits (web.Options).
	tabs, streams, streamsPerAddr, tabsPerMinute, cmdsPerMinute int
	// memoryMiB is the soft memory limit set for the Go runtime (0: none);
	// $GOMEMLIMIT, when set, wins.
	memoryMiB int
	// plansDir is -plans: an instructor's own workshop plans ("": the
	// repository's).
	plansDir string
	// challengeSecret is -challenge-secret: a file whose bytes derive the
	// challenges' hidden seeds, shared by replicas ("": a random secret).
	challengeSecret string
	// budget bounds heavy work (sweeps, compares, what-if replays) and
	// every run; maxRunMiB and runCacheMiB are its bytes as the flags
	// give them (checked before they are made bytes).
	budget                 budget.BudgetOptions
	maxRunMiB, runCacheMiB int64
	// grace is how long a shutdown waits for requests in flight
	// (-shutdown-grace; 0: defaultGrace).
	grace time.Duration
	// cut, when closed, ends the drain at once (a second signal); nil:
	// never.
	cut <-chan struct{}
}

// parseServe reads serve's flags; $PORT is read through getenv.
func parseServe(args []string, stderr io.Writer, getenv func(string) string) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", defaultAddr, "listen address HOST:PORT (also $PORT)")
	fs.StringVar(&c.bus.Listen, "nats-listen", "", "let other replicas use this server's embedded NATS at HOST:PORT (port 0: any free port); they need its credentials, DATA_DIR/nats-creds unless -nats-creds names others")
	fs.StringVar(&c.bus.URL, "nats-url", "", "use an external NATS server or cluster (nats://HOST:PORT[,nats://…]; nats://USER:PASSWORD@HOST:PORT gives credentials) instead of the embedded one")
	fs.StringVar(&c.bus.Creds, "nats-creds", getenv("OUTLIERLAB_NATS_CREDS"), "a `FILE` of the room bus's credentials: one line USER:PASSWORD (what -nats-listen makes in the data directory), an nkey seed, or a NATS .creds file; with -nats-url what this replica connects with, with -nats-listen the user the embedded server accepts; also $OUTLIERLAB_NATS_CREDS")
	fs.StringVar(&c.bus.DataDir, "data-dir", defaultDataDir(getenv), "where the embedded room bus keeps the workshops (rooms, answers, recordings) across restarts; also $OUTLIERLAB_DATA_DIR")
	fs.IntVar(&c.rooms.MaxRooms, "max-rooms", 500, "workshops this replica serves at once")
	fs.IntVar(&c.rooms.MaxAttendees, "max-attendees", 500, "attendees of one workshop on this replica")
	fs.IntVar(&c.rooms.AttendeesPerAddress, "attendees-per-address", 100, "attendee streams of one workshop from one client address on this replica (a class behind one NAT shares one address)")
	fs.IntVar(&c.rooms.JoinsPerMinute, "room-joins-per-minute", 60, "workshop pages per client address per minute (three times as many at once, for a class that reloads)")
	fs.IntVar(&c.rooms.IDsPerAddress, "room-identities-per-address", room.DefaultIDsPerAddress, "attendee identities a workshop gives one client address, across replicas (a class behind one NAT shares one address; a browser that clears its cookies is a new attendee); a workshop's instructor raises it on the board")
	fs.IntVar(&c.rooms.RoomsPerHour, "rooms-per-hour", 10, "new workshops per client address per hour (as many at once)")
	fs.DurationVar(&c.rooms.UnusedTTL, "room-unused-ttl", time.Hour, "how long a workshop lives that nobody has joined or changed (then 12 h after its last change)")
	fs.StringVar(&c.challengeSecret, "challenge-secret", getenv("OUTLIERLAB_CHALLENGE_SECRET"), "a `FILE` whose contents derive the challenges' hidden seeds: replicas behind one load balancer share it, so a failed goal's link opens the run graded on any of them (default: a random secret per process); also $OUTLIERLAB_CHALLENGE_SECRET")
	fs.StringVar(&c.plansDir, "plans", "", "a `DIR` of workshop plans (*.md; check them with outlierlab plan -check DIR/*.md) that \"Start a workshop\" offers instead of the shipped ones")
	fs.StringVar(&c.logFormat, "log-format", "text", "log lines as text (key=value) or json")
	fs.IntVar(&c.tabs, "max-tabs", 2000, "browser tabs (lab sessions) held at once without an open stream; an open stream's tab is never dropped (see -max-streams)")
	fs.IntVar(&c.streams, "max-streams", 4000, "streams (open tabs, attendees, players) this replica serves at once; past it a new one is 503")
	fs.IntVar(&c.streamsPerAddr, "streams-per-address", 400, "streams (open tabs, attendees, players) from one client address on this replica; past it a new one is 429 (a class behind one NAT shares one address)")
	fs.IntVar(&c.tabsPerMinute, "tabs-per-minute", 600, "new tabs per client address per minute (a room behind one NAT shares one address)")
	fs.IntVar(&c.cmdsPerMinute, "commands-per-minute", 6000, "commands (slider moves, play, …) per client address per minute")
	fs.IntVar(&c.memoryMiB, "memory-limit", 400, "soft memory limit in MiB for the Go runtime (0: none; $GOMEMLIMIT wins)")
	var maxWork, maxCells, maxRunWork int64
	fs.Int64Var(&maxWork, "max-work", 100_000_000, "the most work one sweep, compare or what-if replay may cost, in units of about 0.1 µs of a core (past it, 422)")
	fs.Int64Var(&maxRunWork, "max-run-work", budget.DefaultMaxRunWork, "the most work one run of the engine may cost, in units of about 0.1 µs of a core (10000000: about 1 CPU-s), whoever asks for it: a lab page, a tab's command, a room, a compare's side, a sweep's point, a handout (past it, 422 naming the setting to change)")
	fs.Int64Var(&c.maxRunMiB, "max-run-mib", budget.DefaultMaxRunBytes>>20, "the most memory one run of the engine may take, in MiB (its frames, events and decision log; past it, 422); at most -run-cache-mib")
	fs.Int64Var(&c.runCacheMiB, "run-cache-mib", budget.DefaultRunCacheBytes>>20, "the memory the runs the lab keeps for its tabs, rooms and lessons may take, in MiB")
	fs.Int64Var(&maxCells, "max-replay-cells", 250_000, "the most hosts × detector ticks one what-if replay may keep and draw (past it, 422)")
	fs.IntVar(&c.budget.Workers, "heavy-workers", max(1, runtime.GOMAXPROCS(0)-1), "cores heavy work (sweeps, compares, replays, heavy lab pages) uses at once; the rest are the lab's")
	fs.IntVar(&c.budget.Queue, "heavy-queue", 8, "heavy requests that may wait for a core (past it, 503 with Retry-After)")
	fs.DurationVar(&c.budget.Wait, "heavy-wait", 10*time.Second, "the longest a heavy request waits for a core (then 503 with Retry-After)")
	fs.DurationVar(&c.grace, "shutdown-grace", defaultGrace, "on SIGTERM or Ctrl-C, how long requests in flight (heavy work too: it may wait -heavy-wait for a core, then run) may take to finish; the streams end at once, new connections are refused; what is left then is cut and logged, and serve exits 1 (a second signal cuts at once)")
	fs.BoolVar(&c.proxies.Peer, "trust-forwarded", false, "believe X-Forwarded-* from any peer: one proxy in front that appends to X-Forwarded-For; the client is its right-most entry")
	trusted := fs.String("trusted-proxies", "", "comma-separated addresses or CIDRs of the proxies in front (10.0.0.0/8,127.0.0.1): X-Forwarded-* are believed from them, and the client is the right-most X-Forwarded-For entry none of them added")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve takes no arguments (got %q)", fs.Args())
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "addr" })
	c.addr = serveAddr(*addr, set, getenv)
	if err := checkAddr(c.addr, set); err != nil {
		return c, err
	}
	c.budget.MaxWork, c.budget.MaxReplayCells = maxWork, maxCells
	c.budget.MaxRunWork = maxRunWork
	nets, err := clientaddr.Parse(*trusted)
	if err != nil {
		return c, fmt.Errorf("-trusted-proxies: %w", err)
	}
	c.proxies.Nets = nets
	c.rooms.JoinBurst = c.rooms.JoinsPerMinute
	if c.plansDir != "" {
		if st, err := os.Stat(c.plansDir); err != nil || !st.IsDir() {
			return c, fmt.Errorf("-plans: %s is not a directory that can be read", c.plansDir)
		}
	}
	return c, c.check()
}

// check holds each of serve's flags to its range, naming the flag.
func (c *serveConfig) check() error {
	if c.logFormat != "text" && c.logFormat != "json" {
		return fmt.Errorf("-log-format: %q is not a format (allowed text, json)", truncate(c.logFormat, 40))
	}
	if c.bus.Listen != "" && c.bus.URL != "" {
		return errors.New("-nats-listen and -nats-url exclude each other: embed the bus and open it to other replicas, or use an external one")
	}
	if c.bus.Listen != "" {
		if _, p, err := net.SplitHostPort(c.bus.Listen); err != nil || strings.Trim(p, "0123456789") != "" || p == "" {
			return fmt.Errorf("-nats-listen: %q is not HOST:PORT (port 0 for any free port)", c.bus.Listen)
		}
	}
	if c.bus.Creds != "" && c.bus.Listen == "" && c.bus.URL == "" {
		return fmt.Errorf("-nats-creds (or $OUTLIERLAB_NATS_CREDS) %s: only with -nats-listen or -nats-url (the in-process bus opens no port and needs no credentials)", c.bus.Creds)
	}
	for _, l := range []struct {
		name string
		v    int
	}{{"max-rooms", c.rooms.MaxRooms}, {"max-attendees", c.rooms.MaxAttendees}, {"attendees-per-address", c.rooms.AttendeesPerAddress}, {"room-joins-per-minute", c.rooms.JoinsPerMinute}, {"rooms-per-hour", c.rooms.RoomsPerHour},
		{"max-tabs", c.tabs}, {"max-streams", c.streams}, {"streams-per-address", c.streamsPerAddr}, {"tabs-per-minute", c.tabsPerMinute}, {"commands-per-minute", c.cmdsPerMinute},
		{"heavy-workers", c.budget.Workers}, {"heavy-queue", c.budget.Queue}} {
		if l.v < 1 || l.v > 1_000_000 {
			return fmt.Errorf("-%s: %d is out of range (allowed 1–1000000)", l.name, l.v)
		}
	}
	if n := c.rooms.IDsPerAddress; n < 1 || n > record.MaxIDsPerAddress {
		return fmt.Errorf("-room-identities-per-address: %d is out of range (allowed 1–%d)", n, record.MaxIDsPerAddress)
	}
	for _, l := range []struct {
		name string
		v    int64
	}{{"max-work", c.budget.MaxWork}, {"max-replay-cells", c.budget.MaxReplayCells}, {"max-run-work", c.budget.MaxRunWork}} {
		if l.v < 1000 || l.v > 1e12 {
			return fmt.Errorf("-%s: %d is out of range (allowed 1000–1000000000000)", l.name, l.v)
		}
	}
	for _, l := range []struct {
		name string
		v    int64
	}{{"max-run-mib", c.maxRunMiB}, {"run-cache-mib", c.runCacheMiB}} {
		if l.v < 1 || l.v > 1<<20 {
			return fmt.Errorf("-%s: %d is out of range (allowed 1–%d MiB)", l.name, l.v, 1<<20)
		}
	}
	if c.maxRunMiB > c.runCacheMiB {
		// A run the cache cannot keep would be made again at each frame
		// a tab plays.
		return fmt.Errorf("-max-run-mib: %d is more than -run-cache-mib %d (a run the lab admits must fit in its run cache)", c.maxRunMiB, c.runCacheMiB)
	}
	c.budget.MaxRunBytes, c.budget.RunCacheBytes = c.maxRunMiB<<20, c.runCacheMiB<<20
	if c.rooms.UnusedTTL < time.Second || c.rooms.UnusedTTL > 12*time.Hour {
		return fmt.Errorf("-room-unused-ttl: %s is out of range (allowed 1s–12h)", c.rooms.UnusedTTL)
	}
	if c.budget.Wait < 100*time.Millisecond || c.budget.Wait > 10*time.Minute {
		return fmt.Errorf("-heavy-wait: %s is out of range (allowed 100ms–10m)", c.budget.Wait)
	}
	if c.grace < time.Second || c.grace > time.Hour {
		return fmt.Errorf("-shutdown-grace: %s is out of range (allowed 1s–1h)", c.grace)
	}
	if c.memoryMiB < 0 || c.memoryMiB > 1<<20 {
		return fmt.Errorf("-memory-limit: %d is out of range (allowed 0–%d MiB; 0 for none)", c.memoryMiB, 1<<20)
	}
	if c.bus.URL == "" && c.bus.DataDir == "" {
		return errors.New("-data-dir: no directory (and no per-user state directory: $HOME is not set): name one, e.g. -data-dir /var/lib/outlierlab")
	}
	return nil
}

// defaultDataDir is where the embedded bus keeps the workshops by default:
// $OUTLIERLAB_DATA_DIR, else the per-user state directory
// ($XDG_STATE_HOME/outlierlab, ~/.local/state/outlierlab; on macOS and
// Windows the per-user application data directory). "" when there is no
// home to put it in.
func defaultDataDir(getenv func(string) string) string {
	if d := getenv("OUTLIERLAB_DATA_DIR"); d != "" {
		return d
	}
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "outlierlab")
	}
	switch runtime.GOOS {
	case "darwin", "windows", "ios":
		if d, err := os.UserConfigDir(); err == nil {
			return filepath.Join(d, "outlierlab")
		}
		return ""
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "outlierlab")
	}
	return ""
}

// checkAddr refuses a listen address that cannot be listened on before
// anything starts, naming where it came from (-addr or $PORT): a mistyped
// flag is a usage error (exit 2), not a failure to serve.
func checkAddr(addr string, fromFlag bool) error {
	from := "$PORT"
	if fromFlag {
		from = "-addr"
	}
	_, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%s: %q is not HOST:PORT (such as 127.0.0.1:8080, or :8080 for every interface; port 0–65535)", from, truncate(addr, 60))
	}
	return nil
}

// memoryLimit is the soft limit serve sets, in bytes: -memory-limit,
// unless $GOMEMLIMIT is set (the runtime has read it already). Without a
// limit the heap may grow to twice the live heap before a collection; with
// it, the collector works harder as the limit nears, which keeps a
// replica serving hundreds of tabs inside its container's memory (issue
// 15: 528 MiB after the heavy load test without it). The runs are a
// bounded cache and the rest is per-tab state, so the live heap stays well
// under the limit and the collector does not thrash.
func memoryLimit(mib int, getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" || mib <= 0 {
		return 0
	}
	return int64(mib) << 20
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func runServe(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseServe(args, stderr, os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "outlierlab serve:", err)
		return 2
	}
	// The first SIGTERM or Ctrl-C drains (serve); a second one cuts what
	// is left at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	cut := make(chan struct{})
	go func() {
		s, ok := <-sigs
		if !ok {
			return
		}
		stop(fmt.Errorf("%v signal received", s))
		if _, ok := <-sigs; ok {
			close(cut)
		}
	}()
	cfg.cut = cut
	log := web.NewLogger(stderr, cfg.logFormat)
	// Whatever else logs through the standard library's log package goes
	// the same way, in the same format.
	slog.SetDefault(log)
	if err := serve(ctx, cfg, stdout, stderr, nil); err != nil {
		if cfg.logFormat == "json" {
			log.Error("outlierlab serve failed", "err", err.Error())
		} else {
			fmt.Fprintln(stderr, "outlierlab serve:", err)
		}
		return 1
	}
	return 0
}

// serving is where a started server listens: the lab (HTTP) and, with
// -nats-listen, the room bus for other replicas and its credentials file.
type serving struct{ HTTP, NATS, NATSCreds string }

// defaultGrace is -shutdown-grace: a heavy request admitted just before
// the signal may wait -heavy-wait (10 s) for a core and then run the
// heaviest work the budget allows (a 93 M-unit sweep took 2.2 s on one
// core of the 2-core development machine at a load average of 11; the
// heaviest what-if replay, 7 s); 30 s covers both with room to spare.
const defaultGrace = 30 * time.Second

// serve runs the lab until ctx ends, then drains: the listener closes (no
// new connections), open streams are told to end (browsers reconnect to
// the next server and resume at their cursor), requests in flight — heavy
// work too — finish within the grace period (-shutdown-grace), and the
// room bus closes last. A drain that completes answers nil; one the grace
// period (or cfg.cut, a second signal) ends logs every request it cuts and
// answers an error. ready, if not nil, receives the bound addresses once
// listening. The first log line names the build; with -log-format json
// every line serve writes is a JSON log record on stderr, and stdout has
// nothing (in text, stdout has the lines a person reads).
func serve(ctx context.Context, cfg serveConfig, stdout, stderr io.Writer, ready chan<- serving) error {
	log := web.NewLogger(stderr, cfg.logFormat)
	build := buildInfo()
	log.Info("outlierlab starting", "version", build.Version, "revision", build.Revision, "go_version", runtime.Version(), "pid", os.Getpid())
	say := func(format string, a ...any) {
		if cfg.logFormat != "json" {
			fmt.Fprintf(stdout, format+"\n", a...)
		}
	}
	if cfg.grace <= 0 {
		cfg.grace = defaultGrace
	}
	cfg.bus.Log = log
	// The bus opens in the background: the lab is served at once, rooms
	// answer 503 until the bus is open (/healthz?ready says when). A NATS
	// that refuses this replica's credentials is an error here (no retry
	// mends it); one that does not answer is said at once and retried.
	bus, err := roombus.OpenBus(cfg.bus)
	if err != nil {
		return err
	}
	defer bus.Close()
	if limit := memoryLimit(cfg.memoryMiB, os.Getenv); limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	var plans fs.FS // nil: the shipped ones
	if cfg.plansDir != "" {
		plans = os.DirFS(cfg.plansDir)
	}
	var secret []byte
	if cfg.challengeSecret != "" {
		b, err := os.ReadFile(cfg.challengeSecret)
		if err != nil || len(bytes.TrimSpace(b)) < 16 {
			return fmt.Errorf("-challenge-secret %s: want a readable file of at least 16 bytes (a random line: head -c 32 /dev/urandom | base64)", cfg.challengeSecret)
		}
		secret = bytes.TrimSpace(b)
	}
	lab, err := web.New(web.Options{ChallengeSecret: secret, Log: log, Bus: bus, Rooms: cfg.rooms, Plans: plans, MaxSessions: cfg.tabs, MaxStreams: cfg.streams, StreamsPerAddress: cfg.streamsPerAddr,
		TabsPerMinute: cfg.tabsPerMinute, CommandsPerMinute: cfg.cmdsPerMinute, Proxies: cfg.proxies, Budget: cfg.budget, Build: build})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           lab.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// WriteTimeout bounds pages and commands; the stream handler lifts
		// it for itself (an SSE response lives as long as the tab).
		WriteTimeout:   30 * time.Second,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		// net/http's own complaints (a bad TLS hello, a panic it caught)
		// in the log's format.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(lab.Shutdown)
	url := "http://" + ln.Addr().String() + "/"
	say("outlierlab: serving the lab on %s (Ctrl-C to stop)", url)
	log.Info("serving the lab", "url", url, "addr", ln.Addr().String(), "version", build.Version)
	switch {
	case bus.URL() != "":
		say("outlierlab: workshops kept in %s; bus open to other replicas: -nats-url %s -nats-creds %s (a copy of that file: it is the bus's password)", cfg.bus.DataDir, bus.URL(), bus.CredsFile())
		log.Info("workshops kept on disk; the bus is open to other replicas", "data_dir", cfg.bus.DataDir, "nats_url", bus.URL(), "nats_creds", bus.CredsFile())
	case cfg.bus.URL != "":
		say("outlierlab: workshops' bus: %s", roombus.Redact(cfg.bus.URL))
		log.Info("workshops on an external NATS", "nats_url", roombus.Redact(cfg.bus.URL))
	default:
		say("outlierlab: workshops kept in %s", cfg.bus.DataDir)
		log.Info("workshops kept on disk", "data_dir", cfg.bus.DataDir)
	}
	if ready != nil {
		ready <- serving{HTTP: ln.Addr().String(), NATS: bus.URL(), NATSCreds: bus.CredsFile()}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-bus.Failed():
		// NATS refused this replica's credentials after it started (it
		// was not up yet): the rooms would answer 503 for ever, so the
		// replica stops, saying why, as it does when refused at start.
		_ = srv.Close()
		<-errc
		return bus.Err()
	case <-ctx.Done():
	}
	start := time.Now()
	log.Info("shutting down: draining", "cause", context.Cause(ctx).Error(), "grace", cfg.grace)
	drain, cancel := context.WithTimeout(context.Background(), cfg.grace)
	defer cancel()
	go func() {
		select {
		case <-cfg.cut:
			log.Warn("shutting down: a second signal: cutting what is left")
			cancel()
		case <-drain.Done():
		}
	}()
	err = srv.Shutdown(drain)
	if err != nil {
		n := lab.LogInFlight("request cut by shutdown")
		_ = srv.Close()
		<-errc
		return fmt.Errorf("shutdown: %d requests still in flight after %s (-shutdown-grace %s) were cut", n, time.Since(start).Round(time.Millisecond), cfg.grace)
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	log.Info("stopped", "drain", time.Since(start))
	say("outlierlab: stopped")
	return nil
}
