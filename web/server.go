// Package web is the server: it builds the features (the lab and lessons,
// web/lab; the tools, web/tools; the workshops, web/room) over one set of
// embedded files, puts every route of theirs behind the guards
// (web/guard), and adds what belongs to the process: /healthz, /metrics
// and the request log. Each feature's handlers are its own: parse the
// request, ask the engine (through the run cache) or the session, render.
package web

import (
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"outlierlab/challenges"
	"outlierlab/engine/challenge"
	"outlierlab/plans"
	"outlierlab/web/asset"
	"outlierlab/web/budget"
	wchallenges "outlierlab/web/challenges"
	"outlierlab/web/clientaddr"
	"outlierlab/web/guard"
	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/room"
	"outlierlab/web/roombus"
	"outlierlab/web/tabrelay"
	"outlierlab/web/tools"
)

// Options configures a Server. Zero values pick the defaults.
type Options struct {
	// MaxSessions bounds the tabs held at once (default 2000); SessionIdle
	// is how long an unused tab's session is kept (default 30 min).
	MaxSessions int
	// MaxStreams bounds the streams open at once (default 4000; past it a
	// new stream is a 503): a tab with an open stream is never dropped, so
	// MaxSessions alone bounds only the tabs without one.
	MaxStreams int
	// StreamsPerAddress bounds one client address's streams (default 400).
	StreamsPerAddress int
	SessionIdle       time.Duration
	// TabsPerMinute and CommandsPerMinute are the per-address limits on
	// new tabs and on commands (defaults 600 and 6000; a classroom behind
	// one NAT shares an address).
	TabsPerMinute, CommandsPerMinute int
	// MaxBodyBytes bounds a command's body (default 64 KiB).
	MaxBodyBytes int64
	// Now is the clock of playback; tests replace it.
	Now func() time.Time
	Log *slog.Logger
	// Lessons holds the lesson files (default: the course, lessons.FS).
	Lessons fs.FS
	// Plans holds the workshop plan files (default: the repository's,
	// plans.FS, with the course; none with other Lessons, since the
	// shipped plans are written on the course's lessons; serve -plans DIR
	// for an instructor's own).
	Plans fs.FS
	// Bus is the room bus (StartBus); nil: no workshops. Rooms bounds them.
	Bus   *roombus.Bus
	Rooms room.Limits
	// Proxies are the proxies in front whose X-Forwarded-* headers are
	// believed (none by default): the client address of every limit, and
	// the scheme and host of a room's join link.
	Proxies clientaddr.Proxies
	// Budget bounds heavy work: sweeps, compares, what-if replays.
	Budget budget.BudgetOptions
	// Build names the binary serving, for outlierlab_build_info.
	Build BuildInfo
	// ChallengeSecret derives the challenges' hidden seeds (web/challenges);
	// replicas share it. Empty: a random one for this process.
	ChallengeSecret []byte
	// ChallengeEvery is the least time between two submissions of one
	// browser (default 3 s).
	ChallengeEvery time.Duration
}

// BuildInfo is the build a server runs: its version (git describe, or
// "(devel)") and the commit it was built from ("" when unknown).
type BuildInfo struct{ Version, Revision string }

// Server is the lab's HTTP side. It holds no state that matters beyond the
// sessions' inputs and cursors; runs are a cache.
type Server struct {
	// Its three features, each with its own routes: the lab and lessons,
	// the rooms (standing on the lab) and the tools.
	lab    *lab.Lab
	rooms  *room.Workshops
	tools  *tools.Tools
	assets *asset.Assets
	// challenges are the tuning challenges, graded on hidden seeds.
	challenges *wchallenges.Challenges
	metrics    *prometheus.Registry
	// inflight are the requests being answered: *http.Request → when it
	// began (observe; LogInFlight).
	inflight sync.Map
}

// New builds a Server over the embedded assets.
func New(o Options) (*Server, error) {
	a, err := asset.LoadAssets(staticFiles)
	if err != nil {
		return nil, err
	}
	b := budget.New(o.Budget)
	l, err := lab.NewLab(lab.LabOptions{
		Assets: a, MaxSessions: o.MaxSessions, MaxStreams: o.MaxStreams, StreamsPerAddress: o.StreamsPerAddress, SessionIdle: o.SessionIdle,
		TabsPerMinute: o.TabsPerMinute, CommandsPerMinute: o.CommandsPerMinute, MaxBodyBytes: o.MaxBodyBytes,
		Now: o.Now, Log: o.Log, Lessons: o.Lessons, Proxies: o.Proxies, Budget: b,
	})
	if err != nil {
		return nil, err
	}
	if o.Plans == nil && o.Lessons == nil {
		o.Plans = plans.FS // the shipped plans name the course's lessons
	}
	if o.Bus != nil {
		l.SetRelay(tabrelay.New(o.Bus, o.Log))
	}
	ws, err := room.New(l, o.Plans, o.Bus, o.Rooms, o.Log)
	if err != nil {
		return nil, err
	}
	s := &Server{lab: l, rooms: ws, assets: a}
	s.tools = tools.NewTools(l.Pages, l.Runs, l.Budget, l.Log, l.MaxBody)
	cs, err := challenge.Load(challenges.FS)
	if err != nil {
		return nil, err
	}
	s.challenges, err = wchallenges.New(cs, wchallenges.Deps{Pages: l.Pages, Budget: l.Budget, Log: l.Log, Proxies: o.Proxies, Now: o.Now, Secret: o.ChallengeSecret, Every: o.ChallengeEvery})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(cs))
	for i := range cs {
		ids[i] = cs[i].ID
	}
	if err := ws.CheckChallenges(ids); err != nil {
		return nil, err
	}
	ws.SetGrader(s.challenges) // a plan's challenge scene grades as /challenges does
	s.metrics = newMetrics(s, o.Build)
	return s, nil
}

// Handler is the router: the request log, the compressor (compress.go),
// the guards every request passes, then each feature registers its own
// routes (its Routes: the lab and lessons, the tools, the workshops), then
// the process's own and the static files. The log is outside the
// compressor: its bytes are the bytes sent.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(s.observe, compress(), middleware.Recoverer, guard.SecurityHeaders, guard.SameOrigin().Handler,
		guard.LimitBodies(s.lab.MaxBody, map[string]int64{
			"/lab/import": 3 * tools.MaxImportBytes, // a config pasted and uploaded, in a form
			"/whatif":     tools.MaxWhatifBytes,     // an access log
		}),
		// HEAD is answered as GET without the body (RFC 9110 §9.3.2).
		middleware.GetHead)
	s.lab.Routes(r)
	s.tools.Routes(r)
	s.challenges.Routes(r)
	s.rooms.Routes(r)
	r.Get("/healthz", s.healthz)
	r.Head("/healthz", s.healthz) // load balancers and probes often ask with HEAD
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{}))
	r.Handle("/static/*", s.assets)
	r.Get("/favicon.ico", s.favicon) // asked for by browsers and tools that ignore the page's icon link
	r.NotFound(s.lab.Pages.NotFoundHandler)
	s.lab.SetForwardHandler(r) // what another replica forwards is served as if it came here
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		// A 405 names the methods the path takes (RFC 9110 §15.5.6).
		allow := allowedMethods(r, req.URL.Path)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		httperr.Write(w, httperr.Errorf(httperr.KindMethod, "%s is not allowed on %s (allowed %s)", httperr.Truncate(req.Method, 20), httperr.Truncate(req.URL.Path, 80), strings.Join(allow, ", ")), httperr.KindMethod)
	})
	return r
}

// Shutdown ends every open stream (the lab's, which a room's tabs and a
// recording's players are too). Call it when the http.Server starts
// shutting down (RegisterOnShutdown).
func (s *Server) Shutdown() { s.lab.Shutdown() }

// favicon serves the lab's icon where browsers look for it by default.
func (s *Server) favicon(w http.ResponseWriter, r *http.Request) {
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/static/favicon.svg"
	s.assets.ServeHTTP(w, r2)
}

// allowedMethods are the methods r routes for path (HEAD wherever GET is).
func allowedMethods(r chi.Routes, path string) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if r.Match(chi.NewRouteContext(), m, path) || m == http.MethodHead && slices.Contains(out, http.MethodGet) {
			out = append(out, m)
		}
	}
	return out
}

// healthz handles /healthz, the liveness probe: 200 while the process
// serves the lab. /healthz?ready is the readiness probe: 200 while the
// room bus is open and answers (or when the server has none), 503 before
// it is open and while it is down (its NATS connection lost, or JetStream
// not answering: roombus.Bus.Health), naming why. The lab itself is
// served meanwhile; only the rooms wait for the bus.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	_, ready := r.URL.Query()["ready"]
	if bus := s.rooms.Bus(); ready && bus != nil { // no bus: the lab alone, ready as it serves
		if err := bus.Health(); err != nil {
			httperr.Write(w, err, httperr.KindUnavailable) // net/http sends no body to a HEAD
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	msg := "ok\n"
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write([]byte(msg))
}
