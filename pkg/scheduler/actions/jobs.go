package actions

import (
	"container/heap"
	"fmt"
	"maps"
	"slices"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// SchedulableJobs returns the jobs with pods waiting for a node (pending, or pipelined onto
// resources still being released) whose queue can take them, in ID order. Jobs whose queue
// is missing, invalid or not a leaf, and jobs refused (JobInfo.Refusal), get a pending
// reason instead.
func SchedulableJobs(ssn *framework.Session) []*model.JobInfo {
	var jobs []*model.JobInfo
	queues := ssn.Snapshot().Queues
	for _, job := range ssn.Snapshot().Jobs {
		if !job.IsWaiting() {
			continue
		}
		queue := queues.Get(job.Queue)
		switch {
		case queue == nil:
			ssn.RecordPendingReason(job.ID, fmt.Sprintf("queue %q does not exist, or belongs to another node pool", job.Queue))
		case !queue.IsValid():
			ssn.RecordPendingReason(job.ID, fmt.Sprintf("queue %q is invalid: %s", job.Queue, queue.Problem))
		case !queue.IsLeaf():
			ssn.RecordPendingReason(job.ID, fmt.Sprintf("queue %q has child queues; only leaf queues hold jobs", job.Queue))
		case job.Refusal != "":
			ssn.RecordPendingReason(job.ID, job.Refusal)
		default:
			jobs = append(jobs, job)
		}
	}
	return jobs
}

// GangPods returns the pending pods that would complete the job's gang, in the session's
// task order.
func GangPods(ssn *framework.Session, job *model.JobInfo) ([]*model.PodInfo, error) {
	return job.GangPods(ssn.TaskOrder)
}

// JobQueues holds the jobs still to serve, one heap per queue, so that actions serve queues
// in queue order and, within a queue, jobs in job order.
type JobQueues struct {
	ssn *framework.Session
	// queues are in name order, for a deterministic scan; Best scans them for every job
	// served, so each keeps its queue at hand rather than looking it up by name.
	queues []jobQueue
	index  map[string]int // queue name -> position in queues
}

// jobQueue is one queue's jobs still to serve.
type jobQueue struct {
	info *model.QueueInfo
	jobs *jobHeap
}

// NewJobQueues sorts jobs into per-queue heaps.
func NewJobQueues(ssn *framework.Session, jobs []*model.JobInfo) *JobQueues {
	heaps := map[string]*jobHeap{}
	less := func(l, r *model.JobInfo) bool { return ssn.JobOrder(l, r) < 0 }
	for _, job := range jobs {
		h := heaps[job.Queue]
		if h == nil {
			h = &jobHeap{less: less}
			heaps[job.Queue] = h
		}
		heap.Push(h, job) // one by one, as before: the layout matters if a job's order changes as it waits
	}
	q := &JobQueues{ssn: ssn, index: make(map[string]int, len(heaps))}
	for _, name := range slices.Sorted(maps.Keys(heaps)) {
		q.index[name] = len(q.queues)
		q.queues = append(q.queues, jobQueue{info: ssn.Snapshot().Queues.Get(name), jobs: heaps[name]})
	}
	return q
}

// Best returns the first queue in queue order that still has jobs, or nil. Each queue is
// compared with the job it would serve next.
func (q *JobQueues) Best() *model.QueueInfo {
	var best framework.QueueTurn
	for _, jq := range q.queues {
		if jq.jobs.Len() == 0 {
			continue
		}
		turn := framework.QueueTurn{Queue: jq.info, Job: jq.jobs.items[0]}
		if best.Queue == nil || q.ssn.QueueOrder(turn, best) < 0 {
			best = turn
		}
	}
	return best.Queue
}

// Pop removes and returns the first job of a queue.
func (q *JobQueues) Pop(queue *model.QueueInfo) *model.JobInfo {
	return heap.Pop(q.heapOf(queue.Name)).(*model.JobInfo)
}

// Push returns a job to its queue's heap.
func (q *JobQueues) Push(job *model.JobInfo) {
	heap.Push(q.heapOf(job.Queue), job)
}

// heapOf is the queue's heap; only queues that held jobs at the start have one.
func (q *JobQueues) heapOf(name string) *jobHeap {
	i, ok := q.index[name]
	if !ok {
		panic(fmt.Sprintf("JobQueues: queue %q held no jobs to serve", name))
	}
	return q.queues[i].jobs
}

// jobHeap is a container/heap of jobs.
type jobHeap struct {
	items []*model.JobInfo
	less  func(l, r *model.JobInfo) bool
}

func (h *jobHeap) Len() int           { return len(h.items) }
func (h *jobHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *jobHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *jobHeap) Push(x any)         { h.items = append(h.items, x.(*model.JobInfo)) }
func (h *jobHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}

// Next pops the first job of the first queue, or returns nil when all are served.
func (q *JobQueues) Next() *model.JobInfo {
	queue := q.Best()
	if queue == nil {
		return nil
	}
	return q.Pop(queue)
}
