package apis

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
)

const durationMessage = "must be a non-negative duration such as 0s, 90s or 1h30m"

// queueWith is a Queue manifest whose spec holds one extra line.
func queueWith(name, specLine string) string {
	return fmt.Sprintf(`
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: %s}
spec:
  %s
`, name, specLine)
}

// podGroupWith is a PodGroup manifest whose spec holds the given lines.
func podGroupWith(specLines string) string {
	return fmt.Sprintf(`
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: invalid, namespace: validation}
spec:
%s
`, specLines)
}

// expectRejected asserts that the API server refused the object as invalid and that its
// message names the field and says what is wrong.
func expectRejected(err error, field, message string) {
	Expect(err).To(HaveOccurred(), "the API server accepted an invalid object")
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want an Invalid error, got %v", err)
	Expect(err.Error()).To(ContainSubstring(field))
	Expect(err.Error()).To(ContainSubstring(message))
}

var _ = Describe("Queue min-runtime validation", func() {
	for _, field := range []string{"preemptMinRuntime", "reclaimMinRuntime"} {
		DescribeTable("accepts non-negative Go durations in "+field,
			func(value string, want time.Duration) {
				name := "valid-" + strings.ToLower(field)
				Expect(createAndCleanUp(manifest(queueWith(name, field+": "+value)))).To(Succeed())
				queue := &v2.Queue{}
				Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, queue)).To(Succeed())
				got := queue.Spec.PreemptMinRuntime
				if field == "reclaimMinRuntime" {
					got = queue.Spec.ReclaimMinRuntime
				}
				Expect(got).NotTo(BeNil())
				Expect(got.Duration).To(Equal(want))
			},
			Entry("0s", `"0s"`, time.Duration(0)),
			Entry("bare 0", `"0"`, time.Duration(0)),
			Entry("90s", `"90s"`, 90*time.Second),
			Entry("1h30m", `"1h30m"`, 90*time.Minute),
			Entry("fractional 1.5h", `"1.5h"`, 90*time.Minute),
			Entry("500ms", `"500ms"`, 500*time.Millisecond),
		)

		DescribeTable("rejects with a clear message in "+field,
			func(value string) {
				err := createAndCleanUp(manifest(queueWith("invalid-"+strings.ToLower(field), field+": "+value)))
				expectRejected(err, "spec."+field, durationMessage)
			},
			Entry("a negative duration", `"-5m"`),
			Entry("a word", `"abc"`),
			Entry("a number without unit", `"10"`),
			Entry("days, which a Queue cannot hold (only plugin arguments accept d and w)", `"1d"`),
			Entry("an explicit plus sign", `"+5m"`),
			Entry("a duration that overflows", `"9999999999h"`),
			Entry("an empty string", `""`),
		)
	}
})

var _ = Describe("Queue resource validation", func() {
	DescribeTable("rejects meaningless numbers",
		func(specLine, field, message string) {
			expectRejected(createAndCleanUp(manifest(queueWith("invalid-resources", specLine))), field, message)
		},
		Entry("quota below -1", "resources: {gpu: {quota: -2}}", "spec.resources.gpu.quota", "greater than or equal to -1"),
		Entry("limit below -1", "resources: {cpu: {limit: -5}}", "spec.resources.cpu.limit", "greater than or equal to -1"),
		Entry("negative over-quota weight", "resources: {memory: {overQuotaWeight: -1}}", "spec.resources.memory.overQuotaWeight", "greater than or equal to 0"),
	)
})

var _ = Describe("PodGroup validation", func() {
	DescribeTable("rejects with a clear message",
		func(specLines, field, message string) {
			expectRejected(createAndCleanUp(manifest(podGroupWith(specLines))), field, message)
		},
		Entry("minMember 0", "  minMember: 0", "spec.minMember", "greater than or equal to 1"),
		Entry("negative minMember", "  minMember: -3", "spec.minMember", "greater than or equal to 1"),
		Entry("an unknown preemptibility", "  minMember: 1\n  preemptibility: sometimes",
			"spec.preemptibility", `Unsupported value: "sometimes"`),
		Entry("a sub-group with minMember 0", "  minMember: 1\n  subGroups: [{name: workers, minMember: 0}]",
			"spec.subGroups[0].minMember", "greater than or equal to 1"),
		Entry("two sub-groups with one name", "  minMember: 1\n  subGroups: [{name: w, minMember: 1}, {name: w, minMember: 2}]",
			"spec.subGroups[1]", "Duplicate value"),
		Entry("a sub-group whose parent does not exist", "  minMember: 1\n  subGroups: [{name: w, minMember: 1, parent: nobody}]",
			"spec.subGroups", "every subGroup parent must name another subGroup"),
		Entry("a negative preemptionDelay", "  minMember: 1\n  preemptionDelay: -5m", "spec.preemptionDelay", durationMessage),
		Entry("a preemptionDelay without unit", "  minMember: 1\n  preemptionDelay: \"300\"", "spec.preemptionDelay", durationMessage),
		Entry("minMember and minSubGroup on the PodGroup", "  minMember: 8\n  minSubGroup: 1\n  subGroups: [{name: r0, minMember: 8}]",
			"spec", "minMember and minSubGroup are mutually exclusive"),
		Entry("minMember and minSubGroup on one sub-group", "  minSubGroup: 1\n  subGroups: [{name: r, minMember: 2, minSubGroup: 1}, {name: r0, parent: r, minMember: 2}]",
			"spec.subGroups[0]", "mutually exclusive in a subGroup"),
		Entry("a negative minSubGroup", "  minSubGroup: -1\n  subGroups: [{name: r0, minMember: 8}]",
			"spec.minSubGroup", "greater than or equal to 0"),
		Entry("a sub-group's negative minSubGroup", "  subGroups: [{name: r, minSubGroup: -2}, {name: r0, parent: r}]",
			"spec.subGroups[0].minSubGroup", "greater than or equal to 0"),
		Entry("a minSubGroup above the top-level sub-groups", "  minSubGroup: 3\n  subGroups: [{name: r0, minMember: 8}, {name: r1, minMember: 8}]",
			"spec", "minSubGroup cannot exceed the number of top-level subGroups"),
		Entry("a sub-group's minSubGroup above its children", "  subGroups: [{name: r, minSubGroup: 2}, {name: r0, parent: r}]",
			"spec.subGroups", "cannot exceed the number of subGroups whose parent it is"),
	)
})
