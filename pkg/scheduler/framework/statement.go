package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/placement"
)

type operationKind int

const (
	opAllocate operationKind = iota
	opPipeline
	opNominate
	opEvict
	opWithdraw
)

// operation is one recorded decision and what it replaced, so it can be undone exactly.
type operation struct {
	kind       operationKind
	pod        *model.PodInfo
	fromStatus model.PodStatus
	fromNode   string
	// fromEvictedFor and fromMoved are the pod's EvictedFor and Moved before an eviction set
	// them, fromPromisedAt its PromisedAt before a pipeline or nomination set it.
	fromEvictedFor model.JobID
	fromMoved      bool
	fromPromisedAt int64
	// fromGroups and fromRequest are a share pod's devices and request before a placement
	// chose them (a share asked in memory is charged what it takes of the node's devices).
	fromGroups  []string
	fromRequest model.Resources
	reason      EvictionReason
}

// Statement records an action's decisions on the session. Each decision changes the
// session's snapshot at once, so that later decisions see it; Rollback and Discard undo
// decisions in reverse order, and Commit hands them to Effects.
type Statement struct {
	ssn *Session
	ops []operation
}

// Checkpoint marks a point a statement can roll back to.
type Checkpoint int

// NewStatement starts an empty statement on the session.
func (ssn *Session) NewStatement() *Statement {
	return &Statement{ssn: ssn}
}

// Allocate gives a pending pod idle resources on a node that no promise counts on.
func (st *Statement) Allocate(pod *model.PodInfo, nodeName string) error {
	node, err := st.pendingPodAndNode(pod, nodeName)
	if err != nil {
		return err
	}
	op := operation{kind: opAllocate, pod: pod}
	if err := st.fit(&op, node, node.Bindable(), false, "allocate", "free to bind"); err != nil {
		return err
	}
	return st.place(op, model.Allocated, nodeName)
}

// Keep binds a pod of the promise its job was made at promisedAt (Unix seconds; withdrawn in this
// statement, to be placed anew) onto a node it was promised, into what the promise may bind
// there now (NodeInfo.BindableToPromise): promises are kept first come, first served.
func (st *Statement) Keep(pod *model.PodInfo, nodeName string, promisedAt int64) error {
	node, err := st.pendingPodAndNode(pod, nodeName)
	if err != nil {
		return err
	}
	op := operation{kind: opAllocate, pod: pod}
	if err := st.fit(&op, node, node.BindableToPromise(pod.Job, promisedAt), false, "keep the promise of", "free to bind"); err != nil {
		return err
	}
	return st.place(op, model.Allocated, nodeName)
}

// Pipeline places a pending pod, for this cycle, onto resources that pods on the node are
// releasing: the rest of the cycle counts on them for it, the next cycle places it anew.
func (st *Statement) Pipeline(pod *model.PodInfo, nodeName string) error {
	return st.pipeline(pod, nodeName, opPipeline)
}

// Nominate is Pipeline for a preemptor: the resources its victims release on the node are
// promised to it until it binds, across cycles (see Effects.Nominate).
func (st *Statement) Nominate(pod *model.PodInfo, nodeName string) error {
	return st.pipeline(pod, nodeName, opNominate)
}

func (st *Statement) pipeline(pod *model.PodInfo, nodeName string, kind operationKind) error {
	node, err := st.pendingPodAndNode(pod, nodeName)
	if err != nil {
		return err
	}
	op := operation{kind: kind, pod: pod, fromPromisedAt: pod.PromisedAt}
	if err := st.fit(&op, node, node.FutureIdle(), true, "pipeline", "once released"); err != nil {
		return err
	}
	// To the second, as the pod's condition records it: a promise read back must stand where
	// it stood among the others when it was made. A placement for this cycle is no promise.
	pod.PromisedAt = 0
	if kind == opNominate {
		pod.PromisedAt = st.ssn.now.Unix()
	}
	if err := st.place(op, model.Pipelined, nodeName); err != nil {
		pod.PromisedAt = op.fromPromisedAt
		return err
	}
	return nil
}

// fit checks that the pod fits in free on the node — a share pod's shares on the node's
// devices, withReleasing counting what releasing shares hold as room — and, for a share pod,
// chooses its devices (recorded in op, so that a rollback restores what it had). verb and
// freeIs word the error.
func (st *Statement) fit(op *operation, node *model.NodeInfo, free model.Resources, withReleasing bool, verb, freeIs string) error {
	pod := op.pod
	request := pod.Request
	if !pod.IsShare() {
		if !request.FitsIn(free) {
			name, _ := request.Shortage(free)
			return fmt.Errorf("%s %s: %s on node %s (needs %s, %s %s)", verb, pod.Key(), placement.InsufficientReason(name), node.Name, request, free, freeIs)
		}
		return nil
	}
	if rest := request.With(model.GPU, 0); !rest.FitsIn(free) {
		name, _ := rest.Shortage(free)
		return fmt.Errorf("%s %s: %s on node %s (needs %s, %s %s)", verb, pod.Key(), placement.InsufficientReason(name), node.Name, rest, free, freeIs)
	}
	choice, ok := node.PlaceShare(pod, free, withReleasing, st.ssn.DeviceOrder(pod, node))
	if !ok {
		return fmt.Errorf("%s %s: %s on node %s", verb, pod.Key(), placement.ShareRefusal(pod, node, free, withReleasing), node.Name)
	}
	op.fromGroups, op.fromRequest = pod.GPUGroups, pod.Request
	groups := make([]string, 0, pod.Share.Devices)
	groups = append(groups, choice.Groups...)
	for i := range choice.Fresh {
		groups = append(groups, model.NewGPUGroupID(node.Name, pod.UID, i))
	}
	pod.GPUGroups = groups
	pod.Request = pod.Request.With(model.GPU, choice.Portion*int64(pod.Share.Devices))
	return nil
}

// place applies a placement fit chose; a failure restores the share pod's devices.
func (st *Statement) place(op operation, status model.PodStatus, nodeName string) error {
	if err := st.apply(op, status, nodeName); err != nil {
		if op.pod.IsShare() {
			op.pod.GPUGroups, op.pod.Request = op.fromGroups, op.fromRequest
		}
		return err
	}
	return nil
}

// Withdraw takes back the promise made to a pipelined pod: it is pending again, free to be
// placed anew in this session. Committed, a withdrawal is only sent out for a pod that is
// still pending at the end; one placed again is told its new placement instead.
func (st *Statement) Withdraw(pod *model.PodInfo) error {
	if pod.Status != model.Pipelined {
		return fmt.Errorf("withdraw %s: only pipelined pods hold a promise, it is %s", pod.Key(), pod.Status)
	}
	return st.apply(operation{kind: opWithdraw, pod: pod}, model.Pending, "")
}

// Evict starts releasing a bound or running pod.
func (st *Statement) Evict(pod *model.PodInfo, reason EvictionReason) error {
	if pod.Status != model.Running && pod.Status != model.Bound {
		return fmt.Errorf("evict %s: only bound or running pods can be evicted, it is %s", pod.Key(), pod.Status)
	}
	op := operation{kind: opEvict, pod: pod, reason: reason, fromEvictedFor: pod.EvictedFor, fromMoved: pod.Moved}
	pod.EvictedFor = reason.Preemptor // what it releases is its preemptor's (see NodeInfo.Bindable)
	pod.Moved = reason.Action.Moves()
	if err := st.apply(op, model.Releasing, pod.NodeName); err != nil {
		pod.EvictedFor, pod.Moved = op.fromEvictedFor, op.fromMoved
		return err
	}
	return nil
}

func (st *Statement) pendingPodAndNode(pod *model.PodInfo, nodeName string) (*model.NodeInfo, error) {
	if pod.Status != model.Pending {
		return nil, fmt.Errorf("pod %s is %s, not pending", pod.Key(), pod.Status)
	}
	node := st.ssn.snapshot.Node(nodeName)
	if node == nil {
		return nil, fmt.Errorf("pod %s: unknown node %q", pod.Key(), nodeName)
	}
	// Whatever an action decided, a pod never goes where kube-scheduler would refuse it.
	if err := placement.Refusal(pod, node); err != nil {
		return nil, fmt.Errorf("pod %s on node %s: %w", pod.Key(), nodeName, err)
	}
	return node, nil
}

func (st *Statement) apply(op operation, status model.PodStatus, nodeName string) error {
	op.fromStatus, op.fromNode = op.pod.Status, op.pod.NodeName
	if err := st.ssn.snapshot.SetPodStatus(op.pod, status, nodeName); err != nil {
		return err
	}
	st.ops = append(st.ops, op)
	st.ssn.podStatusChanged(op.pod, op.fromStatus)
	return nil
}

// Checkpoint returns the current position for a later Rollback.
func (st *Statement) Checkpoint() Checkpoint {
	return Checkpoint(len(st.ops))
}

// Rollback undoes, newest first, every decision made after the checkpoint.
func (st *Statement) Rollback(cp Checkpoint) {
	for i := len(st.ops) - 1; i >= int(cp); i-- {
		op := st.ops[i]
		// Undoing restores a state the snapshot held before, so it cannot fail.
		from := op.pod.Status
		if op.kind == opEvict {
			op.pod.EvictedFor = op.fromEvictedFor
		}
		_ = st.ssn.snapshot.SetPodStatus(op.pod, op.fromStatus, op.fromNode)
		st.ssn.podStatusChanged(op.pod, from)
		// After the listeners: they undo what they counted for the pod as it was placed (or
		// moved: a moved pod's queue keeps holding it).
		if op.kind == opEvict {
			op.pod.Moved = op.fromMoved
		}
		if op.kind == opPipeline || op.kind == opNominate {
			op.pod.PromisedAt = op.fromPromisedAt
		}
		if op.pod.IsShare() && op.kind != opEvict && op.kind != opWithdraw {
			op.pod.GPUGroups, op.pod.Request = op.fromGroups, op.fromRequest
		}
	}
	st.ops = st.ops[:cp]
}

// Discard undoes every decision of the statement.
func (st *Statement) Discard() {
	st.Rollback(0)
}

// IsEmpty reports whether the statement holds no decisions.
func (st *Statement) IsEmpty() bool {
	return len(st.ops) == 0
}

// Commit hands the decisions to the session's effects: promises first, then evictions (they
// free resources), then binds, then placements pipelined for the cycle, then withdrawn
// promises of pods left pending, then the start stamps of jobs that went from no active pods
// to a placed gang. A pod whose bind fails keeps its resources for the rest of the cycle
// (the bind may have landed after all) and its job is not stamped. All failures are
// returned together.
func (st *Statement) Commit(ctx context.Context) error {
	effects := st.ssn.effects
	ops := st.ops
	st.ops = nil
	var errs []error
	started := st.jobsStartedBy(ops)
	failedBind := map[model.JobID]bool{}
	// A promise written without its evictions (they failed, or the scheduler stopped) is found
	// over-promised next cycle and withdrawn; evictions without their promise would hand what
	// they free to anyone, the victim first.
	for _, kind := range []operationKind{opNominate, opEvict, opAllocate, opPipeline, opWithdraw} {
		for _, op := range ops {
			if op.kind != kind || (kind == opWithdraw && op.pod.Status != model.Pending) {
				continue
			}
			var err error
			switch kind {
			case opEvict:
				if err = effects.Evict(ctx, op.pod, op.reason); err == nil {
					st.ssn.evicted(op.pod.Job)
				}
			case opAllocate:
				if err = effects.Bind(ctx, op.pod, op.pod.NodeName); err != nil {
					failedBind[op.pod.Job] = true
				}
			case opPipeline:
				err = effects.Pipeline(ctx, op.pod, op.pod.NodeName)
			case opNominate:
				err = effects.Nominate(ctx, op.pod, op.pod.NodeName)
			case opWithdraw:
				err = effects.CancelPipeline(ctx, op.pod)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, job := range started {
		if failedBind[job.ID] {
			continue // part of the gang is not bound: the job has not started
		}
		at := st.ssn.now
		job.LastStartTimestamp = &at
		if err := effects.RecordJobStart(ctx, job, at); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// jobsStartedBy returns, in first-allocation order, the jobs that had no active pod before
// these operations and have one after them.
func (st *Statement) jobsStartedBy(ops []operation) []*model.JobInfo {
	allocatedHere := map[model.JobID]int32{}
	var order []model.JobID
	for _, op := range ops {
		if op.kind != opAllocate {
			continue
		}
		if _, seen := allocatedHere[op.pod.Job]; !seen {
			order = append(order, op.pod.Job)
		}
		allocatedHere[op.pod.Job]++
	}
	var started []*model.JobInfo
	for _, id := range order {
		job := st.ssn.snapshot.Job(id)
		if job != nil && job.CountActive() == allocatedHere[id] {
			started = append(started, job)
		}
	}
	return started
}
