package status

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// A merge patch keeps every field it does not name, so the protection patch must name every
// field of the status, the empty ones as null. A field added to the API later and left out
// here would keep showing what an earlier run wrote.
func TestProtectionPatchNamesEveryField(t *testing.T) {
	empty := model.ProtectionChange{Job: "ns/job", Protection: model.Protection{Start: time.Unix(0, 0), Preempt: model.MinRuntime{}}}
	raw, err := json.Marshal(protectionStatus(empty))
	if err != nil {
		t.Fatal(err)
	}
	var minRuntime, preempt map[string]json.RawMessage
	if err := json.Unmarshal(raw, &minRuntime); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(minRuntime["preempt"], &preempt); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fields map[string]json.RawMessage
		of     reflect.Type
	}{
		{minRuntime, reflect.TypeFor[v2alpha2.MinRuntimeStatus]()},
		{preempt, reflect.TypeFor[v2alpha2.MinRuntimeProtection]()},
	} {
		for i := range c.of.NumField() {
			name, _, _ := strings.Cut(c.of.Field(i).Tag.Get("json"), ",")
			if _, named := c.fields[name]; !named {
				t.Errorf("the patch leaves %s.%s out: a value written before would linger", c.of.Name(), name)
			}
		}
	}
}
