package kubectlkai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/explain"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/api"
)

// Connector reaches the cluster of a kubeconfig and context (empty: the defaults kubectl
// uses) and tells the namespace that context selects.
type Connector func(kubeconfig, context string) (client.Reader, string, error)

const usage = `Usage:
  kubectl kai explain podgroup NAMESPACE/NAME   (or: podgroup NAME -n NAMESPACE; pg for short)
  kubectl kai explain queue NAME

Explains how the scheduler treats a PodGroup (what protects a running job, against whom and
until when; why a pending job waits) or a queue (the min-runtimes its jobs get), with the
scheduler's own code and configuration.

Flags:
`

// Run runs one kubectl-kai command and returns its exit code: 0 done, 1 failed, 2 misused.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, connect Connector, clk clock.PassiveClock) int {
	flags := pflag.NewFlagSet("kubectl-kai", pflag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprint(stderr, usage)
		flags.PrintDefaults()
	}
	kubeconfig := flags.String("kubeconfig", "", "Path to the kubeconfig file (default: as kubectl finds it).")
	kubeContext := flags.String("context", "", "The kubeconfig context to use.")
	namespace := flags.StringP("namespace", "n", "", "Namespace of a PodGroup named without one (default: the context's).")
	configMap := flags.String("config-map", "kai-scheduler/kai-scheduler-config", "The scheduler's configuration ConfigMap, NAMESPACE/NAME (the chart's is RELEASE-config in the release namespace).")
	configKey := flags.String("config-key", "scheduler-config.yaml", "The ConfigMap key holding the configuration.")
	configFile := flags.String("config-file", "", "Read the configuration from this file instead of the ConfigMap.")
	defaultConfig := flags.Bool("default-config", false, "The scheduler runs its built-in configuration (no --scheduler-conf): use that.")
	schedulerName := flags.String("scheduler-name", "kai-scheduler", "The scheduler's name (spec.schedulerName of its pods).")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "kubectl-kai: %v\nRun 'kubectl kai --help' for usage.\n", err)
		return 2
	}
	target, mistakes := parseTarget(flags.Args())
	if *configFile != "" && *defaultConfig {
		mistakes = append(mistakes, "--config-file and --default-config: give one")
	}
	mapRef, err := parseRef(*configMap)
	if err != nil {
		mistakes = append(mistakes, "--config-map: "+err.Error())
	}
	if len(mistakes) > 0 {
		for _, m := range mistakes {
			fmt.Fprintln(stderr, "kubectl-kai: "+m)
		}
		fmt.Fprintln(stderr, "Run 'kubectl kai --help' for usage.")
		return 2
	}

	reader, contextNamespace, err := connect(*kubeconfig, *kubeContext)
	if err != nil {
		fmt.Fprintf(stderr, "kubectl-kai: connecting to the cluster: %v\n", err)
		return 1
	}
	if err := explainTarget(ctx, stdout, reader, target, options{
		namespace: firstNonEmpty(*namespace, contextNamespace, "default"), mapRef: mapRef, key: *configKey,
		file: *configFile, builtIn: *defaultConfig, schedulerName: *schedulerName, clock: clk,
	}); err != nil {
		fmt.Fprintf(stderr, "kubectl-kai: %v\n", err)
		return 1
	}
	return 0
}

// target is what to explain: a PodGroup or a queue.
type target struct {
	kind, name string
}

// parseTarget reads `explain KIND NAME`, listing every mistake.
func parseTarget(args []string) (target, []string) {
	if len(args) == 0 {
		return target{}, []string{"a command is needed: explain"}
	}
	if args[0] != "explain" {
		return target{}, []string{fmt.Sprintf("unknown command %q (known: explain)", args[0])}
	}
	if len(args) != 3 {
		return target{}, []string{"explain takes a kind (podgroup or queue) and a name"}
	}
	switch kind := strings.ToLower(args[1]); kind {
	case "podgroup", "podgroups", "pg":
		return target{"podgroup", args[2]}, nil
	case "queue", "queues":
		return target{"queue", args[2]}, nil
	default:
		return target{}, []string{fmt.Sprintf("explain: unknown kind %q (known: podgroup, pg, queue)", args[1])}
	}
}

type options struct {
	namespace, key, file, schedulerName string
	mapRef                              types.NamespacedName
	builtIn                             bool
	clock                               clock.PassiveClock
}

func explainTarget(ctx context.Context, w io.Writer, reader client.Reader, t target, o options) error {
	var config []byte
	var err error
	switch {
	case o.builtIn:
	case o.file != "":
		if config, err = os.ReadFile(o.file); err != nil {
			return fmt.Errorf("--config-file: %w", err)
		}
	default:
		if config, err = explain.ConfigFromMap(ctx, reader, o.mapRef, o.key); err != nil {
			return err
		}
	}
	cluster, err := explain.Load(ctx, reader, o.schedulerName, config, o.clock)
	if err != nil {
		return err
	}
	if t.kind == "queue" {
		return cluster.Queue(ctx, w, t.name)
	}
	namespace, name, found := strings.Cut(t.name, "/")
	if !found {
		namespace, name = o.namespace, t.name
	}
	return cluster.PodGroup(ctx, w, api.NewJobID(namespace, name))
}

func parseRef(s string) (types.NamespacedName, error) {
	namespace, name, found := strings.Cut(s, "/")
	if !found || namespace == "" || name == "" {
		return types.NamespacedName{}, fmt.Errorf("want NAMESPACE/NAME, got %q", s)
	}
	return types.NamespacedName{Namespace: namespace, Name: name}, nil
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// Connect reaches a cluster the way kubectl does: the kubeconfig's loading rules
// ($KUBECONFIG, ~/.kube/config) unless a path is given, and its current context unless
// one is named.
func Connect(kubeconfig, kubeContext string) (client.Reader, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	namespace, _, err := loader.Namespace()
	if err != nil {
		return nil, "", err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	if err := install.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	return c, namespace, err
}
