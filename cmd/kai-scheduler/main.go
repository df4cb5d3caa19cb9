// Command kai-scheduler is a KAI-Scheduler-compatible batch scheduler for Kubernetes with
// guaranteed minimum runtime before preemption and reclaim.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kai-minruntime/kai-scheduler/pkg/app"
	"github.com/kai-minruntime/kai-scheduler/pkg/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run parses the flags and runs the scheduler until SIGTERM, or only checks the
// configuration (check-config, the report on stdout); it returns the exit code.
func run(args []string, stdout, output io.Writer) int {
	opts := app.DefaultOptions()
	checkOnly := len(args) > 0 && args[0] == "check-config"
	if checkOnly {
		args = args[1:]
	}
	flags := newFlags(&opts)
	var configMap, defaultsConfigMap string
	var showVersion bool
	flags.BoolVar(&showVersion, "version", false, "Print the version, the commit and the Go that built the binary, and exit.")
	flags.StringVar(&configMap, "scheduler-conf-configmap", "", "[NAMESPACE/]NAME of the ConfigMap --scheduler-conf is mounted from: the leader posts events on it saying what it runs and what it ignored. The namespace defaults to the scheduler's ($POD_NAMESPACE); the chart's RBAC lets it read only its own ConfigMaps there.")
	flags.StringVar(&defaultsConfigMap, "podgrouper-defaults-configmap", "", "[NAMESPACE/]NAME of a ConfigMap whose key \"defaults\" lists, per workload kind, the priority class and preemptibility the pod grouper gives workloads that name none (YAML: [{typeName, group, priorityName, preemptibility}]); read again each minute. Empty: the built-in defaults (train; inference for Deployments and Knative; build for Notebooks).")
	flags.Usage = func() {
		fmt.Fprintf(output, "Usage: kai-scheduler [flags]\n       kai-scheduler check-config [--scheduler-conf FILE]\n"+
			"\ncheck-config prints what the scheduler would do with the configuration (actions, plugins and\n"+
			"their settings, what it ignores or refuses) and exits 0 if it would start, 1 if not.\n\nFlags:\n")
		flags.PrintDefaults()
	}
	flags.SetOutput(output)
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(output, err)
		return 2
	}
	if showVersion {
		fmt.Fprintln(stdout, version.Line("kai-scheduler"))
		return 0
	}
	if opts.SchedulePeriod <= 0 {
		fmt.Fprintf(output, "--schedule-period: must be positive, got %s\n", opts.SchedulePeriod)
		return 2
	}
	if flags.NArg() > 0 {
		// "kai-scheduler --scheduler-conf f check-config" must not start a scheduler.
		fmt.Fprintf(output, "unexpected argument %q (check-config must come first)\n", flags.Arg(0))
		return 2
	}
	if err := applyPool(&opts, flags.Changed("leader-elect-id")); err != nil {
		fmt.Fprintln(output, err)
		return 2
	}
	if configMap != "" {
		key, err := app.ParseConfigMap(configMap)
		if err != nil {
			fmt.Fprintf(output, "--scheduler-conf-configmap: %v\n", err)
			return 2
		}
		opts.ConfigMap = key
	}
	if defaultsConfigMap != "" {
		key, err := app.ParseConfigMap(defaultsConfigMap)
		if err != nil {
			fmt.Fprintf(output, "--podgrouper-defaults-configmap: %v\n", err)
			return 2
		}
		opts.PodGrouperDefaults = key
	}
	if opts.DispatchWorkers < 0 {
		fmt.Fprintf(output, "--dispatch-workers: must be 0 or more, got %d\n", opts.DispatchWorkers)
		return 2
	}
	if opts.MaxConsolidationPreemptees < 0 {
		fmt.Fprintf(output, "--max-consolidation-preemptees: must be 0 or more, got %d\n", opts.MaxConsolidationPreemptees)
		return 2
	}
	if opts.StatusWorkers < 1 {
		fmt.Fprintf(output, "--status-workers: must be 1 or more, got %d\n", opts.StatusWorkers)
		return 2
	}
	if err := opts.Check(); err != nil {
		fmt.Fprintln(output, err)
		return 2
	}
	if checkOnly {
		if app.CheckConfig(stdout, opts.SchedulerConf, opts.MaxConsolidationPreemptees) {
			return 0
		}
		return 1
	}
	// The configuration is checked before anything connects to a cluster, so a mistake in it
	// is the first and only thing an operator sees.
	policy, warnings, err := app.LoadPolicy(opts.SchedulerConf)
	for _, w := range warnings {
		fmt.Fprintln(output, "warning:", w)
	}
	if err != nil {
		fmt.Fprintln(output, err)
		return 1
	}
	opts.Policy, opts.ConfigWarnings = policy, warnings
	ctrl.SetLogger(klog.NewKlogr())
	ctx := ctrl.SetupSignalHandler() // SIGTERM and SIGINT end the context: a clean shutdown
	cfg, err := ctrl.GetConfig()
	if err != nil {
		klog.ErrorS(err, "No Kubernetes configuration: pass --kubeconfig or run in a cluster")
		return 1
	}
	if err := app.Run(ctx, cfg, opts); err != nil {
		klog.ErrorS(err, "Scheduler stopped")
		return 1
	}
	return 0
}

// newFlags defines the KAI-compatible flags, plus klog's and --kubeconfig.
func newFlags(opts *app.Options) *pflag.FlagSet {
	flags := pflag.NewFlagSet("kai-scheduler", pflag.ContinueOnError)
	flags.StringVar(&opts.SchedulerConf, "scheduler-conf", "", "Scheduler configuration file (YAML: actions and plugin tiers). Empty runs the built-in default.")
	flags.StringVar(&opts.SchedulerName, "scheduler-name", opts.SchedulerName, "Schedule the pods whose spec.schedulerName is this.")
	flags.DurationVar(&opts.SchedulePeriod, "schedule-period", opts.SchedulePeriod, "Time between scheduling cycles.")
	flags.BoolVar(&opts.LeaderElect, "leader-elect", false, "Schedule only while holding a Lease, so that several replicas never schedule at once.")
	flags.StringVar(&opts.LeaderElectionID, "leader-elect-id", opts.LeaderElectionID, "Name of the leader-election Lease.")
	flags.StringVar(&opts.LeaderElectionNamespace, "leader-elect-namespace", opts.LeaderElectionNamespace, "Namespace of the leader-election Lease ($POD_NAMESPACE if set).")
	flags.StringVar(&opts.ListenAddress, "listen-address", opts.ListenAddress, "Address serving Prometheus /metrics (\"0\" disables).")
	flags.BoolVar(&opts.Profiling, "profiling", false, "Also serve Go's profiles (/debug/pprof/) on --listen-address.")
	flags.StringVar(&opts.HealthAddress, "health-address", opts.HealthAddress, "Address serving /healthz and /readyz (\"0\" disables).")
	flags.StringVar(&opts.NodePoolLabelKey, "nodepool-label-key", opts.NodePoolLabelKey, "Label that assigns Nodes, Queues and PodGroups to node pools (scheduler shards); empty serves the whole cluster.")
	flags.StringVar(&opts.PartitionLabelValue, "partition-label-value", "", "Node pool this scheduler serves: the objects whose --nodepool-label-key label has this value. Empty serves the objects without the label.")
	flags.IntVar(&opts.MaxConsolidationPreemptees, "max-consolidation-preemptees", opts.MaxConsolidationPreemptees, "Jobs the consolidation action may move (evict, to be placed again elsewhere) in a cycle; 0 turns it off.")
	flags.IntVar(&opts.DispatchWorkers, "dispatch-workers", opts.DispatchWorkers, "Binds, evictions and nominations sent to the API server in parallel, off the scheduling cycle; 0 sends them within the cycle, one at a time.")
	flags.IntVar(&opts.StatusWorkers, "status-workers", opts.StatusWorkers, "Start stamps and PodGroup and Queue statuses written to the API server in parallel, off the scheduling cycle (start stamps first).")
	sharing := &opts.GPUSharing
	flags.BoolVar(&sharing.Enabled, "gpu-sharing", false, "GPU sharing on the node: reserve each shared device with a reservation pod in namespace kai-resource-reservation, write each share's ConfigMaps (NVIDIA_VISIBLE_DEVICES, GPU_PORTION) before binding it, and serve the webhook that prepares share pods. Off: shares are scheduled and labelled with their GPU group only.")
	flags.StringVar(&sharing.ReservationImage, "resource-reservation-image", "", "Image of the reservation pods (kai-resource-reservation); required with --gpu-sharing.")
	flags.StringVar(&sharing.ReservationServiceAccount, "resource-reservation-service-account", sharing.ReservationServiceAccount, "Service account of the reservation pods, which may patch their own pod.")
	flags.StringVar(&sharing.RuntimeClass, "gpu-sharing-runtime-class", sharing.RuntimeClass, "Runtime class of the reservation pods, and of share pods naming none.")
	flags.BoolVar(&sharing.CDI, "cdi-enabled", false, "Name the devices in the shares' ConfigMaps by CDI name (k8s.device-plugin.nvidia.com/gpu=UUID) instead of by UUID.")
	flags.IntVar(&sharing.WebhookPort, "webhook-port", sharing.WebhookPort, "Port serving the GPU-sharing admission webhook over TLS (with --gpu-sharing); 0 serves none.")
	flags.StringVar(&sharing.WebhookCertDir, "webhook-cert-dir", sharing.WebhookCertDir, "Directory holding the webhook's serving certificate (tls.crt, tls.key).")
	goFlags := flag.NewFlagSet("go", flag.ContinueOnError)
	klog.InitFlags(goFlags)
	ctrl.RegisterFlags(goFlags) // --kubeconfig; in-cluster configuration when empty
	flags.AddGoFlagSet(goFlags)
	return flags
}

// applyPool checks the node-pool flags and gives a pool's scheduler its own Lease, unless
// --leader-elect-id was given: one Lease for every pool would let only one pool be scheduled.
func applyPool(opts *app.Options, leaseIDGiven bool) error {
	if opts.PartitionLabelValue == "" {
		return nil
	}
	if opts.NodePoolLabelKey == "" {
		return errors.New("--partition-label-value: needs --nodepool-label-key, which is empty")
	}
	if !leaseIDGiven {
		opts.LeaderElectionID += "-" + opts.PartitionLabelValue
		if problems := validation.IsDNS1123Subdomain(opts.LeaderElectionID); len(problems) > 0 {
			// Label values may hold capitals and underscores, Lease names not: leader
			// election would never succeed, with nothing to show for it.
			return fmt.Errorf("--partition-label-value: %q cannot name this pool's Lease %q (%s); give one with --leader-elect-id",
				opts.PartitionLabelValue, opts.LeaderElectionID, strings.Join(problems, "; "))
		}
	}
	return nil
}
