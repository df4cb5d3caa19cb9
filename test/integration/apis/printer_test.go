package apis

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// getTable asks the API server for the table kubectl would print for path.
func getTable(path string) map[string]any {
	httpClient, err := rest.HTTPClientFor(env.Config)
	Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(env.Config.Host, "/")+path, nil)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "GET %s: %s", req.URL, body)

	table := &metav1.Table{}
	Expect(json.Unmarshal(body, table)).To(Succeed())
	Expect(table.Rows).To(HaveLen(1))
	row := map[string]any{}
	for i, column := range table.ColumnDefinitions {
		row[column.Name] = table.Rows[0].Cells[i]
	}
	return row
}

var _ = Describe("kubectl get columns", func() {
	It("show a queue's parent, priority and both min-runtimes", func() {
		Expect(createAndCleanUp(manifest(`
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: columns}
spec: {parentQueue: research, priority: 200, preemptMinRuntime: 20s, reclaimMinRuntime: 1h30m}
`))).To(Succeed())
		row := getTable("/apis/scheduling.run.ai/v2/queues/columns")
		Expect(row).To(HaveKeyWithValue("Parent", "research"))
		Expect(row).To(HaveKeyWithValue("Priority", BeNumerically("==", 200)))
		Expect(row).To(HaveKeyWithValue("Preempt-Min-Runtime", "20s"))
		Expect(row).To(HaveKeyWithValue("Reclaim-Min-Runtime", "1h30m"))
		Expect(row).To(HaveKey("Children"))
	})

	It("show a PodGroup's queue and gang size", func() {
		Expect(createAndCleanUp(manifest(`
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: columns, namespace: printer}
spec: {minMember: 8, queue: research}
`))).To(Succeed())
		row := getTable("/apis/scheduling.run.ai/v2alpha2/namespaces/printer/podgroups/columns")
		Expect(row).To(HaveKeyWithValue("Queue", "research"))
		Expect(row).To(HaveKeyWithValue("MinMember", BeNumerically("==", 8)))
	})

	It("show a gang counted in sub-groups (with -o wide)", func() {
		Expect(createAndCleanUp(manifest(`
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: replicas, namespace: printer}
spec: {minSubGroup: 3, queue: research, subGroups: [{name: r0, minMember: 8}, {name: r1, minMember: 8}, {name: r2, minMember: 8}, {name: r3, minMember: 8}]}
`))).To(Succeed())
		row := getTable("/apis/scheduling.run.ai/v2alpha2/namespaces/printer/podgroups/replicas")
		Expect(row).To(HaveKeyWithValue("MinSubGroup", BeNumerically("==", 3)))
	})
})
