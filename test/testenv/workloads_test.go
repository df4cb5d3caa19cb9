package testenv_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

var _ = Describe("Workload CRDs", func() {
	// Every workload kind's object of workloads.go is one its CRD stores as it is: created
	// with strict field validation (a field the schema does not know is an error, not dropped),
	// read back with every field it was sent with.
	It("store one object of every workload kind", func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		DeferCleanup(cancel)
		ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "workloads"}}
		Expect(env.Client.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func() { Expect(env.Client.Delete(context.Background(), ns)).To(Succeed()) })
		strict := client.WithFieldValidation(env.Client, metav1.FieldValidationStrict)

		want := map[schema.GroupVersionKind]bool{}
		for _, kind := range [][2]string{
			{"kubeflow.org/v1", "PyTorchJob"}, {"kubeflow.org/v1", "TFJob"}, {"kubeflow.org/v1", "XGBoostJob"},
			{"kubeflow.org/v1", "JAXJob"}, {"kubeflow.org/v2beta1", "MPIJob"}, {"trainer.kubeflow.org/v1alpha1", "TrainJob"},
			{"ray.io/v1", "RayCluster"}, {"ray.io/v1", "RayJob"}, {"ray.io/v1", "RayService"},
			{"jobset.x-k8s.io/v1alpha2", "JobSet"}, {"leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"},
			{"kubeflow.org/v1", "Notebook"}, {"serving.knative.dev/v1", "Service"},
			{"serving.knative.dev/v1", "Configuration"}, {"serving.knative.dev/v1", "Revision"},
			{"argoproj.io/v1alpha1", "Workflow"},
		} {
			want[schema.FromAPIVersionAndKind(kind[0], kind[1])] = true
		}
		got := map[schema.GroupVersionKind]bool{}
		for _, o := range testenv.Workloads(ns.Name, "w") {
			gvk := o.GroupVersionKind()
			got[gvk] = true
			sent := o.DeepCopy()
			Expect(strict.Create(ctx, o)).To(Succeed(), "creating %s", gvk)

			back := &unstructured.Unstructured{}
			back.SetGroupVersionKind(gvk)
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), back)).To(Succeed(), "reading %s back", gvk)
			Expect(back.GetUID()).To(Equal(o.GetUID()), "%s read back is another object", gvk)
			Expect(kept(back.Object["spec"], sent.Object["spec"], ".spec")).To(Succeed(), "%s read back", gvk)
		}
		Expect(sortedKinds(got)).To(Equal(sortedKinds(want)), "testenv.Workloads returns one object of each kind")
	})

	// The helpers return objects with the namespace and name they are given, new each time.
	It("makes new objects with the namespace and name given", func() {
		a, b := testenv.PyTorchJob("ns-a", "a"), testenv.PyTorchJob("ns-b", "b")
		Expect([]string{a.GetNamespace(), a.GetName(), b.GetNamespace(), b.GetName()}).To(Equal([]string{"ns-a", "a", "ns-b", "b"}))
		Expect(unstructured.SetNestedField(a.Object, int64(3), "spec", "pytorchReplicaSpecs", "Master", "replicas")).To(Succeed())
		replicas, _, _ := unstructured.NestedInt64(b.Object, "spec", "pytorchReplicaSpecs", "Master", "replicas")
		Expect(replicas).To(Equal(int64(1)), "an object shares its fields with another")
		Expect(testenv.Notebook("ns", "nb").Object).To(HaveKeyWithValue("spec", HaveKeyWithValue("template",
			HaveKeyWithValue("spec", HaveKeyWithValue("containers", ContainElement(HaveKeyWithValue("name", "nb")))))))
	})
})

// kept says whether got holds every field of want with its value: the API server may add
// defaults, never drop a field or change a value.
func kept(got, want any, path string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is %v, not an object", path, got)
		}
		for k, v := range w {
			if _, ok := g[k]; !ok {
				return fmt.Errorf("%s.%s was dropped", path, k)
			}
			if err := kept(g[k], v, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s is %v, not %v", path, got, want)
		}
		for i := range w {
			if err := kept(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	default:
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%s is %v (%T), not %v (%T)", path, got, got, want, want)
		}
	}
	return nil
}

func sortedKinds(set map[schema.GroupVersionKind]bool) []string {
	var kinds []string
	for gvk := range set {
		kinds = append(kinds, gvk.String())
	}
	sort.Strings(kinds)
	return kinds
}
