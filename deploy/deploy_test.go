package deploy

import (
	"strings"
	"testing"
)

// The shipped files run with the test's ports and paths, and a file that
// no longer has a line a test replaces is an error naming it, not a
// deployment that runs otherwise than shipped.
func TestShippedFilesTakeTheTestsPlaces(t *testing.T) {
	conf := NginxConf(t, "/tmp/olab-x", 18080, "127.0.0.1:1", "127.0.0.1:2")
	for _, want := range []string{"listen 127.0.0.1:18080;", "server 127.0.0.1:1 ", "server 127.0.0.1:2 ", "pid /tmp/olab-x/nginx.pid;", "access_log /tmp/olab-x/access.log "} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	n := NATSNode{Name: "n2", Listen: "127.0.0.1:4333", ClusterListen: "127.0.0.1:6333",
		Routes: [3]string{"127.0.0.1:6331", "127.0.0.1:6332", "127.0.0.1:6333"}, StoreDir: "/tmp/olab-js",
		ClientPassword: "cpw", RoutePassword: "rpw"}
	nats := NATSConf(t, n)
	for _, want := range []string{"server_name: n2\n", "listen: 127.0.0.1:4333\n", "listen: 127.0.0.1:6333\n", "@127.0.0.1:6331\n", "cpw", "rpw"} {
		if !strings.Contains(nats, want) {
			t.Errorf("nats.conf lacks %q", want)
		}
	}
	if strings.Contains(nats, "\n#") || strings.Contains(nats, "ROUTE_PASSWORD") {
		t.Errorf("nats.conf keeps a comment or a placeholder:\n%s", nats)
	}
}

func TestChangedShippedFileIsAnError(t *testing.T) {
	_, err := nginxConf(strings.Replace(shippedNginx, "listen 8080;", "listen 9090;", 1), "/tmp/x", 1, "a:1", "b:2")
	if err == nil || !strings.Contains(err.Error(), `"listen 8080;"`) {
		t.Errorf("nginx.conf without its listen line: %v, want an error naming it", err)
	}
	_, err = natsConf(strings.Replace(shippedNATS, "server_name: nats-1\n", "server_name: other\n", 1), NATSNode{})
	if err == nil || !strings.Contains(err.Error(), "server_name: nats-1") {
		t.Errorf("nats.conf without its server_name: %v, want an error naming it", err)
	}
}
