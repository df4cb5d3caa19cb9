package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

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

// configurationRepost is how often the leader posts its configuration events again: an API
// server keeps events an hour by default (--event-ttl), and each post renews them.
const configurationRepost = 30 * time.Minute

// maxEventMessage keeps a message within what an API server stores for an event.
const maxEventMessage = 1024

// postConfiguration tells, on the ConfigMap the configuration comes from, what the scheduler
// made of it: a Normal event with the actions and plugin settings it runs (the min-runtime
// defaults among them), and, when it skipped or defaulted parts of it, one Warning event
// naming them all (one event per warning would be merged by the event recorder after ten).
// Whoever edits the ConfigMap sees them with `kubectl describe configmap`, without reading
// the scheduler's log. The ConfigMap is read for its UID, which describe matches events by.
// A failure to post only logs: the scheduler runs either way, and its log has the warnings.
func postConfiguration(ctx context.Context, reader client.Reader, recorder record.EventRecorder, key types.NamespacedName,
	pool scheduling.NodePool, policy *scheduler.Policy, warnings []string) {
	cm := &v1.ConfigMap{}
	if err := reader.Get(ctx, key, cm); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot post what the scheduler made of its configuration on its ConfigMap", "configMap", key, "warnings", warnings)
		return
	}
	who := "the scheduler"
	if pool.LabelKey != "" {
		who = fmt.Sprintf("the scheduler of node pool %s", pool)
	}
	recorder.Event(cm, v1.EventTypeNormal, ReasonConfigurationLoaded, truncate(fmt.Sprintf("%s runs actions %s; plugins %s",
		who, strings.Join(policy.ActionSettings(), ", "), strings.Join(policy.PluginSettings(), "; "))))
	if len(warnings) > 0 {
		numbered := make([]string, len(warnings))
		for i, w := range warnings {
			numbered[i] = fmt.Sprintf("(%d) %s", i+1, w)
		}
		recorder.Event(cm, v1.EventTypeWarning, ReasonConfigurationWarning, truncate(fmt.Sprintf("%s skips or defaults %d part(s) of its configuration: %s",
			who, len(warnings), strings.Join(numbered, " "))))
	}
}

// truncate shortens a message to maxEventMessage bytes, saying where the rest is.
func truncate(message string) string {
	const more = "... (kai-scheduler check-config prints it all)"
	if len(message) <= maxEventMessage {
		return message
	}
	return strings.ToValidUTF8(message[:maxEventMessage-len(more)], "") + more
}

// postConfigurationRunnable posts the configuration events now and every
// configurationRepost until ctx ends. Added to the manager, it runs only on the leader:
// replicas would repeat every event.
func postConfigurationRunnable(reader client.Reader, recorder record.EventRecorder, clk clock.WithTicker, key types.NamespacedName,
	pool scheduling.NodePool, policy *scheduler.Policy, warnings []string) manager.RunnableFunc {
	return func(ctx context.Context) error {
		ticker := clk.NewTicker(configurationRepost)
		defer ticker.Stop()
		for {
			postConfiguration(ctx, reader, recorder, key, pool, policy, warnings)
			select {
			case <-ctx.Done():
				return nil
			case <-ticker.C():
			}
		}
	}
}
