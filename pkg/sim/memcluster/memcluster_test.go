package memcluster

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
)

// A remembered patch is applied to each object as its own copy: two PodGroups given the same
// condition do not share it, so a later change to one leaves the other as it was.
func TestRememberedPatchesAreNotShared(t *testing.T) {
	c := New(nil, nil, nil, nil, nil)
	a, b := &v2alpha2.PodGroup{}, &v2alpha2.PodGroup{}
	data := []byte(`{"status":{"schedulingConditions":[{"type":"UnschedulableOnNodePool","status":"True","message":"m","reasons":[{"reason":"Unschedulable","message":"m"}]}]}}`)
	if !c.applyPodGroupPatch(a, data) || !c.applyPodGroupPatch(b, data) {
		t.Fatal("a conditions patch was not applied directly")
	}
	if len(c.groupPatches) != 1 {
		t.Fatalf("the same patch was decoded %d times, want once", len(c.groupPatches))
	}
	a.Status.SchedulingConditions[0].Reasons[0].Message = "changed"
	if got := b.Status.SchedulingConditions[0].Reasons[0].Message; got != "m" {
		t.Fatalf("changing one PodGroup's condition changed the other's to %q", got)
	}
	if c.applyPodGroupPatch(a, []byte(`{"spec":{"minMember":3}}`)) {
		t.Fatal("a patch of other fields was applied as a conditions patch")
	}
}

// The status updater's min-runtime patches take the fast path, and it leaves the PodGroup
// as a real merge would: a note, a queue and an end shown before are removed, null clears
// all. A patch naming only some fields is left to the real merge.
func TestMinRuntimePatchesApplyAsAMergeWould(t *testing.T) {
	before := `{"status":{"minRuntime":{"start":"2026-01-01T00:00:00Z","startNote":"old note","protectedUntil":"2026-01-01T00:01:00Z","reclaimUntil":"2026-01-01T00:01:00Z",` +
		`"preempt":{"minRuntime":"1m0s","setBy":"team","until":"2026-01-01T00:01:00Z"},"reclaim":[{"fromOutside":"team","minRuntime":"1m0s","until":"2026-01-01T00:01:00Z"}]}}}`
	patches := []string{
		`{"status":{"minRuntime":{"start":"2026-01-01T01:00:00Z","startNote":null,"protectedUntil":"2026-01-01T01:02:00Z","reclaimUntil":null,` +
			`"preempt":{"minRuntime":"2m0s","setBy":null,"escalatedFrom":null,"until":"2026-01-01T01:02:00Z"},"reclaim":[]}}}`,
		`{"status":{"minRuntime":{"start":"2026-01-01T01:00:00Z","startNote":null,"protectedUntil":"2026-01-01T01:30:00Z","reclaimUntil":"2026-01-01T01:30:00Z",` +
			`"preempt":{"minRuntime":"0s","setBy":"team","escalatedFrom":null,"until":null},"reclaim":[{"fromOutside":"team","minRuntime":"30m0s","until":"2026-01-01T01:30:00Z"}]}}}`,
		`{"status":{"minRuntime":{"start":"2026-01-01T01:00:00Z","startNote":null,"protectedUntil":"2026-01-01T01:04:00Z","reclaimUntil":"2026-01-01T01:30:00Z",` +
			`"preempt":{"minRuntime":"4m0s","setBy":"team","escalatedFrom":"1m0s","until":"2026-01-01T01:04:00Z"},"reclaim":[{"fromOutside":"team","minRuntime":"30m0s","until":"2026-01-01T01:30:00Z"}]}}}`,
		`{"status":{"minRuntime":null}}`,
	}
	for _, patch := range patches {
		c := New(nil, nil, nil, nil, nil)
		fast, merged := &v2alpha2.PodGroup{}, &v2alpha2.PodGroup{}
		for _, g := range []*v2alpha2.PodGroup{fast, merged} {
			if err := json.Unmarshal([]byte(before), g); err != nil {
				t.Fatal(err)
			}
		}
		if !c.applyPodGroupPatch(fast, []byte(patch)) {
			t.Fatalf("the updater's patch %s took the slow path", patch)
		}
		original, _ := json.Marshal(merged)
		result, err := jsonpatch.MergePatch(original, []byte(patch))
		if err != nil {
			t.Fatal(err)
		}
		*merged = v2alpha2.PodGroup{}
		if err := json.Unmarshal(result, merged); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(fast.Status, merged.Status) {
			t.Errorf("patch %s: fast path gives %+v, a merge %+v", patch, fast.Status.MinRuntime, merged.Status.MinRuntime)
		}
	}
	if New(nil, nil, nil, nil, nil).applyPodGroupPatch(&v2alpha2.PodGroup{}, []byte(`{"status":{"minRuntime":{"startNote":"x"}}}`)) {
		t.Error("a patch of one field was applied as a replacement")
	}
}
