// Command kai-scheduler is a KAI-Scheduler-compatible batch scheduler for Kubernetes with
// guaranteed minimum runtime before preemption and reclaim.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kai-minruntime/kai-scheduler/pkg/app"
)

func main() {
	opts := app.DefaultOptions()
	flags := pflag.NewFlagSet("kai-scheduler", pflag.ContinueOnError)
	flags.StringVar(&opts.SchedulerConf, "scheduler-conf", "", "Scheduler configuration file (YAML: actions and plugin tiers). Empty runs the built-in default.")
	flags.StringVar(&opts.SchedulerName, "scheduler-name", opts.SchedulerName, "Schedule the pods whose spec.schedulerName is this.")
	flags.DurationVar(&opts.SchedulePeriod, "schedule-period", opts.SchedulePeriod, "Time between scheduling cycles.")
	flags.BoolVar(&opts.LeaderElect, "leader-elect", false, "Schedule only while holding a Lease, so that several replicas never schedule at once.")
	flags.StringVar(&opts.LeaderElectionID, "leader-elect-id", opts.LeaderElectionID, "Name of the leader-election Lease.")
	flags.StringVar(&opts.LeaderElectionNamespace, "leader-elect-namespace", opts.LeaderElectionNamespace, "Namespace of the leader-election Lease (default: $POD_NAMESPACE, else kai-scheduler).")
	flags.StringVar(&opts.ListenAddress, "listen-address", opts.ListenAddress, "Address serving Prometheus /metrics (\"0\" disables).")
	flags.StringVar(&opts.HealthAddress, "health-address", opts.HealthAddress, "Address serving /healthz and /readyz (\"0\" disables).")
	goFlags := flag.NewFlagSet("go", flag.ContinueOnError)
	klog.InitFlags(goFlags)
	ctrl.RegisterFlags(goFlags) // --kubeconfig; in-cluster configuration when empty
	flags.AddGoFlagSet(goFlags)
	if err := flags.Parse(os.Args[1:]); err != nil {
		if err == pflag.ErrHelp {
			return
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctrl.SetLogger(klog.NewKlogr())
	ctx := ctrl.SetupSignalHandler() // SIGTERM and SIGINT end the context: a clean shutdown
	cfg, err := ctrl.GetConfig()
	if err != nil {
		klog.ErrorS(err, "No Kubernetes configuration: pass --kubeconfig or run in a cluster")
		os.Exit(1)
	}
	if err := app.Run(ctx, cfg, opts); err != nil {
		klog.ErrorS(err, "Scheduler stopped")
		os.Exit(1)
	}
}
