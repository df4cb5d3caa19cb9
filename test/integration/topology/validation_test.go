package topology

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
)

// topology is a Topology manifest whose spec is the given YAML (a flow mapping, or empty for
// none at all).
func topology(name, spec string) *unstructured.Unstructured {
	text := fmt.Sprintf("apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: %s}\n", name)
	if spec != "" {
		text += "spec: " + spec + "\n"
	}
	obj := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(text), &obj.Object)).To(Succeed())
	return obj
}

// withLevels is a Topology manifest of the given levels (a YAML flow sequence).
func withLevels(name, levels string) *unstructured.Unstructured {
	return topology(name, "{levels: "+levels+"}")
}

// createAndCleanUp creates obj and deletes it after the spec.
func createAndCleanUp(obj *unstructured.Unstructured) error {
	if err := k8sClient.Create(ctx, obj); err != nil {
		return err
	}
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed())
	})
	return nil
}

// expectRejected asserts that the API server refused the object as invalid and that its
// message names the field and says what is wrong.
func expectRejected(err error, field, message string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred(), "the API server accepted an invalid Topology")
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want an Invalid error, got %v", err)
	Expect(err.Error()).To(ContainSubstring(field))
	Expect(err.Error()).To(ContainSubstring(message))
}

// levelsOf reads a stored Topology's levels through the typed API.
func levelsOf(name string) []v1alpha1.TopologyLevel {
	GinkgoHelper()
	stored := &v1alpha1.Topology{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, stored)).To(Succeed())
	return stored.Spec.Levels
}

// parseLevels reads a YAML flow sequence of levels as the typed API holds them.
func parseLevels(levels string) []v1alpha1.TopologyLevel {
	GinkgoHelper()
	var parsed []v1alpha1.TopologyLevel
	Expect(yaml.Unmarshal([]byte(levels), &parsed)).To(Succeed())
	return parsed
}

// repeat is n copies of c.
func repeat(c string, n int) string { return strings.Repeat(c, n) }

// longestLevels are 16 levels whose node labels are the longest label keys there are (a
// 253-character prefix, "/", a 63-character name) and whose aliases are 63 characters, all
// distinct: the largest Topology the schema allows, on which every rule runs in full. The
// API server refuses an object whose rules exceed its runtime CEL budget.
func longestLevels() string {
	// A DNS subdomain of 253 characters: three labels of 63 and one of 61.
	prefix := repeat("p", 63) + "." + repeat("q", 63) + "." + repeat("r", 63) + "." + repeat("s", 61)
	levels := make([]string, 16)
	for i := range levels {
		name := fmt.Sprintf("level-%02d-", i)
		alias := fmt.Sprintf("alias-%02d-", i)
		levels[i] = fmt.Sprintf("{nodeLabel: %s/%s, alias: %s}", prefix, name+repeat("x", 63-len(name)), alias+repeat("a", 63-len(alias)))
	}
	return "[" + strings.Join(levels, ", ") + "]"
}

// levelsNamed are n levels, one label each.
func levelsNamed(n int) string {
	levels := make([]string, n)
	for i := range levels {
		levels[i] = fmt.Sprintf("{nodeLabel: example.com/level-%d}", i)
	}
	return "[" + strings.Join(levels, ", ") + "]"
}

var _ = Describe("Topology validation", func() {
	DescribeTable("accepts and stores unchanged",
		func(levels string) {
			Expect(createAndCleanUp(withLevels("valid", levels))).To(Succeed())
			Expect(levelsOf("valid")).To(Equal(parseLevels(levels)))
		},
		Entry("one level", "[{nodeLabel: topology.kubernetes.io/zone}]"),
		Entry("upstream's example: block, rack, then the host last",
			"[{nodeLabel: cloud.provider.com/topology-block}, {nodeLabel: cloud.provider.com/topology-rack}, {nodeLabel: kubernetes.io/hostname}]"),
		Entry("the host alone", "[{nodeLabel: kubernetes.io/hostname}]"),
		Entry("an alias on every level, the host last",
			"[{nodeLabel: topology.kubernetes.io/zone, alias: zone}, {nodeLabel: example.com/rack, alias: rack}, {nodeLabel: kubernetes.io/hostname, alias: host}]"),
		Entry("aliases on some levels only", "[{nodeLabel: example.com/zone, alias: zone}, {nodeLabel: example.com/block}, {nodeLabel: example.com/rack, alias: rack}]"),
		Entry("16 levels", levelsNamed(16)),
		Entry("16 levels of the longest labels and aliases: every rule runs within the API server's CEL budget", longestLevels()),
	)

	DescribeTable("refuses with a message naming the mistake",
		func(obj *unstructured.Unstructured, field, message string) {
			expectRejected(createAndCleanUp(obj), field, message)
		},
		Entry("a node label on two levels", withLevels("invalid", "[{nodeLabel: zone}, {nodeLabel: rack}, {nodeLabel: zone}]"),
			"spec.levels", `levels must name distinct node labels: "zone" is repeated`),
		Entry("an alias on two levels", withLevels("invalid", "[{nodeLabel: zone, alias: z}, {nodeLabel: rack, alias: z}]"),
			"spec.levels", `levels must have distinct aliases: "z" is repeated`),
		Entry("an alias that is another level's node label, which a constraint could not resolve",
			withLevels("invalid", "[{nodeLabel: zone, alias: rack}, {nodeLabel: rack}]"),
			"spec.levels", `an alias must not be another level's node label: "rack" is a node label`),
		Entry("an alias that is its own level's node label (upstream: aliases distinct from labels)",
			withLevels("invalid", "[{nodeLabel: zone, alias: zone}, {nodeLabel: rack}]"),
			"spec.levels", `an alias must not be another level's node label: "zone" is a node label`),
		Entry("the host above another level", withLevels("invalid", "[{nodeLabel: kubernetes.io/hostname}, {nodeLabel: example.com/rack}]"),
			"spec.levels", "kubernetes.io/hostname may only be the last level"),
		Entry("the host in the middle", withLevels("invalid", "[{nodeLabel: zone}, {nodeLabel: kubernetes.io/hostname}, {nodeLabel: rack}]"),
			"spec.levels", "kubernetes.io/hostname may only be the last level"),
		Entry("no level", withLevels("invalid", "[]"), "spec.levels", "should have at least 1 items"),
		Entry("no levels field", topology("invalid", "{}"), "spec.levels", "Required value"),
		Entry("no spec", topology("invalid", ""), "spec", "Required value"),
		Entry("17 levels", withLevels("invalid", levelsNamed(17)), "spec.levels", "must have at most 16 items"),
		Entry("an empty node label", withLevels("invalid", `[{nodeLabel: ""}]`), "spec.levels[0].nodeLabel", "at least 1 chars long"),
		Entry("a node label that is no label key", withLevels("invalid", "[{nodeLabel: zone}, {nodeLabel: 'rack number'}]"),
			"spec.levels[1].nodeLabel", "should match"),
		Entry("a node label longer than a label key can be", withLevels("invalid", "[{nodeLabel: "+repeat("a", 254)+"/"+repeat("b", 63)+"}]"),
			"spec.levels[0].nodeLabel", "may not be more than 317"),
		Entry("an empty alias", withLevels("invalid", `[{nodeLabel: zone, alias: ""}]`), "spec.levels[0].alias", "at least 1 chars long"),
	)

	Describe("on update", func() {
		const created = "[{nodeLabel: topology.kubernetes.io/zone}, {nodeLabel: example.com/rack, alias: rack}, {nodeLabel: kubernetes.io/hostname}]"

		// patchLevels replaces the levels of the Topology "updated" (a merge patch replaces an
		// atomic list whole).
		patchLevels := func(levels string) error {
			patch, err := json.Marshal(map[string]any{"spec": map[string]any{"levels": parseLevels(levels)}})
			Expect(err).NotTo(HaveOccurred())
			return k8sClient.Patch(ctx, withLevels("updated", created), client.RawPatch(types.MergePatchType, patch))
		}

		BeforeEach(func() {
			Expect(createAndCleanUp(withLevels("updated", created))).To(Succeed())
		})

		It("accepts a change of the object's metadata alone", func() {
			obj := withLevels("updated", created)
			Expect(k8sClient.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"infra"}}}`)))).To(Succeed())
			Expect(levelsOf("updated")).To(Equal(parseLevels(created)))
		})

		DescribeTable("accepts new aliases on the same node labels",
			func(levels string) {
				Expect(patchLevels(levels)).To(Succeed())
				Expect(levelsOf("updated")).To(Equal(parseLevels(levels)))
			},
			Entry("an alias added", "[{nodeLabel: topology.kubernetes.io/zone, alias: zone}, {nodeLabel: example.com/rack, alias: rack}, {nodeLabel: kubernetes.io/hostname}]"),
			Entry("an alias changed", "[{nodeLabel: topology.kubernetes.io/zone}, {nodeLabel: example.com/rack, alias: shelf}, {nodeLabel: kubernetes.io/hostname}]"),
			Entry("an alias removed", "[{nodeLabel: topology.kubernetes.io/zone}, {nodeLabel: example.com/rack}, {nodeLabel: kubernetes.io/hostname}]"),
		)

		DescribeTable("refuses any change of the node labels",
			func(levels string) {
				expectRejected(patchLevels(levels), "spec.levels", "the levels' node labels cannot change (aliases can); make a new Topology")
				Expect(levelsOf("updated")).To(Equal(parseLevels(created)))
			},
			Entry("a label changed", "[{nodeLabel: topology.kubernetes.io/region}, {nodeLabel: example.com/rack, alias: rack}, {nodeLabel: kubernetes.io/hostname}]"),
			Entry("two labels swapped", "[{nodeLabel: example.com/rack, alias: rack}, {nodeLabel: topology.kubernetes.io/zone}, {nodeLabel: kubernetes.io/hostname}]"),
			Entry("a level added", "[{nodeLabel: topology.kubernetes.io/zone}, {nodeLabel: example.com/block}, {nodeLabel: example.com/rack, alias: rack}, {nodeLabel: kubernetes.io/hostname}]"),
			Entry("a level removed", "[{nodeLabel: topology.kubernetes.io/zone}, {nodeLabel: example.com/rack, alias: rack}]"),
			Entry("a label changed beside an alias added", "[{nodeLabel: topology.kubernetes.io/zone, alias: zone}, {nodeLabel: example.com/shelf, alias: rack}, {nodeLabel: kubernetes.io/hostname}]"),
		)
	})
})

var _ = Describe("kubectl get topologies", func() {
	It("shows the widest and the narrowest level's node labels", func() {
		Expect(createAndCleanUp(withLevels("columns",
			"[{nodeLabel: example.com/zone, alias: zone}, {nodeLabel: example.com/rack}, {nodeLabel: kubernetes.io/hostname}]"))).To(Succeed())
		httpClient, err := rest.HTTPClientFor(env.Config)
		Expect(err).NotTo(HaveOccurred())
		req, err := http.NewRequestWithContext(ctx, http.MethodGet,
			strings.TrimSuffix(env.Config.Host, "/")+"/apis/kai.scheduler/v1alpha1/topologies/columns", nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		resp, err := httpClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
		table := &metav1.Table{}
		Expect(json.Unmarshal(body, table)).To(Succeed())
		Expect(table.Rows).To(HaveLen(1))
		row := map[string]any{}
		for i, column := range table.ColumnDefinitions {
			row[column.Name] = table.Rows[0].Cells[i]
		}
		Expect(row).To(HaveKeyWithValue("Widest", "example.com/zone"))
		Expect(row).To(HaveKeyWithValue("Narrowest", "kubernetes.io/hostname"))
	})
})
