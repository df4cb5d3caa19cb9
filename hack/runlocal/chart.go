package main

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/test/helm"
)

// The release run-local installs the scheduler's configuration as: the README's `helm install
// kai-scheduler deployments/kai-scheduler -n kai-scheduler`, whose ConfigMap is the one
// `kubectl kai explain` reads when given no --config-map.
const (
	chartRelease   = "kai-scheduler"
	chartNamespace = "kai-scheduler"
)

// chartConfig is the scheduler configuration as the Helm chart installs it: the ConfigMap it
// renders, and the key of it that the scheduler reads (the chart mounts the ConfigMap as a
// directory and points --scheduler-conf at the key's file).
type chartConfig struct {
	ConfigMap *unstructured.Unstructured
	Key       string
}

// Ref is the ConfigMap's namespace and name.
func (c chartConfig) Ref() types.NamespacedName {
	return types.NamespacedName{Namespace: c.ConfigMap.GetNamespace(), Name: c.ConfigMap.GetName()}
}

// Data is the configuration itself.
func (c chartConfig) Data() string {
	data, _, _ := unstructured.NestedString(c.ConfigMap.Object, "data", c.Key)
	return data
}

// renderChartConfig renders the chart's ConfigMap and Deployment with its default values
// (bin/helm, built by `make tools`) and returns the configuration its scheduler runs.
func renderChartConfig() (chartConfig, error) {
	out, err := helm.Run("template", chartRelease, helm.ChartDir(), "--namespace", chartNamespace,
		"--show-only", "templates/configmap.yaml", "--show-only", "templates/deployment.yaml")
	if err != nil {
		return chartConfig{}, fmt.Errorf("rendering the chart's scheduler configuration: %w\n%s", err, out)
	}
	objects, err := helm.Decode(out)
	if err != nil {
		return chartConfig{}, fmt.Errorf("rendering the chart's scheduler configuration: %w", err)
	}
	return schedulerConfigOf(objects, chartRelease)
}

// schedulerConfigOf finds, among the chart's rendered objects, the configuration the
// Deployment named deployment runs: the ConfigMap its --scheduler-conf-configmap names
// ([NAMESPACE/]NAME, in the Deployment's namespace without one, as the chart's POD_NAMESPACE
// is) and the key its --scheduler-conf file is mounted from.
func schedulerConfigOf(objects []*unstructured.Unstructured, deployment string) (chartConfig, error) {
	var args []string
	var namespace string
	for _, o := range objects {
		if o.GetKind() != "Deployment" || o.GetName() != deployment {
			continue
		}
		namespace = o.GetNamespace()
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if container, ok := c.(map[string]any); ok {
				more, _, _ := unstructured.NestedStringSlice(container, "args")
				args = append(args, more...)
			}
		}
	}
	flags := map[string]string{}
	for _, a := range args {
		if name, value, ok := strings.Cut(a, "="); ok {
			flags[name] = value
		}
	}
	file, mapRef := flags["--scheduler-conf"], flags["--scheduler-conf-configmap"]
	if file == "" || mapRef == "" {
		return chartConfig{}, fmt.Errorf("the chart's Deployment %s passes no --scheduler-conf and --scheduler-conf-configmap (its arguments: %q)", deployment, args)
	}
	name := mapRef
	if ns, n, qualified := strings.Cut(mapRef, "/"); qualified {
		namespace, name = ns, n
	}
	key := path.Base(file)
	for _, o := range objects {
		if o.GetKind() == "ConfigMap" && o.GetNamespace() == namespace && o.GetName() == name {
			config := chartConfig{ConfigMap: o, Key: key}
			if config.Data() == "" {
				return chartConfig{}, fmt.Errorf("the chart's ConfigMap %s/%s has no key %q, which --scheduler-conf=%s reads", namespace, name, key, file)
			}
			return config, nil
		}
	}
	return chartConfig{}, fmt.Errorf("the chart renders no ConfigMap %s/%s, which its Deployment's --scheduler-conf-configmap names", namespace, name)
}

// writeFile writes the configuration into dir as the file the scheduler reads, as the chart's
// volume mounts it, and returns its path.
func (c chartConfig) writeFile(dir string) (string, error) {
	file, err := filepath.Abs(filepath.Join(dir, c.Key))
	if err != nil {
		return "", err
	}
	return file, os.WriteFile(file, []byte(c.Data()), 0o644)
}

// install creates the chart's ConfigMap, and its namespace, in the cluster, as `helm install`
// would.
func (c chartConfig) install(ctx context.Context, cluster client.Client) error {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ConfigMap.GetNamespace()}}
	if err := cluster.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := cluster.Create(ctx, c.ConfigMap.DeepCopy()); err != nil {
		return fmt.Errorf("creating the scheduler's ConfigMap %s: %w", c.Ref(), err)
	}
	return nil
}
