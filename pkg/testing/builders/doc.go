// Package builders makes the Kubernetes objects tests need — Pods, PodGroups, Queues and
// Nodes — in the style of Kueue's test wrappers: MakePod(namespace, name) starts from a
// valid object of its kind, each option changes one thing and returns the wrapper, and Obj
// returns the object, so that a test's cluster reads like its description:
//
//	builders.MakePod("team", "train-0").PodGroup("train").GPUs(2).Node("n1").StartedAt(t).Obj()
//	builders.MakePodGroup("team", "train").Queue("research").MinMember(2).Obj()
//	builders.MakeQueue("research").GPUQuota(0).ReclaimMinRuntime(time.Hour).Obj()
//	builders.MakeNode("n1").GPUs(8).Obj()
//
// Every wrapper also has the options on metadata: Label, Annotation, NodePool, UID,
// Generation and CreatedAt. A wrapper embeds its object, so a test may set a field no option
// covers before it calls Obj.
//
// It is the one home of builders of Kubernetes objects, for every test that makes them: the
// unit tests of pkg/ (on fake clients and informer-fed stores), the integration, end-to-end
// and scale suites of test/ (on a real API server), and the property suite's manifests. It
// lives under pkg/, not test/, because pkg/'s tests import it and pkg/ never depends on
// test/ (whose packages start control planes and import the whole binary); and it imports
// only the API types, so that any package's own tests may use it without an import cycle.
//
// The scheduler-internal objects of the snapshot (api.NodeInfo, api.JobInfo, queues) have
// their builders in pkg/testing/harness, beside the harness that runs cycles on them;
// doubles of the framework's interfaces live in pkg/scheduler/framework/frameworktest.
package builders
