//go:build unix

package roombus

import (
	"os"
	"syscall"
)

// flock takes f's lock for this process, or fails at once if another has
// it.
func flock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }
