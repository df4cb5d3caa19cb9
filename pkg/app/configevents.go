package app

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
)

// Reasons of the events posted on the configuration's ConfigMap.
const (
	ReasonConfigurationLoaded  = "ConfigurationLoaded"
	ReasonConfigurationWarning = "ConfigurationWarning"
)

// ParseConfigMap reads a --scheduler-conf-configmap value, [NAMESPACE/]NAME; without a
// namespace, the ConfigMap is in the scheduler's own ($POD_NAMESPACE, as the Lease's).
func ParseConfigMap(value string) (types.NamespacedName, error) {
	namespace, name, qualified := strings.Cut(value, "/")
	if !qualified {
		namespace, name = defaultNamespace(), value
	}
	var mistakes []string
	for _, m := range validation.IsDNS1123Label(namespace) {
		mistakes = append(mistakes, "namespace "+m)
	}
	for _, m := range validation.IsDNS1123Subdomain(name) {
		mistakes = append(mistakes, "name "+m)
	}
	if len(mistakes) > 0 {
		return types.NamespacedName{}, fmt.Errorf("%q is not [NAMESPACE/]NAME of a ConfigMap: %s", value, strings.Join(mistakes, "; "))
	}
	return types.NamespacedName{Namespace: namespace, Name: name}, nil
}

// postConfiguration tells, on the ConfigMap the configuration comes from, what the scheduler
// made of it: a Normal event with the actions and plugin settings it runs (the min-runtime
// defaults among them), and a Warning event for each part it ignored or defaulted. Whoever
// edits the ConfigMap sees them with `kubectl describe configmap`, without reading the
// scheduler's log. The ConfigMap is read for its UID, which describe matches events by.
// A failure to post only logs: the scheduler runs either way, and its log has the warnings.
func postConfiguration(ctx context.Context, reader client.Reader, recorder record.EventRecorder, key types.NamespacedName,
	pool scheduling.NodePool, policy *scheduler.Policy, warnings []string) {
	cm := &v1.ConfigMap{}
	if err := reader.Get(ctx, key, cm); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot post the configuration's warnings on its ConfigMap", "configMap", key, "warnings", warnings)
		return
	}
	var actions []string
	for _, action := range policy.Actions {
		actions = append(actions, string(action.Name()))
	}
	who := "the scheduler"
	if pool.LabelKey != "" {
		who = fmt.Sprintf("the scheduler of node pool %s", pool)
	}
	recorder.Eventf(cm, v1.EventTypeNormal, ReasonConfigurationLoaded, "%s runs actions %s; plugins %s",
		who, strings.Join(actions, ", "), strings.Join(policy.PluginSettings(), "; "))
	for _, w := range warnings {
		recorder.Event(cm, v1.EventTypeWarning, ReasonConfigurationWarning, w)
	}
}
