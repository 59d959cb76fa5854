// Package deploy holds the shipped deployment files and what tests need to
// run them as shipped.
package deploy

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// NginxConf is nginx.conf (raw) with what a test must change: the
// upstream's servers are the given addresses, it listens on
// 127.0.0.1:port, and its pid file, temporary directories and access log
// are in dir. Every one of them must be found, so that a changed file is
// an error rather than run otherwise than shipped (cli's nginx tests and
// web/workshopday run it).
func NginxConf(raw, dir string, port int, upstreams ...string) (string, error) {
	conf := string(raw)
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
