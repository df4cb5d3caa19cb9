package plugins

import (
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/minruntime"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/nodeplacement"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/predicates"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/priority"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/plugins/proportion"
)

// NewRegistry returns a registry holding every plugin of this scheduler.
func NewRegistry() *framework.Registry {
	r := framework.NewRegistry()
	for _, entry := range []struct {
		name    string
		factory framework.PluginFactory
	}{
		{priority.Name, priority.New},
		{predicates.Name, predicates.New},
		{nodeplacement.Name, nodeplacement.New},
		{proportion.Name, proportion.New},
		{minruntime.Name, minruntime.New},
	} {
		if err := r.Register(entry.name, entry.factory); err != nil {
			panic(err) // two plugins sharing a name is a programming error caught by any test
		}
	}
	return r
}
