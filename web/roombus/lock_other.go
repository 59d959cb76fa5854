//go:build !unix

package roombus

import "os"

// flock: this system has none; the data directory is not locked.
func flock(*os.File) error { return nil }
