package engine

import (
	"os/exec"
	"strings"
	"testing"
)

// The engine is pure: the detector imports only the standard library, and
// nothing under engine/ may reach the web stack. Checked over `go list -deps`
// so an indirect import is caught too.
func TestImportBoundaries(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	list := func(args ...string) []string {
		out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	for _, dep := range list("-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "outlierlab/engine") {
		if dep != "outlierlab/engine" {
			t.Errorf("the detector package imports non-standard %s", dep)
		}
	}
	// grpc-go is a test dependency of conformance/grpcgo only: the
	// outlierlab binary must not link it.
	for _, dep := range list("-deps", "outlierlab") {
		if strings.HasPrefix(dep, "google.golang.org/grpc") {
			t.Errorf("the outlierlab binary depends on %s", dep)
		}
	}
	forbidden := []string{"net/http", "github.com/a-h/templ", "github.com/go-chi/", "github.com/starfederation/", "github.com/go-echarts/", "outlierlab/web"}
	for _, pkg := range list("outlierlab/engine/...") {
		for _, dep := range list("-deps", pkg) {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
