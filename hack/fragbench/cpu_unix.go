//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used so far (user and system): beside the wall
// time, what a run costs on a machine shared with other work, which stretches the wall time
// but not this.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
