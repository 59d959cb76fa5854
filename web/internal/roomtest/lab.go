package roomtest

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"outlierlab/web/asset"
	"outlierlab/web/lab"
)

// Lab is a lab of o (the course's lessons unless o names others) with
// the repository's static files and, unless o names one, a quiet logger,
// shut down when the test ends: what the packages below the rooms (the
// recording, the scenes, the questions) stand on in their tests.
func Lab(t testing.TB, o lab.LabOptions) *lab.Lab {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	a, err := asset.LoadAssets(os.DirFS(filepath.Join(filepath.Dir(file), "..", ".."))) // web/static
	if err != nil {
		t.Fatal(err)
	}
	o.Assets = a
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	l, err := lab.NewLab(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Shutdown)
	return l
}
