package stalegang

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/conf"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Action evicts stale gangs.
type Action struct {
	defaultGrace time.Duration
	// mu guards firstSeen: kai-sim's pools and the scheduler run one action per policy, but
	// nothing forbids two sessions at once.
	mu sync.Mutex
	// firstSeen is, per short job with no trace in the cluster of when it became short, the
	// session time that first saw it so. Kept across cycles on purpose: it is the memory of
	// a fact the cluster does not keep; jobs no longer short are dropped every cycle.
	firstSeen map[model.JobID]time.Time
}

var _ framework.Action = &Action{}

// New returns the action; defaultGrace is the scheduler configuration's
// globalDefaultStalenessGracePeriod, for jobs that set no period of their own.
func New(defaultGrace time.Duration) *Action {
	return &Action{defaultGrace: defaultGrace, firstSeen: map[model.JobID]time.Time{}}
}

func (*Action) Name() framework.ActionType { return framework.StaleGangEviction }

var _ framework.Describer = &Action{}

// Settings says the default grace period, under the configuration's key.
func (a *Action) Settings() []string {
	return []string{conf.StalenessKey + "=" + a.defaultGrace.String()}
}

// DefaultGrace is the grace period of jobs that set none (kubectl kai explain tells it).
func (a *Action) DefaultGrace() time.Duration { return a.defaultGrace }

// Execute evicts every job stale for longer than its grace period, and notes when the next
// one's grace ends so that the loop wakes then.
func (a *Action) Execute(ctx context.Context, ssn *framework.Session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := ssn.Now()
	short := map[model.JobID]bool{}
	for _, job := range ssn.Snapshot().Jobs {
		v := a.judge(job, now)
		if !v.Short {
			continue
		}
		short[job.ID] = true
		switch {
		case v.Disabled:
		case now.Before(v.EvictAt):
			ssn.NoteAnswerChangesAt(v.EvictAt)
		default:
			a.evict(ctx, ssn, job, v)
		}
	}
	for id := range a.firstSeen {
		if !short[id] {
			delete(a.firstSeen, id)
		}
	}
}

// Verdict is what the action finds of one job at a moment.
type Verdict struct {
	// Short: the job runs with fewer placed pods than its minimum.
	Short bool
	// Group is what is short ("gang", or "sub-group NAME"), with the pods it has placed and
	// the minimum it needs, for messages; empty when the gang check refuses the job for a
	// rule these counts do not show.
	Group         string
	Have, Minimum int32
	// Report, for a gang counted in sub-groups (minSubGroup), says what it needs and has, as
	// model.JobInfo.GangReport does; empty otherwise.
	Report string
	// Since is when it became short; Traced says the cluster's objects tell it (otherwise it
	// is when the scheduler first saw it short).
	Since  time.Time
	Traced bool
	// Grace is its staleness grace period and Disabled whether it is negative.
	Grace    time.Duration
	Disabled bool
	// EvictAt is Since+Grace: from then on the job is evicted.
	EvictAt time.Time
}

// Shortfall says what is short: "its gang has had 2 of the 3 pods it needs".
func (v Verdict) Shortfall() string {
	if v.Report != "" {
		return v.Report
	}
	if v.Group == "" {
		return "it has had fewer placed pods than its gang needs"
	}
	return fmt.Sprintf("its %s has had %d of the %d pods it needs", v.Group, v.Have, v.Minimum)
}

// judge tells whether job is short and since when, remembering the first sight of a short
// job without a trace.
func (a *Action) judge(job *model.JobInfo, now time.Time) Verdict {
	v := Judge(job, a.defaultGrace, now)
	if v.Short && !v.Traced {
		if seen, ok := a.firstSeen[job.ID]; ok {
			v.Since = seen
		} else {
			a.firstSeen[job.ID] = now
		}
		v.EvictAt = v.Since.Add(v.Grace)
	}
	return v
}

// Judge is the rule, a pure function of the job, the default grace period and now: a job
// with active pods but not the placed pods its gang needs (model.JobInfo.IsGangSatisfied, the
// gang check allocation uses) is short. A job some of whose pods succeeded is finishing, not
// short. A short job without a trace of when it became so is given now as its Since.
func Judge(job *model.JobInfo, defaultGrace time.Duration, now time.Time) Verdict {
	if job.CountActive() == 0 || job.SucceededPods > 0 || job.IsGangSatisfied() {
		return Verdict{}
	}
	// The decision is the gang check's; these counts only name what is short in messages.
	v := Verdict{Short: true, Group: "gang", Have: job.CountPlaced(), Minimum: job.MinMember, Grace: defaultGrace, Since: now}
	if job.CountsSubGroups() {
		// Counted in sub-groups, the gang is short of ready sub-groups, not of pods.
		summary, short := job.GangReport()
		v.Group, v.Report = "", "its gang "+summary
		if len(short) > 0 {
			v.Report += " (" + strings.Join(short, "; ") + ")"
		}
	} else if v.Have >= v.Minimum {
		v.Group = ""
		for _, sg := range job.SubGroups {
			if have := job.CountPlacedIn(sg.Name); v.Group == "" && have < sg.MinMember {
				v.Group, v.Have, v.Minimum = "sub-group "+sg.Name, have, sg.MinMember
			}
		}
	}
	if job.StalenessGracePeriod != nil {
		v.Grace = *job.StalenessGracePeriod
	}
	v.Disabled = v.Grace < 0
	if since, ok := shortSince(job); ok {
		v.Since, v.Traced = since, true
	}
	v.EvictAt = v.Since.Add(v.Grace)
	return v
}

// shortSince is the latest trace the cluster keeps of the job losing a pod in its current
// run: a pod of it that failed, or a replacement created after the pods still running. The
// latest, because an elastic job may lose pods above its minimum before the one that makes
// it short; counting from an earlier loss would evict it early.
func shortSince(job *model.JobInfo) (time.Time, bool) {
	_, _, runCreated := job.CurrentRun()
	var since time.Time
	if job.LastPodFailure.After(runCreated) {
		since = job.LastPodFailure
	}
	for _, p := range job.PendingPods() {
		if p.CreationTime.After(runCreated.Add(model.PodTimePrecision)) && p.CreationTime.After(since) {
			since = p.CreationTime
		}
	}
	return since, !since.IsZero()
}

// evict evicts the job's bound and running pods, saying why in each pod's event.
func (a *Action) evict(ctx context.Context, ssn *framework.Session, job *model.JobInfo, v Verdict) {
	reason := framework.NewStaleGangReason(fmt.Sprintf("%s since %s, longer than its staleness grace period %s",
		v.Shortfall(), v.Since.UTC().Format(time.RFC3339), v.Grace))
	if start, known, _ := job.CurrentRun(); known {
		reason.Note.Ran, reason.Note.RanKnown = ssn.Now().Sub(start), true
	}
	st := ssn.NewStatement()
	for _, pod := range job.Pods {
		if pod.Status != model.Running && pod.Status != model.Bound {
			continue
		}
		if err := st.Evict(pod, reason); err != nil {
			ssn.Logger().Error(err, "Evicting a stale gang failed", "job", job.ID)
			st.Discard()
			return
		}
	}
	if err := st.Commit(ctx); err != nil {
		// Nothing was evicted: the job stays short, counted from when it was first seen so,
		// and the next cycle tries again.
		ssn.Logger().Error(err, "Committing the eviction of a stale gang failed", "job", job.ID)
		return
	}
	ssn.Metrics().StaleGangEvicted()
	delete(a.firstSeen, job.ID)
	ssn.Logger().V(2).Info("Evicted a stale gang", "job", job.ID, "group", v.Group, "have", v.Have, "minimum", v.Minimum,
		"since", v.Since, "gracePeriod", v.Grace)
}
