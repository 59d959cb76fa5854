package webtest

import (
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// StartNATS is an in-process NATS server on opts (quiet, on the loopback
// address unless opts names one), ready for connections, shut down when
// the test ends. A random port (server.RANDOM_PORT) is written back into
// opts, so that a server started again on opts (the same port, and the
// same JetStream store) is the same server back.
func StartNATS(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	opts.NoLog, opts.NoSigs = true, true
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("nats server: %v", err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready within 10 s")
	}
	opts.Port = ns.Addr().(*net.TCPAddr).Port
	return ns
}

// Eventually reports whether ok holds within d, asking it every 20 ms
// (and once more at the end).
func Eventually(d time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ok()
}
