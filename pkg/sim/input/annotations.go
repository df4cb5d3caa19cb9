package input

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// annotationPrefix starts the key of every simulation annotation.
const annotationPrefix = "sim.kai.scheduler/"

// The simulation annotations; annotationKinds says which object each is read on.
const (
	// SubmitAtAnnotation: when the job is submitted, from the start (default 0). Negative for
	// a job submitted before the start, as a snapshot of a cluster writes its jobs: the
	// scheduler sees it as that old.
	SubmitAtAnnotation = annotationPrefix + "submit-at"
	// RunningForAnnotation: the job is running when the simulation starts, and has been for
	// this long; its pods that name a node (spec.nodeName) run there from the start. Its
	// min-runtime protection counts from its start, as on the cluster it came from.
	RunningForAnnotation = annotationPrefix + "running-for"
	// DurationAnnotation: the useful work the job needs to finish (default: never finishes).
	DurationAnnotation = annotationPrefix + "duration"
	// StartupAnnotation: time after each start before useful work begins (default 0).
	StartupAnnotation = annotationPrefix + "startup"
	// CheckpointIntervalAnnotation: useful work is saved every interval (default: never).
	CheckpointIntervalAnnotation = annotationPrefix + "checkpoint-interval"
	// FailAfterAnnotation, on a Pod: the pod fails this long after it first runs, once (its
	// replacements do not). Its job is left short of its gang until none of its pods is on a
	// node any more (stalegangeviction evicts them, for instance): the workload then
	// recreates the failed pod with the others.
	FailAfterAnnotation = annotationPrefix + "fail-after"
)

// annotationKinds is every simulation annotation and the kind of object it is read on: the
// one list a key under annotationPrefix is checked against, so that a misspelt one (a
// "durration" that would leave the job running forever) is an error, never ignored.
var annotationKinds = map[string]string{
	SubmitAtAnnotation: "PodGroup", RunningForAnnotation: "PodGroup", DurationAnnotation: "PodGroup",
	StartupAnnotation: "PodGroup", CheckpointIntervalAnnotation: "PodGroup", FailAfterAnnotation: "Pod",
}

// checkSimulationKeys refuses what kai-sim would otherwise silently ignore among an object's
// keys under annotationPrefix: an annotation it does not know (naming the closest it does),
// one on a kind it is not read on, and a label (kai-sim reads only annotations). line finds
// the file line a key is written on (0: not found), for the message.
func checkSimulationKeys(kind string, meta *metav1.ObjectMeta, line func(key string) int) error {
	return checkKeys(kind, meta, line, func(readOn string) bool { return readOn == kind }, "")
}

// checkWorkloadSimulationKeys checks a workload's keys as checkSimulationKeys does: its
// annotations are its PodGroup's (the pod grouper copies them), so a PodGroup's settings are
// read on it, and a misspelt one is named as on a PodGroup.
func checkWorkloadSimulationKeys(kind string, meta *metav1.ObjectMeta, line func(key string) int) error {
	return checkKeys(kind, meta, line, func(readOn string) bool { return readOn == "PodGroup" }, "")
}

// checkPodSimulationKeys checks a pod's keys; one read on a PodGroup may instead go on the
// pod's workload, when it has one.
func checkPodSimulationKeys(pod *v1.Pod, line func(key string) int) error {
	hint := ""
	if metav1.GetControllerOfNoCopy(pod) != nil {
		hint = ", or to the workload at the top of the pod's owners, whose annotations its PodGroup carries"
	}
	return checkKeys("Pod", &pod.ObjectMeta, line, func(readOn string) bool { return readOn == "Pod" }, hint)
}

// checkKeys refuses the keys under annotationPrefix that kai-sim would ignore on an object of
// kind: readHere says whether an annotation read on a kind is read on this one; workloadHint
// follows the advice to move a PodGroup's annotation.
func checkKeys(kind string, meta *metav1.ObjectMeta, line func(key string) int, readHere func(readOn string) bool, workloadHint string) error {
	at := func(key string) string {
		if n := line(key); n > 0 {
			return fmt.Sprintf("line %d: ", n)
		}
		return ""
	}
	for _, key := range slices.Sorted(maps.Keys(meta.Labels)) {
		if strings.HasPrefix(key, annotationPrefix) {
			return fmt.Errorf("%smetadata.labels.%s: kai-sim reads its settings from annotations, not labels: move it to metadata.annotations",
				at(key), key)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(meta.Annotations)) {
		if !strings.HasPrefix(key, annotationPrefix) {
			continue
		}
		readOn, known := annotationKinds[key]
		switch {
		case !known:
			return fmt.Errorf("%smetadata.annotations.%s: kai-sim has no such annotation; did you mean %s? (it reads %s)",
				at(key), key, closestAnnotation(key), strings.Join(slices.Sorted(maps.Keys(annotationKinds)), ", "))
		case !readHere(readOn):
			hint := ""
			if readOn == "PodGroup" {
				hint = workloadHint
			}
			return fmt.Errorf("%smetadata.annotations.%s: kai-sim reads it on a %s, not on a %s: move it there%s",
				at(key), key, readOn, kind, hint)
		}
	}
	return nil
}

// closestAnnotation is the known simulation annotation nearest to key by edit distance (the
// first in name order of equals).
func closestAnnotation(key string) string {
	best, bestDistance := "", -1
	for _, known := range slices.Sorted(maps.Keys(annotationKinds)) {
		if d := editDistance(key, known); bestDistance < 0 || d < bestDistance {
			best, bestDistance = known, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b: the fewest single-character
// insertions, deletions and substitutions that turn one into the other.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	previous := make([]int, len(y)+1)
	current := make([]int, len(y)+1)
	for j := range previous {
		previous[j] = j
	}
	for i := 1; i <= len(x); i++ {
		current[0] = i
		for j := 1; j <= len(y); j++ {
			substitution := previous[j-1]
			if x[i-1] != y[j-1] {
				substitution++
			}
			current[j] = min(previous[j]+1, current[j-1]+1, substitution)
		}
		previous, current = current, previous
	}
	return previous[len(y)]
}
