package helm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// ChartDir is the chart's directory.
func ChartDir() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "deployments", "kai-scheduler")
}

// Binary is the pinned helm that `make tools` builds ($HELM, else ./bin/helm).
func Binary() (string, error) {
	path := os.Getenv("HELM")
	if path == "" {
		path = filepath.Join(ChartDir(), "..", "..", "bin", "helm")
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("helm not found at %s: run `make tools` (make test does it for you)", path)
	}
	return path, nil
}

// Run runs helm and returns its combined output.
func Run(args ...string) (string, error) {
	helm, err := Binary()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(helm, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+os.TempDir()+"/helm-cache", "HELM_CONFIG_HOME="+os.TempDir()+"/helm-config")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Template renders the chart with extra helm arguments and returns its objects.
func Template(args ...string) ([]*unstructured.Unstructured, error) {
	out, err := Run(append([]string{"template", "kai", ChartDir(), "--namespace", "kai-system"}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("helm template: %w\n%s", err, out)
	}
	return Decode(out)
}

// Decode reads every object of rendered manifests (a multi-document YAML stream).
func Decode(manifests string) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(manifests)), 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objects, nil
		} else if err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}

// Find returns the rendered object of a kind and name, or nil.
func Find(objects []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// SchedulerConfig is the scheduler configuration the chart renders into its ConfigMap.
func SchedulerConfig(objects []*unstructured.Unstructured) (string, error) {
	return SchedulerConfigOf(objects, "kai-config")
}

// SchedulerConfigOf is the scheduler configuration of one ConfigMap the chart renders (one
// per node pool).
func SchedulerConfigOf(objects []*unstructured.Unstructured, name string) (string, error) {
	cm := Find(objects, "ConfigMap", name)
	if cm == nil {
		return "", fmt.Errorf("no ConfigMap %s rendered", name)
	}
	config, _, _ := unstructured.NestedString(cm.Object, "data", "scheduler-config.yaml")
	return config, nil
}
