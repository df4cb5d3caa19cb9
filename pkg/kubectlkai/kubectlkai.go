package kubectlkai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling/install"
	"github.com/kai-minruntime/kai-scheduler/pkg/explain"
	"github.com/kai-minruntime/kai-scheduler/pkg/scheduler/model"
	"github.com/kai-minruntime/kai-scheduler/pkg/snapshot"
	"github.com/kai-minruntime/kai-scheduler/pkg/version"
)

// Connector reaches the cluster of a kubeconfig and context (empty: the defaults kubectl
// uses) and tells the namespace that context selects.
type Connector func(kubeconfig, context string) (client.Reader, string, error)

const usage = `Usage:
  kubectl kai explain podgroup NAMESPACE/NAME   (or: podgroup NAME -n NAMESPACE; pg for short)
  kubectl kai explain queue NAME
  kubectl kai snapshot [--assume-runtime 2h] [--include images,env,volumes] > today.yaml
  kubectl kai --version

explain tells how the scheduler treats a PodGroup (what protects a running job, against whom
and until when; why a pending job waits) or a queue (the min-runtimes its jobs get), with the
scheduler's own code and configuration.

snapshot writes the cluster as a kai-sim scenario: nodes, Topologies, PriorityClasses,
queues, jobs and pods, running jobs with how long they have run (so min-runtime protection
carries over), pending jobs with how long they have waited. A job runs for its PodGroup's
(or a pod's) kai.scheduler/expected-runtime annotation, or else --assume-runtime more.
Images, environment and volumes are left out unless included. Then: kai-sim today.yaml

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
	assumeRuntime := flags.Duration("assume-runtime", 2*time.Hour, "snapshot: what a job without kai.scheduler/expected-runtime needs from the snapshot on (a running job beyond what it has run); 0: it never finishes.")
	include := flags.StringSlice("include", nil, "snapshot: also export these pod fields: "+strings.Join(snapshot.Includable, ", ")+" (left out by default: they may hold secrets).")
	showVersion := flags.Bool("version", false, "Print the version, the commit and the Go that built kubectl-kai, and exit.")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "kubectl-kai: %v\nRun 'kubectl kai --help' for usage.\n", err)
		return 2
	}
	if *showVersion { // needs no command and connects nowhere
		fmt.Fprintln(stdout, version.Line("kubectl-kai"))
		return 0
	}
	target, mistakes := parseTarget(flags.Args())
	for _, field := range *include {
		if !slices.Contains(snapshot.Includable, field) {
			mistakes = append(mistakes, fmt.Sprintf("--include: unknown field %q (known: %s)", field, strings.Join(snapshot.Includable, ", ")))
		}
	}
	if *assumeRuntime < 0 {
		mistakes = append(mistakes, fmt.Sprintf("--assume-runtime: must not be negative, got %s", *assumeRuntime))
	}
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
	if target.kind == "snapshot" {
		err = writeSnapshot(ctx, stdout, reader, clk.Now(), snapshot.Options{
			SchedulerName: *schedulerName, AssumeRuntime: *assumeRuntime, Include: *include, Source: contextName(*kubeContext),
		})
		if err != nil {
			fmt.Fprintf(stderr, "kubectl-kai: snapshot: %v\n", err)
			return 1
		}
		return 0
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

// target is what to explain (a PodGroup or a queue), or the snapshot command.
type target struct {
	kind, name string
}

// parseTarget reads `explain KIND NAME` or `snapshot`, listing every mistake.
func parseTarget(args []string) (target, []string) {
	if len(args) == 0 {
		return target{}, []string{"a command is needed: explain or snapshot"}
	}
	if args[0] == "snapshot" {
		if len(args) > 1 {
			return target{}, []string{fmt.Sprintf("snapshot takes no arguments, got %q (it writes to standard output)", args[1:])}
		}
		return target{kind: "snapshot"}, nil
	}
	if args[0] != "explain" {
		return target{}, []string{fmt.Sprintf("unknown command %q (known: explain, snapshot)", args[0])}
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
		if config, err = configFromMap(ctx, reader, o.mapRef, o.key); err != nil {
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
	return cluster.PodGroup(ctx, w, model.NewJobID(namespace, name))
}

// configFromMap reads the scheduler configuration from key of the ConfigMap ref. When it finds
// none there (no such ConfigMap, one the user may not read, no such key), its error names
// every other way to give explain the configuration.
func configFromMap(ctx context.Context, reader client.Reader, ref types.NamespacedName, key string) ([]byte, error) {
	cm := &v1.ConfigMap{}
	if err := reader.Get(ctx, ref, cm); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("ConfigMap %s not found%s", ref, noConfigHint(key))
		case apierrors.IsForbidden(err):
			return nil, fmt.Errorf("reading ConfigMap %s: %w%s", ref, err, noConfigHint(key))
		}
		return nil, fmt.Errorf("reading ConfigMap %s: %w", ref, err)
	}
	data, ok := cm.Data[key]
	if !ok {
		keys := "none"
		if len(cm.Data) > 0 {
			keys = strings.Join(slices.Sorted(maps.Keys(cm.Data)), ", ")
		}
		return nil, fmt.Errorf("ConfigMap %s has no key %q (its keys: %s)%s", ref, key, keys, noConfigHint(key))
	}
	return []byte(data), nil
}

// noConfigHint lists every way to give explain the scheduler's configuration, for an error
// that found none where it looked.
func noConfigHint(key string) string {
	return fmt.Sprintf(`.
explain needs the scheduler's configuration; give it with one of:
  --config-map NAMESPACE/NAME  the ConfigMap the scheduler's --scheduler-conf is mounted from
                               (the chart's: RELEASE-config in the release namespace), and
                               --config-key KEY if the key is not %q
  --config-file FILE           the file the scheduler reads with --scheduler-conf
  --default-config             the built-in configuration, when the scheduler runs without
                               --scheduler-conf`, key)
}

// writeSnapshot reads the whole cluster first, so that a failure writes nothing.
func writeSnapshot(ctx context.Context, w io.Writer, reader client.Reader, now time.Time, opts snapshot.Options) error {
	cluster, err := snapshot.Read(ctx, reader, now, opts)
	if err != nil {
		return err
	}
	return cluster.Write(w, opts)
}

// contextName names the cluster in a snapshot's header: the kubeconfig context given, if any.
func contextName(kubeContext string) string {
	if kubeContext == "" {
		return ""
	}
	return "context " + kubeContext
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
	scheme, err := install.Scheme()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	return c, namespace, err
}
