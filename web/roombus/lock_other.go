//go:build !unix

package roombus

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDataDir: without flock the directory is only checked for writing.
func lockDataDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("room bus: the data directory (-data-dir %s) must be writable: %w", dir, err)
	}
	return f, nil
}
