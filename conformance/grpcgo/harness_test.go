// Package grpcgo checks the engine's gRPC dialect against the real grpc-go
// outlier detector (gRFC A50, balancer outlier_detection_experimental).
//
// Each scenario starts N real gRPC servers and one real grpc-go client
// inside a testing/synctest bubble, so the clock is fake and exact, over an
// in-memory net.Pipe network. The client's service config puts
// outlier_detection_experimental over round_robin; its addresses come from
// resolver/manual. The client first runs with a no-op outlier config, then
// the counting config is pushed at T0, when the balancer arms its interval
// timer. Every interval it sends, halfway through, a multiple of
// lcm(1..N) calls, so round robin splits them evenly over the hosts that
// are not ejected; grpc.Peer says which backend served each call. grpc-go's
// decisions are read from its own log lines ("detected outlier", "Subchannel
// ejected/unejected") and the gRFC A91 metrics (ejections_enforced and
// ejections_unenforced with their reason). The per-interval per-host counts
// the client saw are then replayed through the engine's gRPC dialect, and
// the two event lists must be identical.
//
// Only the tests import grpc: the outlierlab binary does not (TestImportBoundaries).
package grpcgo

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	estats "google.golang.org/grpc/experimental/stats"
	"google.golang.org/grpc/grpclog"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	// Registers outlier_detection_experimental (xds/xds.go →
	// internal/xds/balancer → .../outlierdetection).
	_ "google.golang.org/grpc/xds"
)

// ---- the in-memory network ---------------------------------------------

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

// namedConn is one end of a net.Pipe that reports the backend's address,
// so grpc.Peer names the host that served a call.
type namedConn struct {
	net.Conn
	local, remote pipeAddr
}

func (c namedConn) LocalAddr() net.Addr  { return c.local }
func (c namedConn) RemoteAddr() net.Addr { return c.remote }

// pipeListener hands the server end of each dialled pipe to grpc.Server.
type pipeListener struct {
	addr  pipeAddr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener(addr string) *pipeListener {
	return &pipeListener{addr: pipeAddr(addr), conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return l.addr }

func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- namedConn{server, l.addr, "client"}:
		return namedConn{client, "client", l.addr}, nil
	case <-l.done:
		return nil, fmt.Errorf("%s: connection refused", l.addr)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ---- what grpc-go decided ------------------------------------------------

// event is one decision in the replay format's words.
type event struct {
	AtMs     int64
	Host     string
	Event    string
	Detector string
}

func (e event) String() string {
	s := fmt.Sprintf("%d %s %s", e.AtMs, e.Host, e.Event)
	if e.Detector != "" {
		s += " " + e.Detector
	}
	return s
}

// sink collects one scenario's grpc-go decisions, in the order grpc-go's
// timer goroutine made them: a "detected outlier" log line, then either
// the enforced metric (after the "Subchannel ejected" line) or the
// unenforced metric with its reason.
type sink struct {
	mu       sync.Mutex
	prefix   string // host addresses are prefix + "h<i>"
	t0       time.Time
	started  bool
	pending  string // host of the last detection
	method   string // its algorithm, as the metrics label it
	ejectLog string // host of the last "Subchannel ejected" line
	events   []event
	problems []string
}

func (s *sink) at() int64 { return time.Since(s.t0).Milliseconds() }

func (s *sink) host(addr string) string { return strings.TrimPrefix(addr, s.prefix) }

func (s *sink) problem(format string, args ...any) {
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

var (
	detectedLine = regexp.MustCompile(`(SuccessRate|FailurePercentage) algorithm detected outlier: \[+\{Addr: "([^"]+)"`)
	ejectionLine = regexp.MustCompile(`Subchannel (ejected|unejected): \[\{Addr: "([^"]+)"`)
)

func (s *sink) log(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return
	}
	if m := detectedLine.FindStringSubmatch(line); m != nil {
		if s.pending != "" {
			s.problem("%d: detection of %s before the outcome of %s's", s.at(), m[2], s.pending)
		}
		s.pending, s.method = s.host(m[2]), map[string]string{"SuccessRate": "success_rate", "FailurePercentage": "failure_percentage"}[m[1]]
		return
	}
	if m := ejectionLine.FindStringSubmatch(line); m != nil {
		h := s.host(m[2])
		if m[1] == "unejected" {
			s.events = append(s.events, event{s.at(), h, "uneject", ""})
			return
		}
		if h != s.pending {
			s.problem("%d: %s ejected while %q was the pending detection", s.at(), h, s.pending)
		}
		s.ejectLog = h
	}
}

// metric handles the gRFC A91 counters outlier detection records.
func (s *sink) metric(name string, labels []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ev event
	switch name {
	case "grpc.lb.outlier_detection.ejections_enforced":
		ev = event{s.at(), s.pending, "eject", labels[1]}
		if s.ejectLog != s.pending {
			s.problem("%d: enforced ejection of %s without its Subchannel ejected line", s.at(), s.pending)
		}
	case "grpc.lb.outlier_detection.ejections_unenforced":
		kind := map[string]string{"max_ejection_overflow": "overflow", "enforcement_percentage": "detect"}[labels[2]]
		ev = event{s.at(), s.pending, kind, labels[1]}
	default:
		return
	}
	if s.pending == "" || labels[1] != s.method {
		s.problem("%d: metric %s %v without a matching detection (%q by %s)", s.at(), name, labels, s.pending, s.method)
	}
	s.events = append(s.events, ev)
	s.pending, s.method, s.ejectLog = "", "", ""
}

// logRouter is the process's grpclog.LoggerV2: it hands every line to the
// sink whose host prefix it mentions (scenarios may run side by side).
type logRouter struct {
	mu    sync.Mutex
	sinks map[*sink]bool
}

var router = &logRouter{sinks: map[*sink]bool{}}

func (r *logRouter) add(s *sink) {
	r.mu.Lock()
	r.sinks[s] = true
	r.mu.Unlock()
}

func (r *logRouter) remove(s *sink) {
	r.mu.Lock()
	delete(r.sinks, s)
	r.mu.Unlock()
}

func (r *logRouter) route(line string) {
	if !strings.Contains(line, "outlier") && !strings.Contains(line, "Subchannel ") {
		return
	}
	r.mu.Lock()
	var target *sink
	for s := range r.sinks {
		if strings.Contains(line, `"`+s.prefix) {
			target = s
		}
	}
	r.mu.Unlock()
	if target != nil {
		target.log(line)
	}
}

func (r *logRouter) Info(args ...any)                    { r.route(fmt.Sprint(args...)) }
func (r *logRouter) Infoln(args ...any)                  { r.route(fmt.Sprintln(args...)) }
func (r *logRouter) Infof(format string, args ...any)    { r.route(fmt.Sprintf(format, args...)) }
func (r *logRouter) Warning(args ...any)                 {}
func (r *logRouter) Warningln(args ...any)               {}
func (r *logRouter) Warningf(format string, args ...any) {}
func (r *logRouter) Error(args ...any)                   {}
func (r *logRouter) Errorln(args ...any)                 {}
func (r *logRouter) Errorf(format string, args ...any)   {}
func (r *logRouter) Fatal(args ...any)                   { panic(fmt.Sprint(args...)) }
func (r *logRouter) Fatalln(args ...any)                 { panic(fmt.Sprint(args...)) }
func (r *logRouter) Fatalf(format string, args ...any)   { panic(fmt.Sprintf(format, args...)) }
func (r *logRouter) V(int) bool                          { return false }

// TestMain installs the logger before grpc does anything, as grpclog asks.
func TestMain(m *testing.M) {
	grpclog.SetLoggerV2(router)
	os.Exit(m.Run())
}

// metricsHandler is a stats.Handler that is also the channel's
// MetricsRecorder: grpc-go forwards the balancer's A91 metrics to every
// stats handler that implements estats.MetricsRecorder.
type metricsHandler struct {
	estats.UnimplementedMetricsRecorder
	sink *sink
}

func (h *metricsHandler) RecordInt64Count(handle *estats.Int64CountHandle, _ int64, labels ...string) {
	h.sink.metric(handle.Descriptor().Name, labels)
}
func (h *metricsHandler) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (h *metricsHandler) HandleRPC(context.Context, stats.RPCStats) {}
func (h *metricsHandler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (h *metricsHandler) HandleConn(context.Context, stats.ConnStats) {}

// ---- one run -----------------------------------------------------------

// counts is what the client saw from one host in one interval.
type counts struct{ ok, failed int }

// observed is a scenario run through grpc-go.
type observed struct {
	traffic [][]counts // [interval][host]
	events  []event
	// served[host] is the statuses the servers returned, by code.
	served []map[codes.Code]int
}

const method = "/outlierlab.crosscheck.Backend/Call"

// runGRPC drives the scenario through real grpc-go servers and client. It
// must run inside a synctest bubble.
func runGRPC(t *testing.T, sc *scenario) *observed {
	interval := sc.interval()
	sk := &sink{prefix: sc.name + "."}
	router.add(sk)
	defer router.remove(sk)
	obs := &observed{served: make([]map[codes.Code]int, sc.hosts)}

	// The backends: each fails the calls its faults select in the
	// current interval, counted from T0 on the shared fake clock.
	var servers []*grpc.Server
	listeners := map[string]*pipeListener{}
	var endpoints []resolver.Endpoint
	var served sync.Mutex
	for i := range sc.hosts {
		addr := fmt.Sprintf("%sh%d", sk.prefix, i)
		l := newPipeListener(addr)
		listeners[addr] = l
		endpoints = append(endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: addr}}})
		calls := map[int]int{}
		obs.served[i] = map[codes.Code]int{}
		srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			if err := stream.RecvMsg(&emptypb.Empty{}); err != nil {
				return err
			}
			sk.mu.Lock()
			t0 := sk.t0
			sk.mu.Unlock()
			served.Lock()
			k := int(time.Since(t0) / interval)
			calls[k]++
			code := sc.status(i, k, calls[k])
			obs.served[i][code]++
			served.Unlock()
			if code != codes.OK {
				return status.Error(code, "injected by the cross-check")
			}
			return stream.SendMsg(&emptypb.Empty{})
		}))
		servers = append(servers, srv)
		go srv.Serve(l)
	}

	res := manual.NewBuilderWithScheme("crosscheck")
	res.InitialState(resolver.State{Endpoints: endpoints})
	cc, err := grpc.NewClient(res.Scheme()+":///"+sc.name,
		grpc.WithResolvers(res),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return listeners[addr].dial(ctx)
		}),
		grpc.WithDefaultServiceConfig(serviceConfig(nil)),
		grpc.WithStatsHandler(&metricsHandler{sink: sk}),
		grpc.WithIdleTimeout(0),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cc.Close()
		for _, s := range servers {
			s.Stop()
		}
	}()
	cc.Connect()
	synctestWait()

	// T0: the counting config; outlier detection arms its timer here.
	counting, err := sc.grpcConfig()
	if err != nil {
		t.Fatal(err)
	}
	parsed := res.CC().ParseServiceConfig(serviceConfig(counting))
	if parsed.Err != nil {
		t.Fatalf("service config: %v", parsed.Err)
	}
	sk.mu.Lock()
	sk.t0, sk.started = time.Now(), true
	sk.mu.Unlock()
	res.UpdateState(resolver.State{Endpoints: endpoints, ServiceConfig: parsed})
	synctestWait()

	ctx := context.Background()
	hostIndex := map[string]int{}
	for i := range sc.hosts {
		hostIndex[fmt.Sprintf("%sh%d", sk.prefix, i)] = i
	}
	for k := range sc.intervals {
		time.Sleep(time.Until(sk.t0.Add(time.Duration(k)*interval + interval/2)))
		row := make([]counts, sc.hosts)
		for range sc.calls {
			var p peer.Peer
			err := cc.Invoke(ctx, method, &emptypb.Empty{}, &emptypb.Empty{}, grpc.Peer(&p))
			if p.Addr == nil {
				t.Fatalf("interval %d: a call reached no backend: %v", k, err)
			}
			i := hostIndex[p.Addr.String()]
			if err == nil {
				row[i].ok++
			} else {
				row[i].failed++
			}
		}
		obs.traffic = append(obs.traffic, row)
	}
	// Let the tick that closes the last interval run.
	time.Sleep(time.Until(sk.t0.Add(time.Duration(sc.intervals)*interval + interval/2)))
	synctestWait()

	sk.mu.Lock()
	defer sk.mu.Unlock()
	for _, p := range sk.problems {
		t.Errorf("grpc-go's log and metrics: %s", p)
	}
	if sk.pending != "" {
		t.Errorf("detection of %s by %s with no outcome", sk.pending, sk.method)
	}
	obs.events = slices.Clone(sk.events)
	return obs
}

// serviceConfig wraps an outlier_detection_experimental config (nil: the
// no-op config, neither algorithm) over round_robin.
func serviceConfig(od map[string]any) string {
	if od == nil {
		od = map[string]any{}
	}
	od["childPolicy"] = []any{map[string]any{"round_robin": map[string]any{}}}
	b, _ := json.Marshal(map[string]any{"loadBalancingConfig": []any{map[string]any{"outlier_detection_experimental": od}}})
	return string(b)
}
