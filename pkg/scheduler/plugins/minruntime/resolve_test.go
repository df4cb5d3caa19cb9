package minruntime_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
)

// exampleTree reads one of docs/examples' queue files, the manifests operators see, into a
// queue tree through the same conversion the scheduler's store uses.
func exampleTree(t *testing.T, file string) *model.QueueTree {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var queues []*model.QueueInfo
	for {
		queue := &v2.Queue{}
		if err := decoder.Decode(queue); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		queues = append(queues, store.QueueInfo(queue))
	}
	return model.NewQueueTree(queues)
}

// The reclaim example of the min-runtime design: A → B (600s) → {C, D (60s)},
// C → {leaf1 (0s), leaf2 (180s)}, D → {leaf3}.
func TestSeedReclaimExamples(t *testing.T) {
	tree := exampleTree(t, "queues-reclaim-lca-tree.yaml")
	defaults := minruntime.Defaults{Reclaim: 7 * time.Second}
	tests := []struct {
		name               string
		reclaimer, victim  string
		wantLCA, wantQueue time.Duration
	}{
		{"1: leaf1 reclaiming from leaf3 uses D, the child of B toward the victim",
			"leaf1", "leaf3", 60 * time.Second, 60 * time.Second},
		{"2: leaf1 reclaiming from its sibling leaf2 uses leaf2",
			"leaf1", "leaf2", 180 * time.Second, 180 * time.Second},
		{"3: leaf3 reclaiming from leaf1 uses C, which inherits 600s from B",
			"leaf3", "leaf1", 600 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := minruntime.ReclaimMinRuntime(tree, minruntime.LCA, tt.reclaimer, tt.victim, defaults).Duration; got != tt.wantLCA {
				t.Errorf("lca: %v, want %v", got, tt.wantLCA)
			}
			if got := minruntime.ReclaimMinRuntime(tree, minruntime.Queue, tt.reclaimer, tt.victim, defaults).Duration; got != tt.wantQueue {
				t.Errorf("queue method: %v, want %v", got, tt.wantQueue)
			}
		})
	}
}

// The preemption example: p-a → p-b (600s) → p-c → {p-leaf1 (300s), p-leaf2}.
func TestSeedPreemptExamples(t *testing.T) {
	tree := exampleTree(t, "queues-preempt-tree.yaml")
	defaults := minruntime.Defaults{Preempt: 7 * time.Second}
	if got := minruntime.PreemptMinRuntime(tree, "p-leaf1", defaults).Duration; got != 300*time.Second {
		t.Errorf("4: p-leaf1 sets its own 300s, got %v", got)
	}
	if got := minruntime.PreemptMinRuntime(tree, "p-leaf2", defaults).Duration; got != 600*time.Second {
		t.Errorf("5: p-leaf2 inherits 600s from p-b, got %v", got)
	}
	// The resolution carries its walk, top first: from the queue that set it down to the leaf
	// it started at; from the top when the default applies.
	for _, tt := range []struct {
		queue string
		want  []string
	}{
		{"p-leaf2", []string{"p-b", "p-c", "p-leaf2"}},
		{"p-leaf1", []string{"p-leaf1"}},
		{"p-a", []string{"p-a"}},
		{"missing", nil},
	} {
		if got := minruntime.PreemptMinRuntime(tree, tt.queue, defaults).Path; !slices.Equal(got, tt.want) {
			t.Errorf("%s: walked %v, want %v", tt.queue, got, tt.want)
		}
	}
}

func TestResolutionFallsBackToTheNodePoolDefault(t *testing.T) {
	d := 90 * time.Second
	tree := model.NewQueueTree([]*model.QueueInfo{
		{Name: "top-a"}, {Name: "top-b", ReclaimMinRuntime: &d},
		{Name: "orphan", Parent: "gone", PreemptMinRuntime: &d},
		{Name: "loop-1", Parent: "loop-2"}, {Name: "loop-2", Parent: "loop-1", ReclaimMinRuntime: &d},
	})
	defaults := minruntime.Defaults{Preempt: time.Minute, Reclaim: 2 * time.Minute}
	tests := []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"nothing set on the path", minruntime.PreemptMinRuntime(tree, "top-a", defaults).Duration, time.Minute},
		{"top-level queues are siblings under an implicit root",
			minruntime.ReclaimMinRuntime(tree, minruntime.LCA, "top-a", "top-b", defaults).Duration, 90 * time.Second},
		{"an orphan resolves to the default, its own value is not trusted",
			minruntime.PreemptMinRuntime(tree, "orphan", defaults).Duration, time.Minute},
		{"a queue in a parent cycle resolves to the default without looping",
			minruntime.ReclaimMinRuntime(tree, minruntime.LCA, "top-a", "loop-1", defaults).Duration, 2 * time.Minute},
		{"an unknown queue resolves to the default",
			minruntime.ReclaimMinRuntime(tree, minruntime.Queue, "top-a", "missing", defaults).Duration, 2 * time.Minute},
		{"an unknown reclaimer compares from the implicit root",
			minruntime.ReclaimMinRuntime(tree, minruntime.LCA, "missing", "top-b", defaults).Duration, 90 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

// A running job's status lists its reclaim protection per level of its ancestry, outermost
// first; each level must say what ReclaimMinRuntime says for every reclaimer it covers.
func TestReclaimLevelsOfTheDesignTree(t *testing.T) {
	tree := exampleTree(t, "queues-reclaim-lca-tree.yaml")
	defaults := minruntime.Defaults{Reclaim: 7 * time.Second}
	level := func(outside string, d time.Duration, setBy string, path ...string) model.ReclaimLevel {
		return model.ReclaimLevel{Outside: outside, MinRuntime: model.MinRuntime{Duration: d, SetBy: setBy, Path: path}}
	}
	tests := []struct {
		name   string
		victim string
		method minruntime.ResolveMethod
		want   []model.ReclaimLevel
	}{
		{"leaf1: a is the only root and b an only child, so no reclaimer sits beside them; b's 600s holds beside c, its own 0s beside leaf1",
			"leaf1", minruntime.LCA, []model.ReclaimLevel{level("c", 600*time.Second, "b", "b", "c"), level("leaf1", 0, "leaf1", "leaf1")}},
		{"leaf3: d's 60s holds for reclaimers beside d; leaf3, an only child, is no level",
			"leaf3", minruntime.LCA, []model.ReclaimLevel{level("d", 60*time.Second, "d", "d")}},
		{"the queue method has one level, the victim's leaf",
			"leaf3", minruntime.Queue, []model.ReclaimLevel{level("leaf3", 60*time.Second, "d", "d", "leaf3")}},
		{"an unknown queue gets the default against everyone",
			"missing", minruntime.LCA, []model.ReclaimLevel{level("missing", 7*time.Second, "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := minruntime.ReclaimLevels(tree, tt.method, tt.victim, defaults)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("levels (-want +got):\n%s", diff)
			}
		})
	}
	// Cross-check against the resolution of one reclaim, for every leaf as the reclaimer:
	// the first level whose queue the reclaimer is outside of says what applies.
	queues := []string{"leaf1", "leaf2", "leaf3"} // only leaf queues hold jobs that reclaim
	for _, victim := range []string{"leaf1", "leaf2", "leaf3"} {
		levels := minruntime.ReclaimLevels(tree, minruntime.LCA, victim, defaults)
		for _, reclaimer := range queues {
			if slices.Contains(tree.Ancestry(reclaimer), victim) {
				continue // its own queue: preemption, not reclaim
			}
			k := slices.IndexFunc(levels, func(l model.ReclaimLevel) bool {
				return !slices.Contains(tree.Ancestry(reclaimer), l.Outside)
			})
			want := minruntime.ReclaimMinRuntime(tree, minruntime.LCA, reclaimer, victim, defaults)
			if k < 0 || !levels[k].Same(want) {
				t.Errorf("%s reclaiming from %s: levels %+v, want %+v", reclaimer, victim, levels, want)
			}
		}
	}
}
