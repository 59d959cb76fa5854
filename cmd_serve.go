package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"outlierlab/web"
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

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", defaultAddr, "listen address HOST:PORT (also $PORT)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "addr" })
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, serveAddr(*addr, set, os.Getenv), stdout, stderr, nil); err != nil {
		fmt.Fprintln(stderr, "outlierlab serve:", err)
		return 1
	}
	return 0
}

// serve runs the lab until ctx ends, then shuts down gracefully: new
// connections stop, open streams are ended (browsers reconnect to the next
// server and resume at their cursor), requests in flight finish.
// ready, if not nil, receives the bound address once listening.
func serve(ctx context.Context, addr string, stdout, stderr io.Writer, ready chan<- string) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	lab, err := web.New(web.Options{Log: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
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
	}
	srv.RegisterOnShutdown(lab.Shutdown)
	fmt.Fprintf(stdout, "outlierlab: serving the lab on http://%s/ (Ctrl-C to stop)\n", ln.Addr())
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	fmt.Fprintln(stdout, "outlierlab: stopped")
	return nil
}
