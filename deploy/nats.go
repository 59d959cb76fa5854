package deploy

import (
	"fmt"
	"strings"
	"testing"
)

// NATSNode is what a test changes in nats.conf to run one of its servers
// on the test's own ports and directory.
type NATSNode struct {
	// Name is the server's server_name (nats-1 in the file).
	Name string
	// Listen and ClusterListen are HOST:PORT of its clients and its
	// routes; Routes the three servers' ClusterListen, in the file's
	// order (nats-1, nats-2, nats-3).
	Listen, ClusterListen string
	Routes                [3]string
	// StoreDir is JetStream's store.
	StoreDir string
	// ClientPassword and RoutePassword are the file's CLIENT_PASSWORD and
	// ROUTE_PASSWORD.
	ClientPassword, RoutePassword string
}

// NATSConf is the shipped nats.conf run as node n: its comments left
// out, the server's name, addresses, routes' hosts, store and passwords
// replaced (web/workshopday runs it, web/roombus checks its
// authorization). A shipped file that no longer has what the test changes
// fails t.
func NATSConf(t testing.TB, n NATSNode) string {
	t.Helper()
	conf, err := natsConf(shippedNATS, n)
	if err != nil {
		t.Fatal(err)
	}
	return conf
}

// natsConf is NATSConf over raw. Every replaced line must be found as
// often as the shipped file has it, so that a changed file is an error
// rather than run otherwise than shipped.
func natsConf(raw string, n NATSNode) (string, error) {
	var lines []string
	for _, l := range strings.Split(raw, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			lines = append(lines, l)
		}
	}
	conf := strings.Join(lines, "\n") + "\n"
	var errs []string
	replace := func(old, new string, count int) {
		if got := strings.Count(conf, old); got != count {
			errs = append(errs, fmt.Sprintf("%d of %q, want %d", got, old, count))
		}
		conf = strings.ReplaceAll(conf, old, new)
	}
	replace("server_name: nats-1\n", "server_name: "+n.Name+"\n", 1)
	replace("listen: 0.0.0.0:4222\n", "listen: "+n.Listen+"\n", 1)
	replace("listen: 0.0.0.0:6222\n", "listen: "+n.ClusterListen+"\n", 1)
	replace("store_dir: /var/lib/nats ", "store_dir: \""+n.StoreDir+"\" ", 1)
	for i, r := range n.Routes {
		replace(fmt.Sprintf("@nats-%d:6222\n", i+1), "@"+r+"\n", 1)
	}
	replace("CLIENT_PASSWORD", n.ClientPassword, 1)
	replace("ROUTE_PASSWORD", n.RoutePassword, 4)
	if len(errs) > 0 {
		return "", fmt.Errorf("deploy/nats.conf: %s", strings.Join(errs, "; "))
	}
	return conf, nil
}
