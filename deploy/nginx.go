// Package deploy holds the shipped deployment files and what tests need to
// run them as shipped.
package deploy

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The deployment files as this checkout ships them: every test that runs
// one reads it here, never from a path of its own (two tests read the
// same file from the module root and from their own directory).
var (
	//go:embed nginx.conf
	shippedNginx string
	//go:embed nats.conf
	shippedNATS string
)

// NginxConf is the shipped nginx.conf with what a test must change: the
// upstream's servers are the given addresses, it listens on
// 127.0.0.1:port, and its pid file, temporary directories and access log
// are in dir (cli's nginx tests and web/workshopday run it). A shipped
// file that no longer has what the test changes fails t.
func NginxConf(t testing.TB, dir string, port int, upstreams ...string) string {
	t.Helper()
	conf, err := nginxConf(shippedNginx, dir, port, upstreams...)
	if err != nil {
		t.Fatal(err)
	}
	return conf
}

// nginxConf is NginxConf over raw. Every replaced line must be found as
// often as the shipped file has it, so that a changed file is an error
// rather than run otherwise than shipped.
func nginxConf(raw, dir string, port int, upstreams ...string) (string, error) {
	conf := raw
	var errs []string
	replace := func(old, new string, n int) {
		if got := strings.Count(conf, old); got != n {
			errs = append(errs, fmt.Sprintf("%d of %q, want %d", got, old, n))
		}
		conf = strings.ReplaceAll(conf, old, new)
	}
	for i, u := range upstreams {
		replace(fmt.Sprintf("server replica%d:8080 ", i+1), "server "+u+" ", 1)
	}
	replace("listen 8080;", "listen 127.0.0.1:"+strconv.Itoa(port)+";", 1)
	replace("pid /tmp/nginx.pid;", "pid "+filepath.Join(dir, "nginx.pid")+";", 1)
	replace(" /tmp/nginx-", " "+dir+"/", 5)
	replace("access_log /dev/stdout ", "access_log "+filepath.Join(dir, "access.log")+" ", 1)
	if strings.Contains(conf, "/tmp/nginx") {
		errs = append(errs, "a writable path not replaced")
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("deploy/nginx.conf: %s", strings.Join(errs, "; "))
	}
	return conf, nil
}

// NginxDir is a temporary directory for nginx's files that its workers
// reach, removed at the test's end: run as root, the workers are nobody,
// and t.TempDir's parent is the test's alone (0700). The master makes the
// temporary directories in it theirs.
func NginxDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "outlierlab-nginx-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
