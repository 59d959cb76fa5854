package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestServeAddr(t *testing.T) {
	env := func(port string) func(string) string {
		return func(k string) string {
			if k == "PORT" {
				return port
			}
			return ""
		}
	}
	for _, tt := range []struct {
		flag string
		set  bool
		port string
		want string
	}{
		{"", false, "", "127.0.0.1:8080"},
		{"", false, "9090", ":9090"},
		{"0.0.0.0:7000", true, "9090", "0.0.0.0:7000"},
	} {
		if got := serveAddr(tt.flag, tt.set, env(tt.port)); got != tt.want {
			t.Errorf("serveAddr(%q, %v, PORT=%q) = %q, want %q", tt.flag, tt.set, tt.port, got, tt.want)
		}
	}
}

// serve answers, and a shutdown ends it promptly even with a stream open
// (streams never go idle by themselves).
func TestServeGracefulShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan serving, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- serve(ctx, serveConfig{addr: "127.0.0.1:0"}, &out, io.Discard, ready) }()
	var addr serving
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	base := "http://" + addr.HTTP
	res, err := http.Get(base + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", err, res)
	}
	res.Body.Close()

	sig := url.QueryEscape(`{"tab":"0123456789abcdef0123","preset":"search-cache"}`)
	stream, err := http.Get(base + "/lab/stream?datastar=" + sig)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("stream: %v", err)
	}
	defer stream.Body.Close()
	buf := make([]byte, 512)
	if _, err := stream.Body.Read(buf); err != nil {
		t.Fatalf("stream read: %v", err)
	}

	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown hung on the open stream")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	if !strings.Contains(out.String(), "stopped") {
		t.Errorf("output: %q", out.String())
	}
}
