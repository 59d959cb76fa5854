package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"outlierlab/web"
)

// version is the build's version, set when linking from a checkout:
// go build -ldflags "-X outlierlab/cli.version=$(git describe --tags
// --always --dirty)" (make build and make run do; the image's VERSION
// build argument passes it to make build). Empty: see buildInfo.
var version string

// buildInfo is the version this binary reports (outlierlab version, the
// first line serve logs, outlierlab_build_info): the linked-in version;
// else what the Go toolchain stamped (go build in a checkout: a
// pseudo-version from the commit, or the commit itself, -dirty when the
// tree had changes; go install: the module's version); else "(devel)"
// (go run, go test, a build without the repository's history).
func buildInfo() web.BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	return resolveBuild(version, bi, ok)
}

func resolveBuild(stamp string, bi *debug.BuildInfo, ok bool) web.BuildInfo {
	var b web.BuildInfo
	modified := false
	if ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	switch {
	case stamp != "":
		b.Version = stamp
	case ok && bi.Main.Version != "" && bi.Main.Version != "(devel)":
		b.Version = bi.Main.Version
	case b.Revision != "":
		b.Version = b.Revision[:min(12, len(b.Revision))]
		if modified {
			b.Version += "-dirty"
		}
	default:
		b.Version = "(devel)"
	}
	return b
}

// runVersion prints the version, then the Go release and platform it was
// built with: "outlierlab v1.2.0-3-gabc1234 (go1.26.0 linux/amd64)".
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "outlierlab version: takes no arguments (got %q)\n", args)
		return 2
	}
	b := buildInfo()
	fmt.Fprintf(stdout, "outlierlab %s (%s %s/%s", b.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if b.Revision != "" {
		fmt.Fprintf(stdout, ", commit %s", b.Revision)
	}
	fmt.Fprintln(stdout, ")")
	return 0
}
