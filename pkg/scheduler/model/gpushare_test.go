package model_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// A pod's GPU-sharing annotations, as upstream reads them; each request upstream refuses is
// an error naming the annotation, so the user can fix the one they wrote.
func TestParseGPUShare(t *testing.T) {
	for _, tc := range []struct {
		name  string
		notes map[string]string
		whole bool
		want  model.GPUShare
		err   string // a part of the error; empty: none
	}{
		{name: "half a device", notes: map[string]string{"gpu-fraction": "0.5"}, want: model.GPUShare{Fraction: 0.5, Devices: 1}},
		{name: "20 GB of a device", notes: map[string]string{"gpu-memory": "20000"}, want: model.GPUShare{MemoryMiB: 20000, Devices: 1}},
		{name: "a quarter of each of two", notes: map[string]string{"gpu-fraction": "0.25", "gpu-fraction-num-devices": "2"},
			want: model.GPUShare{Fraction: 0.25, Devices: 2}},
		{name: "zero", notes: map[string]string{"gpu-fraction": "0"}, err: `gpu-fraction="0"`},
		{name: "a whole device", notes: map[string]string{"gpu-fraction": "1"}, err: `gpu-fraction="1"`},
		{name: "more than one", notes: map[string]string{"gpu-fraction": "1.5"}, err: `gpu-fraction="1.5"`},
		{name: "negative", notes: map[string]string{"gpu-fraction": "-0.5"}, err: `gpu-fraction="-0.5"`},
		{name: "NaN", notes: map[string]string{"gpu-fraction": "NaN"}, err: `gpu-fraction="NaN"`},
		{name: "a word", notes: map[string]string{"gpu-fraction": "half"}, err: `gpu-fraction="half"`},
		{name: "beside whole GPUs", notes: map[string]string{"gpu-fraction": "0.5"}, whole: true, err: "also requests whole nvidia.com/gpu"},
		{name: "memory beside whole GPUs", notes: map[string]string{"gpu-memory": "100"}, whole: true, err: "annotation gpu-memory asks"},
		{name: "fraction and memory", notes: map[string]string{"gpu-fraction": "0.5", "gpu-memory": "100"}, err: "gpu-fraction and gpu-memory"},
		{name: "devices without a share", notes: map[string]string{"gpu-fraction-num-devices": "2"}, err: "no gpu-fraction or gpu-memory"},
		{name: "no devices", notes: map[string]string{"gpu-fraction": "0.5", "gpu-fraction-num-devices": "0"}, err: `gpu-fraction-num-devices="0"`},
		{name: "memory not a number", notes: map[string]string{"gpu-memory": "20GB"}, err: `gpu-memory="20GB"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: tc.notes}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main"}}}}
			if tc.whole {
				pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{model.GPUResourceName: resource.MustParse("1")}
			}
			share, err := model.ParseGPUShare(pod)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one saying %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err == "" && (share == nil || *share != tc.want):
				t.Errorf("share %+v, want %+v", share, tc.want)
			}
		})
	}
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"other": "x"}}}
	if share, err := model.ParseGPUShare(plain); share != nil || err != nil {
		t.Errorf("a pod without sharing annotations: %+v, %v; want none", share, err)
	}
}
