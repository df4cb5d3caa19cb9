//go:build !unix

package main

import "time"

// cpuTime is not measured off Unix: the table shows the wall time alone.
func cpuTime() time.Duration { return 0 }
