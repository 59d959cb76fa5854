package roombus

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDataDir takes the data directory for this process: two servers on
// one JetStream store would corrupt it (nats-server does not lock it), and
// a second `outlierlab serve` with the default directory is an easy
// mistake. The lock goes with the process, even killed. Without flock
// (lock_other.go) the directory is only checked for writing.
func lockDataDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("room bus: the data directory (-data-dir %s) must be writable: %w", dir, err)
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("room bus: another outlierlab serve uses the data directory %s (give this one its own -data-dir)", dir)
	}
	return f, nil
}
