package gpureservation

import (
	"sync"
	"time"
)

// uses counts, per GPU group, the binds of this scheduler counting on the group's reservation
// pod now, and remembers when the last one ended. Binds of one device run in parallel (the
// dispatcher's workers), and the informers show a bind's label only some time after it is
// written: neither a failed bind's undo, nor a reservation's creator giving up, nor the
// collector may delete a reservation another bind is about to label its share with, and
// only this record knows of such binds.
type uses struct {
	mu    sync.Mutex
	binds map[string]int
	ended map[string]time.Time
}

// acquire records a bind counting on group's reservation.
func (u *uses) acquire(group string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.binds == nil {
		u.binds, u.ended = map[string]int{}, map[string]time.Time{}
	}
	u.binds[group]++
}

// release records that a bind acquired for group ended, at now.
func (u *uses) release(group string, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.binds[group]--; u.binds[group] <= 0 {
		delete(u.binds, group)
	}
	u.ended[group] = now
}

// others reports whether a bind besides the caller's (which acquired group) counts on it.
func (u *uses) others(group string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.binds[group] > 1
}

// recent reports whether a bind counts on group now, or one ended within hold of now: its
// share's label may not be in the informers yet.
func (u *uses) recent(group string, now time.Time, hold time.Duration) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.binds[group] > 0 {
		return true
	}
	ended, ok := u.ended[group]
	if ok && now.Sub(ended) >= hold {
		delete(u.ended, group) // forgotten: the informers have long caught up
		return false
	}
	return ok
}
