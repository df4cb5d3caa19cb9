package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	v2 "github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2"
	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/v2alpha2"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpureservation"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpuwebhook"
	"github.com/kai-minruntime/kai-scheduler/pkg/podgrouper"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/actions/consolidation"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/apiwriter"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/metrics"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/status"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/store"
)

// Options are the scheduler's settings, one per flag.
type Options struct {
	// SchedulerConf is the scheduler-config file; empty runs the built-in default.
	SchedulerConf string
	// SchedulerName selects the pods to schedule (spec.schedulerName).
	SchedulerName string
	// SchedulePeriod is the time between cycles.
	SchedulePeriod time.Duration
	// LeaderElect runs cycles only while holding the Lease LeaderElectionID in
	// LeaderElectionNamespace, so that replicas never schedule at once.
	LeaderElect             bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	// ListenAddress serves Prometheus /metrics; HealthAddress /healthz and /readyz. "0"
	// disables either.
	ListenAddress string
	HealthAddress string
	// Profiling also serves Go's profiles (/debug/pprof/) on ListenAddress, as
	// kube-scheduler's --profiling does: how memory and CPU are spent at a user's scale.
	Profiling bool
	// NodePoolLabelKey and PartitionLabelValue choose the node pool this scheduler serves
	// (scheduling.NodePool): the Nodes, Queues and PodGroups whose NodePoolLabelKey label is
	// PartitionLabelValue, or, without a value, those without the label.
	NodePoolLabelKey    string
	PartitionLabelValue string
	// DispatchWorkers send binds, evictions and nominations to the API server in parallel,
	// off the scheduling cycle (apiwriter.Dispatcher); 0 sends them within the cycle, one at a time.
	DispatchWorkers int
	// MaxConsolidationPreemptees is how many jobs the consolidation action, when the
	// configuration runs it, may move in a cycle; 0 turns it off.
	MaxConsolidationPreemptees int
	// StatusWorkers write start stamps and PodGroup and Queue statuses in parallel, off the
	// cycle (status.Updater).
	StatusWorkers int
	// Clock is the scheduler's time (DefaultOptions: the real one). Required.
	Clock clock.WithTicker
	// Policy, when set, is used instead of loading SchedulerConf (the binary loads and checks
	// it before connecting to the cluster).
	Policy *scheduler.Policy
	// ConfigMap is the ConfigMap SchedulerConf is mounted from, if any: the scheduler, once
	// leader, posts on it what it made of the configuration, as events that `kubectl
	// describe configmap` shows to whoever edits it (see postConfiguration). Empty: none.
	ConfigMap types.NamespacedName
	// PodGrouperDefaults is the ConfigMap of per-kind default priority classes and
	// preemptibility (podgrouper.DefaultsConfigMap); empty: the built-in defaults.
	PodGrouperDefaults types.NamespacedName
	// ConfigWarnings are the warnings of loading Policy, when the caller loaded it.
	ConfigWarnings []string
	// WrapClient lets tests interpose on the writes of the status updater (nil: none).
	WrapClient func(client.Client) client.Client
	// GPUSharing is GPU sharing on the node: reservation pods, the shares' ConfigMaps and
	// the webhook preparing share pods (off by default, as upstream).
	GPUSharing GPUSharingOptions
	// MetricsRegistry is where the scheduler registers its metrics; nil is controller-runtime's
	// registry, the one served on ListenAddress. Tests that run several schedulers in one
	// process give each a registry of its own, and read what that scheduler recorded there.
	MetricsRegistry prometheus.Registerer
}

// GPUSharingOptions configure GPU sharing on the node (pkg/gpureservation, pkg/gpuwebhook).
type GPUSharingOptions struct {
	// Enabled makes the binder reserve each shared device with a reservation pod and write
	// each share's ConfigMaps before binding it, and serves the admission webhook.
	Enabled bool
	// ReservationImage runs in the reservation pods (cmd/kai-resource-reservation), as
	// ReservationServiceAccount, which may patch its own pod.
	ReservationImage          string
	ReservationServiceAccount string
	// RuntimeClass is given to reservation pods and to share pods naming none: one whose
	// runtime shows a container its devices (NVIDIA's: "nvidia").
	RuntimeClass string
	// CDI names devices by CDI name in the shares' ConfigMaps instead of by UUID.
	CDI bool
	// WebhookPort serves the webhook over TLS with the certificate in WebhookCertDir
	// (tls.crt, tls.key); 0 serves none (a webhook served elsewhere).
	WebhookPort    int
	WebhookCertDir string
	// CollectInterval is how often reservation pods no share holds are looked for, and
	// ReservationGrace how old one must be to be deleted (the scheduler's own binds are
	// known to the collector; see reservationGrace); 0 for the defaults. Not flags: tests
	// shorten them.
	CollectInterval, ReservationGrace time.Duration
}

// Check refuses a setting GPU sharing cannot run with, naming its flag.
func (o GPUSharingOptions) Check() error {
	if o.Enabled && o.ReservationImage == "" {
		return errors.New("--resource-reservation-image is required with --gpu-sharing: the reservation pods run it")
	}
	return nil
}

// checkDispatch refuses binds within the cycle with GPU sharing: a share's bind may wait for
// its device's reservation pod to start (up to 40 s), which would hold the cycle.
func (o Options) checkDispatch() error {
	if o.GPUSharing.Enabled && o.DispatchWorkers == 0 {
		return errors.New("--dispatch-workers=0 cannot run with --gpu-sharing: a share's bind may wait up to 40s for its device's reservation, and within the cycle that wait would hold every decision")
	}
	return nil
}

// Check refuses settings the scheduler cannot run with, naming their flags.
func (o Options) Check() error {
	return errors.Join(o.GPUSharing.Check(), o.checkDispatch())
}

// DefaultOptions are the flag defaults, matching KAI-Scheduler's.
func DefaultOptions() Options {
	return Options{
		SchedulerName: "kai-scheduler", SchedulePeriod: time.Second,
		LeaderElectionID: "kai-scheduler", LeaderElectionNamespace: defaultNamespace(),
		ListenAddress: ":8080", HealthAddress: ":8081", DispatchWorkers: apiwriter.DefaultDispatchWorkers,
		StatusWorkers: status.DefaultWorkers, Clock: clock.RealClock{},
		MaxConsolidationPreemptees: consolidation.DefaultMaxMovedJobs,
		NodePoolLabelKey:           scheduling.NodePoolLabel,
		GPUSharing: GPUSharingOptions{ReservationServiceAccount: "kai-resource-reservation", RuntimeClass: gpuwebhook.DefaultRuntimeClassName,
			WebhookPort: 9443, WebhookCertDir: "/tmp/k8s-webhook-server/serving-certs"},
	}
}

func defaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "kai-scheduler"
}

// LoadPolicy reads the configuration file (or the default) and builds its policy; every
// mistake in it is returned, naming the file, key and value.
func LoadPolicy(path string) (*scheduler.Policy, []string, error) {
	data, err := readConfig(path)
	if err != nil {
		return nil, nil, err
	}
	policy, warnings, err := scheduler.LoadPolicy(data)
	if err != nil {
		return nil, warnings, fmt.Errorf("scheduler configuration %s: %w", path, err)
	}
	return policy, warnings, nil
}

// readConfig reads the configuration file; nil, for the built-in default, when path is empty.
func readConfig(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scheduler configuration: %w", err)
	}
	return data, nil
}

// Once the scheduler is told to stop, it goes on writing the start stamps it owes for up to
// stampGrace, and on sending what it decided for up to decisionGrace, at the same time. Start
// stamps get the longer grace: they are the record of runs that did start, where a decision
// not sent is only not made. It stops promptly (Kubernetes gives a pod 30 s before killing
// it, a rollout waits for it); what is left is dropped, which the next leader makes good: it
// decides anew from what the API server holds, and stamps running jobs that have no stamp
// from their pods' start.
const (
	stampGrace    = 1500 * time.Millisecond
	decisionGrace = 250 * time.Millisecond
)

// Run starts the scheduler and blocks until ctx ends (SIGTERM in the binary), then shuts
// down: the current cycle ends after the action it is in, what was decided is sent and the
// start stamps owed are written for a moment (stampGrace), the Lease is released.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	log := klog.FromContext(ctx)
	if err := opts.Check(); err != nil {
		return err
	}
	policy, warnings := opts.Policy, opts.ConfigWarnings
	if policy == nil {
		loaded, loadWarnings, err := LoadPolicy(opts.SchedulerConf)
		for _, w := range loadWarnings {
			log.Info("Configuration warning", "warning", w)
		}
		if err != nil {
			return err
		}
		policy, warnings = loaded, loadWarnings
	}
	policy.SetMaxConsolidationPreemptees(opts.MaxConsolidationPreemptees)
	pool := scheduling.NodePool{LabelKey: opts.NodePoolLabelKey, Name: opts.PartitionLabelValue}
	registry := opts.MetricsRegistry
	if registry == nil {
		// The binary's one process-wide registration: controller-runtime's metrics server
		// serves its own global registry and no other, beside its own metrics (leader
		// election, client, work queues). The collectors are this scheduler's all the same,
		// taken back when it stops.
		registry = ctrlmetrics.Registry
	}
	recorded, err := metrics.NewPrometheus(registry, pool.Name)
	if err != nil {
		return err
	}
	defer recorded.Unregister()
	clk := opts.Clock
	scheme, err := install.Scheme()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Logger:                        log,
		Metrics:                       metricsserver.Options{BindAddress: opts.ListenAddress, ExtraHandlers: profilingHandlers(opts.Profiling)},
		HealthProbeBindAddress:        opts.HealthAddress,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		// The informers keep every pod and node of the cluster: only what is read.
		Cache: ctrlcache.Options{DefaultTransform: store.Trim},
		// The pod grouper's controller name is fixed; tests run several schedulers (a restart)
		// in one process, which controller-runtime's global name check would refuse.
		Controller:    config.Controller{SkipNameValidation: ptr.To(true)},
		WebhookServer: webhookServer(opts.GPUSharing),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	var statusClient client.Client
	if opts.WrapClient != nil {
		statusClient = opts.WrapClient(mgr.GetClient())
	}
	reservations := reserver(mgr, opts.GPUSharing, clk)
	recorder := mgr.GetEventRecorderFor(opts.SchedulerName) //nolint:staticcheck // the events.k8s.io recorder is not wired for PodGroups yet
	s, err := scheduler.New(scheduler.Options{
		Name: opts.SchedulerName, Pool: pool, Policy: policy, Clock: clk, Period: opts.SchedulePeriod,
		Client: mgr.GetClient(), StatusClient: statusClient, Events: recorder, Metrics: recorded,
		DispatchWorkers: opts.DispatchWorkers, DecisionGrace: decisionGrace,
		StatusWorkers: opts.StatusWorkers, StampGrace: stampGrace,
		Reservations: reservations,
	})
	if err != nil {
		return err
	}
	synced, err := feed(ctx, mgr.GetCache(), mgr.GetRESTMapper(), scheme, s.Store)
	if err != nil {
		return err
	}
	s.Loop.Synced = synced
	runnables := []manager.Runnable{s.Loop, s.Status}
	if s.Dispatcher != nil {
		runnables = append(runnables, s.Dispatcher)
	}
	for _, r := range runnables {
		if err := mgr.Add(r); err != nil {
			return err
		}
	}
	if err := serveGPUSharing(mgr, opts, clk, reservations, pool); err != nil {
		return err
	}
	if opts.ConfigMap.Name != "" {
		post := postConfigurationRunnable(mgr.GetAPIReader(), recorder, clk, opts.ConfigMap, pool, policy, warnings)
		if err := mgr.Add(post); err != nil {
			return err
		}
	}
	if err := newPodGrouper(mgr, opts, pool, clk, recorder).SetupWithManager(mgr); err != nil {
		return err
	}
	log.Info("Starting scheduler", "name", opts.SchedulerName, "nodePool", pool.String(), "poolLabel", pool.LabelKey,
		"period", opts.SchedulePeriod, "leaderElect", opts.LeaderElect, "lease", opts.LeaderElectionID)
	return mgr.Start(ctx)
}

// webhookServer serves GPU sharing's admission webhook when it is on and has a port; nil
// serves no webhook.
func webhookServer(o GPUSharingOptions) webhook.Server {
	if !o.Enabled || o.WebhookPort == 0 {
		return nil
	}
	return webhook.NewServer(webhook.Options{Port: o.WebhookPort, CertDir: o.WebhookCertDir})
}

// reserver readies nodes for GPU shares when GPU sharing is on; nil otherwise.
func reserver(mgr ctrl.Manager, o GPUSharingOptions, clk clock.Clock) *gpureservation.Reserver {
	if !o.Enabled {
		return nil
	}
	return &gpureservation.Reserver{Client: mgr.GetClient(), Clock: clk, Image: o.ReservationImage,
		ServiceAccount: o.ReservationServiceAccount, RuntimeClass: o.RuntimeClass, CDI: o.CDI}
}

// serveGPUSharing adds, when GPU sharing is on, the collector of reservation pods no share
// holds (on the leader) and the webhook (on every replica, as the API server may call any).
func serveGPUSharing(mgr ctrl.Manager, opts Options, clk clock.Clock, reservations *gpureservation.Reserver, pool scheduling.NodePool) error {
	o := opts.GPUSharing
	if !o.Enabled {
		return nil
	}
	collector := &gpureservation.Collector{Client: mgr.GetClient(), Clock: clk,
		Grace: cmp.Or(o.ReservationGrace, reservationGrace), Interval: cmp.Or(o.CollectInterval, reservationCollectInterval),
		InUse: reservations.InUse, OwnsNode: ownsNode(mgr.GetClient(), pool)}
	if err := mgr.Add(collector); err != nil {
		return err
	}
	if o.WebhookPort == 0 {
		return nil
	}
	return gpuwebhook.Register(mgr.GetWebhookServer(), gpuwebhook.Options{RuntimeClassName: o.RuntimeClass, SchedulerName: opts.SchedulerName})
}

// ownsNode reports whether a node is of the scheduler's pool, as the informers show it: a
// node not known is not its own (the collector leaves its reservations).
func ownsNode(c client.Reader, pool scheduling.NodePool) func(string) bool {
	return func(name string) bool {
		node := &v1.Node{}
		return c.Get(context.Background(), client.ObjectKey{Name: name}, node) == nil && pool.Includes(node.Labels)
	}
}

// reservationCollectInterval is how often reservation pods no share holds are looked for: a
// device stays held by one until it is deleted, so not much longer than a pod takes to go.
// reservationGrace is how old one must be: this scheduler's own binds are known to the
// collector (Reserver.InUse), so the grace only covers a bind it cannot know of, one of a
// scheduler stopped meanwhile, whose share is never labelled anyway.
const (
	reservationCollectInterval = 5 * time.Second
	reservationGrace           = 20 * time.Second
)

// newPodGrouper reads workloads' owners straight from the API server (no informer of every
// Deployment and Job in the cluster: each workload's chain is read once, when its first pod
// comes), and PriorityClasses from the manager's cache.
func newPodGrouper(mgr ctrl.Manager, opts Options, pool scheduling.NodePool, clk clock.WithTicker, recorder record.EventRecorder) *podgrouper.Reconciler {
	grouper := podgrouper.NewGrouper(podgrouper.APIOwners{Reader: mgr.GetAPIReader()}, clk, pool)
	grouper.PriorityClassExists = func(ctx context.Context, name string) (bool, error) {
		err := mgr.GetClient().Get(ctx, client.ObjectKey{Name: name}, &schedulingv1.PriorityClass{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
	if key := opts.PodGrouperDefaults; key.Name != "" {
		defaults := &podgrouper.DefaultsConfigMap{Reader: mgr.GetAPIReader(), Key: key, Clock: clk, Refresh: time.Minute,
			Report: func(cm *v1.ConfigMap, err error) {
				recorder.AnnotatedEventf(cm, scheduling.ProblemEventAnnotations(), v1.EventTypeWarning, "InvalidPodGrouperDefaults",
					"the pod grouper keeps its last good defaults: %v", err)
			}}
		grouper.Defaults = defaults.Table
	}
	return podgrouper.NewReconciler(mgr.GetClient(), grouper, opts.SchedulerName, recorder)
}

// profilingHandlers are Go's profiling endpoints, when asked for.
func profilingHandlers(enabled bool) map[string]http.Handler {
	if !enabled {
		return nil
	}
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index), // heap, goroutine, allocs... by name
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}

// watchedKind is a kind the store is fed from an informer.
type watchedKind struct {
	obj client.Object
	// notServed, set on a kind whose CRD a cluster may lack (a scheduler upgraded without its
	// CRDs), is the warning logged where the API server does not serve it: the scheduler then
	// runs without the kind, instead of waiting for an informer that could never sync, which
	// would hold every cycle. Empty: the scheduler needs the kind.
	notServed string
}

// watchedKinds are the kinds a snapshot reads, each through an informer.
func watchedKinds() []watchedKind {
	return []watchedKind{
		{obj: &v1.Node{}}, {obj: &v1.Pod{}}, {obj: &v2alpha2.PodGroup{}}, {obj: &v2.Queue{}}, {obj: &schedulingv1.PriorityClass{}},
		{obj: &v1alpha1.Topology{}, notServed: "Warning: topology constraints cannot be honoured: the CRD topologies.kai.scheduler " +
			"is not served, so the scheduler runs without topologies and a job naming one gets no nodes; " +
			"apply deployments/kai-scheduler/crds/ and restart the scheduler"},
	}
}

// Watched returns the resource of every kind the scheduler's informers watch: it must get,
// list and watch each (the chart's ClusterRole is tested against this list).
func Watched() ([]schema.GroupResource, error) {
	scheme, err := install.Scheme()
	if err != nil {
		return nil, err
	}
	var resources []schema.GroupResource
	for _, w := range watchedKinds() {
		gvk, err := apiutil.GVKForObject(w.obj, scheme)
		if err != nil {
			return nil, err
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		resources = append(resources, plural.GroupResource())
	}
	return resources, nil
}

// feed registers the store with the informers of every kind a snapshot reads, and returns
// what tells when each has handed the store its initial list. A kind the scheduler can run
// without (watchedKind.notServed) is looked up in mapper first: where the API server does
// not serve it, feed logs its warning and leaves it out.
func feed(ctx context.Context, informers ctrlcache.Informers, mapper meta.RESTMapper, scheme *runtime.Scheme, converted *store.Store) ([]toolscache.InformerSynced, error) {
	var synced []toolscache.InformerSynced
	for _, w := range watchedKinds() {
		if w.notServed != "" {
			served, err := isServed(mapper, scheme, w.obj)
			if err != nil {
				return nil, err
			}
			if !served {
				klog.FromContext(ctx).Info(w.notServed, "kind", fmt.Sprintf("%T", w.obj))
				continue
			}
		}
		informer, err := informers.GetInformer(ctx, w.obj)
		if err != nil {
			return nil, fmt.Errorf("informer for %T: %w", w.obj, err)
		}
		registration, err := informer.AddEventHandler(converted.Handler())
		if err != nil {
			return nil, fmt.Errorf("watching %T: %w", w.obj, err)
		}
		synced = append(synced, registration.HasSynced)
	}
	return synced, nil
}

// isServed reports whether the API server serves obj's kind, as mapper's discovery finds it;
// an error is a discovery that failed (the API server unreachable, say), not a kind missing.
func isServed(mapper meta.RESTMapper, scheme *runtime.Scheme, obj client.Object) (bool, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return false, err
	}
	_, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	default:
		return false, fmt.Errorf("finding whether the API server serves %s: %w", gvk, err)
	}
}
