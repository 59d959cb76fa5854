package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The room bus is NATS (workshops.md: "no extra servers" is what users of
// follow-me tools ask for most after sync that does not break). By default
// the server is embedded in the process with no network port and the lab
// talks to it in-process, so `make run` needs nothing else; -nats-listen
// gives the embedded server a client port that other replicas connect to;
// -nats-url uses an external NATS (a cluster) and embeds none.
//
// A room's state lives in one JetStream key-value bucket held in memory,
// one key per room, one revision kept (latest wins), each key expiring
// 12 h after its last write: a late joiner reads the current state, a
// replica that serves a room watches its key (one subscription per room
// per replica, fanned out to the room's streams in the process).

// roomBucket is the key-value bucket of the rooms' states.
const roomBucket = "outlierlab_rooms"

// Bounds of the bus. A record the lab writes is about 1–2 KiB; the bucket
// takes up to busMaxValue so that a bigger hand-published value still
// reaches the replicas and is refused there with a log line (maxRecordBytes,
// room.go) rather than vanishing unnoticed.
const (
	busMaxValue  = 64 << 10
	busMaxBucket = 32 << 20
	busMaxMemory = 64 << 20
	busTimeout   = 5 * time.Second
)

// BusOptions says where the room bus is.
type BusOptions struct {
	// Listen, if set, makes the embedded server accept other replicas'
	// connections on this address (HOST:PORT; port 0 picks a free one).
	// Leave it empty for a single replica: the server then opens no port.
	Listen string
	// URL, if set, is an external NATS server or cluster (comma-separated
	// nats:// URLs, JetStream enabled); no server is embedded.
	URL string
	// TTL is how long a room lives after its last change (default 12 h).
	TTL time.Duration
	Log *slog.Logger
}

// Bus is one replica's connection to the room bus: the embedded server if
// any, one NATS connection, and the rooms' bucket.
type Bus struct {
	ns  *server.Server // nil with an external NATS
	dir string         // the embedded server's JetStream directory
	nc  *nats.Conn
	kv  jetstream.KeyValue
	js  jetstream.JetStream
	// timeline is the rooms' recordings (room_recording.go).
	timeline jetstream.Stream
	log      *slog.Logger
}

// StartBus starts (or connects to) the room bus and opens the rooms'
// bucket, creating it if it is missing.
func StartBus(o BusOptions) (*Bus, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.TTL <= 0 {
		o.TTL = 12 * time.Hour
	}
	if o.Listen != "" && o.URL != "" {
		return nil, errors.New("room bus: -nats-listen and -nats-url exclude each other (an embedded server, or an external one)")
	}
	b := &Bus{log: o.Log}
	var err error
	if o.URL != "" {
		b.nc, err = nats.Connect(o.URL, b.connOptions()...)
		if err != nil {
			return nil, fmt.Errorf("room bus: cannot connect to %s: %w", o.URL, err)
		}
	} else if err = b.embed(o.Listen); err != nil {
		b.Close()
		return nil, err
	}
	if err := b.openBucket(o.TTL, o.URL != ""); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// embed starts the embedded server and connects to it in-process.
func (b *Bus) embed(listen string) error {
	dir, err := os.MkdirTemp("", "outlierlab-nats-")
	if err != nil {
		return fmt.Errorf("room bus: %w", err)
	}
	b.dir = dir
	opts := &server.Options{
		ServerName: "outlierlab", NoLog: true, NoSigs: true,
		JetStream: true, JetStreamMaxMemory: busMaxMemory, StoreDir: dir,
		DontListen: listen == "",
	}
	if listen != "" {
		host, port, err := splitListen(listen)
		if err != nil {
			return err
		}
		opts.Host, opts.Port = host, port
	}
	if b.ns, err = server.NewServer(opts); err != nil {
		return fmt.Errorf("room bus: %w", err)
	}
	b.ns.Start()
	if !b.ns.ReadyForConnections(10 * time.Second) {
		return fmt.Errorf("room bus: the embedded NATS server did not start (listen %q)", listen)
	}
	b.nc, err = nats.Connect("", append(b.connOptions(), nats.InProcessServer(b.ns))...)
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
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				b.log.Warn("room bus: disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { b.log.Info("room bus: reconnected", "url", nc.ConnectedUrlRedacted()) }),
	}
}

// openBucket creates the rooms' bucket or opens the one another replica
// created with the same settings. On an external NATS it asks for three
// copies (a cluster of three keeps the rooms when one server goes) and
// settles for one where the cluster has fewer JetStream servers; the
// embedded server keeps its one.
func (b *Bus) openBucket(ttl time.Duration, external bool) error {
	js, err := jetstream.New(b.nc)
	if err != nil {
		return fmt.Errorf("room bus: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), busTimeout)
	defer cancel()
	cfg := jetstream.KeyValueConfig{
		Bucket:      roomBucket,
		Description: "outlierlab workshop rooms: one key per room, its latest state",
		History:     1, TTL: ttl, Storage: jetstream.MemoryStorage,
		MaxValueSize: busMaxValue, MaxBytes: busMaxBucket, Replicas: 1,
	}
	if external {
		cfg.Replicas = 3
		if b.kv, err = js.CreateOrUpdateKeyValue(ctx, cfg); err == nil {
			return nil
		}
		b.log.Info("room bus: the rooms' bucket has one copy (the NATS cluster has fewer than three JetStream servers)", "err", err)
		cfg.Replicas = 1
	}
	if b.kv, err = js.CreateOrUpdateKeyValue(ctx, cfg); err != nil {
		return fmt.Errorf("room bus: cannot open the %s bucket (the NATS server needs JetStream): %w", roomBucket, err)
	}
	b.js = js
	return b.openTimeline(ctx, ttl, cfg.Replicas)
}

// URL is where other replicas reach the embedded server (their -nats-url),
// or "" when it opens no port or is not embedded.
func (b *Bus) URL() string {
	if b == nil || b.ns == nil || b.ns.Addr() == nil {
		return ""
	}
	return b.ns.ClientURL()
}

// Conn is the replica's NATS connection (its statistics count the bus's
// messages).
func (b *Bus) Conn() *nats.Conn { return b.nc }

// Close closes the connection and stops the embedded server.
func (b *Bus) Close() {
	if b == nil {
		return
	}
	if b.nc != nil {
		b.nc.Close()
	}
	if b.ns != nil {
		b.ns.Shutdown()
		b.ns.WaitForShutdown()
	}
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}
