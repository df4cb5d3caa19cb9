package model

import (
	"cmp"
	"time"
)

// SavedPoint is up to when a running job's work is safe: evicting the job now loses the work
// it did since At. Among victims that priority, fair share and the kind of unit leave equal,
// the one with the latest saved point (the least work lost) is evicted first.
type SavedPoint struct {
	// At is the saved point; meaningless when Known is false.
	At time.Time
	// Known is false for a job with neither a checkpoint that can be placed in its run nor
	// a start stamp: it ranks as the oldest, losing the most.
	Known bool
	// Source tells where At comes from, for explanations.
	Source SavedPointSource
	// Start is the start of the current run the checkpoint was clamped to; zero when no
	// checkpoint was reported.
	Start time.Time
}

// SavedPointSource tells where a job's saved point comes from.
type SavedPointSource int

const (
	// SavedAtStart: the job reports no checkpoint; its saved point is its start stamp, as
	// before checkpoints were read (Known false without a stamp).
	SavedAtStart SavedPointSource = iota
	// SavedAtCheckpoint: the checkpoint the job reported, within its current run.
	SavedAtCheckpoint
	// CheckpointBeforeStart: the checkpoint predates the current run, which it saved
	// nothing of; the saved point is the run's start.
	CheckpointBeforeStart
	// CheckpointAfterNow: the checkpoint is in the future (a clock ahead, or an edit); it
	// counts as now, so that it cannot rank the job past any other.
	CheckpointAfterNow
	// CheckpointWithoutStart: the current run has no known start to place the checkpoint
	// in; it is ignored and the saved point is as without one.
	CheckpointWithoutStart
)

// SavedPoint is the job's saved point at now: its last checkpoint (the
// kai.scheduler/last-checkpoint-timestamp annotation) clamped to its current run, [start,
// now]; without a checkpoint, its start stamp, exactly as victims were ranked before
// checkpoints were read, so that a cluster where no job reports one decides as before.
//
// The start the checkpoint is clamped to is the start stamp of the current run; when the job
// has no stamp, or one of an earlier run (StampOfEarlierRun), the earliest start its active
// pods report. A checkpoint before it is left over from an earlier run and saves nothing of
// this one. A checkpoint after now counts as now: a job cannot claim to have saved work it
// has not done yet, and two such jobs tie (and fall to the next key) instead of being
// ordered by a future nobody has reached. So the saved point, a time, only moves when the
// job reports a checkpoint or starts a run (or a future checkpoint is reached), and the
// order of two jobs does not change as cycles pass.
//
// With a checkpoint, the saved point is never earlier than without one: reporting a
// checkpoint can only make a job count as losing less.
func (j *JobInfo) SavedPoint(now time.Time) SavedPoint {
	if j.LastCheckpoint == nil {
		if j.LastStartTimestamp == nil {
			return SavedPoint{}
		}
		return SavedPoint{At: *j.LastStartTimestamp, Known: true}
	}
	start, ok := j.runStart()
	if !ok {
		sp := SavedPoint{Source: CheckpointWithoutStart}
		if j.LastStartTimestamp != nil {
			sp.At, sp.Known = *j.LastStartTimestamp, true
		}
		return sp
	}
	sp := SavedPoint{At: *j.LastCheckpoint, Known: true, Source: SavedAtCheckpoint, Start: start}
	if sp.At.After(now) {
		sp.At, sp.Source = now, CheckpointAfterNow
	}
	// Last, so that a start in the future (an edited stamp) wins over now, as it does for a
	// job without a checkpoint.
	if sp.At.Before(start) {
		sp.At, sp.Source = start, CheckpointBeforeStart
	}
	return sp
}

// runStart is when the job's current run started: its start stamp unless it is of an
// earlier run, else the earliest start its active pods report; ok is false with neither.
func (j *JobInfo) runStart() (time.Time, bool) {
	if j.LastStartTimestamp != nil && !j.StampOfEarlierRun() {
		return *j.LastStartTimestamp, true
	}
	start, known, _ := j.CurrentRun()
	return start, known
}

// CompareSavedPoints orders two saved points as victims: the later first (it loses less),
// unknown ones last.
func CompareSavedPoints(l, r SavedPoint) int {
	return CompareSavedOrders(l.Order(), r.Order())
}

// SavedOrder is a saved point reduced to what orders victims, small and cheap to compare: a
// victim search keeps one per unit and compares them over and over.
type SavedOrder struct {
	sec   int64
	nsec  int32
	known bool
}

// Order reduces the saved point to what CompareSavedOrders needs.
func (p SavedPoint) Order() SavedOrder {
	if !p.Known {
		return SavedOrder{}
	}
	return SavedOrder{sec: p.At.Unix(), nsec: int32(p.At.Nanosecond()), known: true}
}

// CompareSavedOrders is CompareSavedPoints on the reduced points.
func CompareSavedOrders(l, r SavedOrder) int {
	switch {
	case !l.known && !r.known:
		return 0
	case !l.known:
		return 1
	case !r.known:
		return -1
	}
	if c := cmp.Compare(r.sec, l.sec); c != 0 {
		return c
	}
	return cmp.Compare(r.nsec, l.nsec)
}
