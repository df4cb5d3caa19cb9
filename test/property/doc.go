// Package property is a randomized property test of the scheduler as a whole. From a seed it
// generates a small cluster — nodes, a queue tree with min-runtimes set, unset or "0s" at
// every level, gangs, elastic jobs, sub-groups and gangs counted in sub-groups (minSubGroup:
// k of a job's replicas needed, now and then none), and in two scenarios out of five placement
// features: dedicated taints and tolerations, zone labels with node selectors and required
// node affinity, FPGAs (example.com/fpga) and nodes that take few pods, and for about a third
// of the jobs a preemption delay (spec field, PodGroup annotation or pod annotation), and in
// half of the scenarios escalating protection (escalationFactor 1, 1.5, 2 or 3,
// escalationCeiling 30s to 10m; about half of their jobs start with runs ended before, in
// their PodGroup's status.evictions), in a third of the scenarios escalation per queue (a
// third of the queues, leaves or not, with a kai.scheduler/escalation-factor annotation, an
// escalation-ceiling one (0s to 10m) or both: a factor of 1 that turns the arguments off, a
// factor with no ceiling on its path, which is off, a ceiling that bounds a factor from
// elsewhere; prior counts as above when the arguments drew none), and in half of the
// scenarios a checkpoint claim on half
// of the jobs (the last-checkpoint-timestamp annotation: before the job starts, during its
// runs, far ahead, or unreadable; jobs with a checkpoint interval report their own too, as
// kai-sim's workloads do), and in a third of the scenarios GPU sharing (shares.go): about
// three nodes in four labelled with their devices' memory (nvidia.com/gpu.memory, in MiB or
// in bytes, 16 to 80 GiB), and about half of the jobs, default-queue notebooks among them,
// asking per pod for part of a GPU instead of whole GPUs — a fraction of 0.1 to 0.9
// (gpu-fraction), in one job in four device memory instead (gpu-memory, 2,000 to 60,000 MiB: only
// devices that large hold it), of one device or in one job in four of two
// (gpu-fraction-num-devices, now and then written as 1) — beside whole-GPU jobs, so that
// reclaim and preempt meet shares as victims and as preemptors, protected or not, and in
// half of the scenarios consolidation (consolidation.go): listed after allocate, as
// upstream's default order has it, moving at most 0 (off), 1, 2 or by default 16 jobs a
// cycle (kai-sim's --max-consolidation-preemptees), in half of them with pods spread over
// the nodes (nodeplacement's gpu: spread), and in half of them with one-GPU jobs on every
// untainted node and then a job that needs the largest of them whole, which a move makes
// room for, and in a quarter of the scenarios topology-aware gangs (topology.go): the cluster
// grown to four to eight nodes, a Topology dc of zones and racks (in one in four, racks
// alone; levels aliased zone and rack in half of them, the alias zone beside placement's own
// label zone), the nodes labelled in an order drawn into zones of one to three racks of one to
// four nodes, rack names starting again in each zone in half of them (only the zone tells
// those racks apart), and in half of them a node, now and then two, left outside (unlabelled,
// or with a zone but no rack), and about a third of the jobs with a topologyConstraint — a
// required rack, a required zone, a required zone with a preferred rack, or a preference
// alone (a rack, now and then a zone) — each level named by its alias or its label; no
// sub-group carries one
// — as kai-sim manifest text plus a scheduler configuration, runs it
// with pkg/sim, and judges the timeline with an oracle written apart from the scheduler: it
// resolves min-runtimes itself from the design rules (escalation included, counting from the
// timeline the runs preempt and reclaim ended), judges placement with Kubernetes' own helpers
// (k8s.io/component-helpers), and imports nothing under pkg/scheduler, so a mistake shared by
// both cannot hide.
//
// Every generated job can run on its own: its gang fits on the empty cluster, on the nodes
// its pods may use (a share's on their devices: as many as fit on one device, taken one or n
// at a time; a memory share only where devices are that large), and within its queues'
// limits, a share charged the most it may take; a job with a required level fits so inside
// one domain of that level (else it keeps its preferred level alone, or no constraint). The
// oracle counts GPUs its own way, from the timeline: a share is its part of a device times
// its devices (0.5 GPU; a memory share ceil(MiB*100/device MiB)/100 of a device, on the node
// it is bound to), in every property that counts GPUs (Q1 to Q3, L1's equal requests), and
// the devices each pod holds are those its Bind event names (gpuDevices), held while it is
// bound and, evicted, until its grace period ends. The properties (oracle.go, devices.go,
// topology.go, by id):
//
//	S0  consistent timeline: a pod is bound once, evicted only while bound, every eviction
//	    names its action and preemptor
//	S1  min-runtime safety: no eviction before run start + the resolved min-runtime, except
//	    surplus pods of an elastic job that keeps its minimums; resolved means the queues'
//	    value (or the default), escalated for the runs of the job that preempt or reclaim
//	    ended before this one (a decision that took all its bound pods; its PodGroup's prior
//	    count added; a consolidation move is not counted) by its queue's escalation (factor
//	    and ceiling each from the nearest queue up its path that annotates it, else the
//	    plugin's arguments; a factor above 1 with no ceiling is off), then shortened by its
//	    own annotation. A consolidation move is an eviction: the victim is held to the longer
//	    of its preempt min-runtime and, when the preemptor's leaf queue is another, its
//	    reclaim min-runtime against that queue, each resolved so
//	S2  only preemptible victims
//	S3  action rules: preempt within a leaf queue and down in priority, reclaim across queues,
//	    consolidation for a preemptible job only, moving jobs of any queue whose priority is
//	    not above its own, never the job itself
//	S4  preemption delay: no eviction (a move included) for a preemptor before the later of
//	    its submission and its last eviction (by preempt, reclaim or consolidation) plus its
//	    delay
//	S5  stale evictions (stalegangeviction, run with a 1s grace period) only of a job with
//	    fewer bound pods than its minimum, or a sub-group with fewer than its own, for no
//	    preemptor; they are not judged by S1, P1 or P2. In one job out of five one pod fails
//	    once (kai-sim's fail-after); a job is also short when reclaim or preempt evict a gang
//	    but not the surplus pod allocate bound in the same cycle
//	K1  placement: every bind tolerates the node's NoSchedule/NoExecute taints and matches its
//	    node selector and required node affinity; the pods holding a node, bound or still
//	    terminating, never exceed its allocatable in any resource or in pods
//	G1  gang kept: a gang with pods on nodes always has its minMember pods, or, counted in
//	    sub-groups, minSubGroup sub-groups at their own minimum (S1 judges a protected one's
//	    shrink the same way)
//	P1  no thrash: a job is not evicted (or moved) twice for one preemptor before that
//	    preemptor starts
//	P2  promise kept: a preemptor (consolidation's too) starts within its victims' grace
//	    period plus two cycles
//	C1  moves per cycle: no cycle (one time of the timeline) moves more distinct jobs by
//	    consolidation than --max-consolidation-preemptees allows (16 when unset), and none
//	    moves any when it is 0 or consolidation is not configured. Whether every moved pod
//	    fitted elsewhere when the move was planned is not judged (the oracle models neither
//	    node fit nor queue limits); a move that cannot come back shows as a loop (P3)
//	L1  least lost work first: when reclaim or preempt evicts a one-pod job, no one-pod job of
//	    the same queue, priority and request on the same node (a share: on the same devices),
//	    unprotected and left running, has saved its work later (its checkpoint, reported by
//	    kai-sim's workload or claimed by the scenario, clamped to [start of its run, now];
//	    else its start); the name breaks a tie. Consolidation moves are not judged: which
//	    victims a move takes depends too on where they fit again, which the oracle does not
//	    model
//	P3  liveness: every job completes before the horizon
//	E1  protection ends at its ceiling: an eviction that time alone allowed (its cycle's
//	    first decision, after a period in which no pod was bound, evicted, started, failed or
//	    gone and no job was submitted or completed) comes within a period of the end of a
//	    protection of a job the preemptor could take by that action (S3; a move too), as S1
//	    resolves it (escalation never past the ceiling), or of the preemptor's delay. With
//	    P2, an owner held back by protection gets its quota within that end plus its
//	    victims' grace and two cycles.
//	    Evictions after a change are not judged: the oracle, which models neither fair share
//	    nor node fit, cannot tell whether the change or a protection's end made them possible
//	Q1  no reclaim from a queue within its quota (consolidation, which takes nothing from a
//	    queue, is not judged by Q1 and Q2): a reclaim takes from a queue (the branch
//	    beside the reclaimer's under their lowest common ancestor) only while it holds more
//	    GPUs than it deserves (its quota, -1 all its parent has, capped by what it asks for and
//	    its limit), judged where a lower bound of that proves it (quota.go)
//	Q2  a reclaim stops at the quota: it leaves a queue below what it deserves only by the
//	    last job it took, one whose return would take the queue above it again
//	Q3  an owed job gets it (the quota family only): a pending job whose gang keeps every
//	    queue of its path within its quota is bound, or has victims evicted for it, in the
//	    first cycle in which free GPUs and what queues beside its own hold above their quotas,
//	    unprotected, can hold it — for a job with a required level, counted on the nodes of
//	    one domain of that level: the cluster's totals may hold a gang that no domain does.
//	    Q3 is the one property that assumed a job fits wherever the cluster's totals fit: P3
//	    rests on the generator's promise (each job fits one domain of its level), E1 and P2
//	    on no count of room, and Q1, Q2 and L1 on what a queue or a node holds
//	D1  no device over one: the shares a device holds (bound or terminating) never add up to
//	    more than one whole device
//	D2  a whole device alone: a device given whole (a whole-GPU pod's) holds no share and no
//	    other pod, and a whole-GPU pod never gets a device a share or another pod still holds:
//	    a device comes back whole only once its last share has gone
//	D3  devices as asked: a bind's gpuDevices are as many distinct devices of its node as the
//	    pod asks for (its whole GPUs, or its share's devices), and a memory share's are on a
//	    node whose devices have that much memory
//	T1  a gang in one domain (topology.go): a job with a required level never has bound pods
//	    in two domains of that level at once (a domain: the nodes sharing the values of that
//	    level's label and every wider one's), nor on a node outside the topology (one lacking
//	    any level's label); bound is from its Bind to its eviction, failure or completion, and
//	    pods join a job only by binds, so T1 is judged at each. A preference alone is soft:
//	    not judged
//	T2  evictions in the preemptor's domain: for each decision (one cycle's evictions by one
//	    action for one preemptor with a required level) there is a domain of that level that
//	    holds every pod taken from a job left with pods bound, and a pod of every job evicted
//	    whole (a gang taken whole loses its pods on other nodes too, even outside the
//	    topology: the search takes its unit where it runs in the domain); it is the domain of
//	    the preemptor's pods already bound and of the decisions for it before, which it has
//	    not bound since, and the preemptor binds there. Victims from under a queue limit of
//	    the preemptor's path are not judged while its gang would take that queue over its
//	    limit (an upper bound of what the queue holds, terminating pods included): the search
//	    then takes units from under it wherever they run to bring it under (coverLimits), and
//	    the generator draws such limits. A consolidation move is never planned past a limit,
//	    so all its victims are judged
//	    determinism: the same seed gives the same scenario and byte-identical results
//	    run: kai-sim ran to the horizon; it stops a run whose bind a node could not honour
//	    (its device plugin's check), and the seed's scenario is kept as for any failure
//
// lostwork.go generates a second family (TestLeastLostWork): many one-pod borrowers that ask
// the same, with their own startups, checkpoint intervals and claims, reclaimed by an owner
// and now and then preempted, where L1 has pairs to judge; every property is checked on it.
//
// The lost-work and quota families keep whole GPUs (Q3 needs GPUs all alike); shares meet
// them in TestProperties, and through Generate in TestSkippedCyclesDecideNothing and
// TestNodePoolsScheduleAsIfAlone.
//
// quotafamily.go generates a third family (TestOwedQuotas): GPUs all alike, a borrower that
// fills the cluster, owners whose quotas often add up to more than the cluster (now and then
// -1) wanting them back, and default-queue notebooks throughout, where Q3 has owed jobs to
// judge; in a quarter of its scenarios each node is a rack of a Topology (now and then one
// outside) and a third of the jobs are constrained as above, where Q3 judges owed jobs with
// a required level; every property is checked on it.
//
// pools_test.go runs pairs of generated clusters as two node pools of one cluster, each with
// its own configuration: each pool must decide exactly what its cluster decides alone.
//
// This directory owns the generators (generator.go, placement.go, shares.go, lostwork.go,
// quotafamily.go, consolidation.go, topology.go), the oracle (oracle.go, quota.go for the
// quota rules, devices.go for the devices, consolidation.go for C1, topology.go for T1 and
// T2, reading domains from the scenario's node labels itself) and the tests
// (property_test.go, oracle_test.go, devices_test.go, consolidation_test.go,
// topology_test.go). Run:
//
//	go test ./test/property/ -count=1                 # seeds 1..300
//	PROPERTY_SEEDS=2000 go test ./test/property/      # more seeds
//	PROPERTY_SEED=17 go test ./test/property/ -v      # one seed, with its failures
//
// A failing seed leaves its scenario and configuration in a directory under os.TempDir and
// prints the kai-sim command that replays it.
package property
