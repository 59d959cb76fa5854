package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// runHealthcheck asks a running server's /healthz and exits 0 when it
// answers 200 in time, 1 when it does not, 2 on bad flags. The container
// image is distroless (no curl, no shell), so its HEALTHCHECK runs this.
// /healthz is liveness (the lab is served); -ready asks /healthz?ready,
// readiness (the room bus is open too).
func runHealthcheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the address to ask (default http://127.0.0.1:$PORT/healthz, port 8080 without $PORT)")
	ready := fs.Bool("ready", false, "ask for readiness (/healthz?ready: the room bus is open), not only liveness")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "outlierlab healthcheck: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "outlierlab healthcheck: -timeout: %v is out of range (allowed > 0, e.g. 3s)\n", *timeout)
		return 2
	}
	target := *url
	if target == "" {
		port := os.Getenv("PORT")
		if port == "" {
			port = "8080"
		}
		target = "http://127.0.0.1:" + port + "/healthz"
		if *ready {
			target += "?ready"
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab healthcheck: -url: %v\n", err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "outlierlab healthcheck: %s: %v\n", target, err)
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "outlierlab healthcheck: %s answered %s\n", target, resp.Status)
		return 1
	}
	fmt.Fprintf(stdout, "ok %s\n", target)
	return 0
}
