package priority

import (
	"cmp"

	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/framework"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "priority"

type plugin struct{}

var _ framework.Plugin = plugin{}

// New builds the plugin; it takes no arguments.
func New(args framework.Arguments) (framework.Plugin, error) {
	return plugin{}, framework.RejectArguments(args)
}

func (plugin) Name() string { return Name }

func (plugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddJobOrderFn(Name, func(l, r *model.JobInfo) int {
		return cmp.Compare(r.Priority, l.Priority) // higher first
	})
}

func (plugin) OnSessionClose(*framework.Session) {}
