package apis

import (
	"bytes"
	"errors"
	"io"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// readManifests decodes every document of a multi-document YAML file.
func readManifests(path string) []*unstructured.Unstructured {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := decoder.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objects
		}
		Expect(err).NotTo(HaveOccurred(), "decoding %s", path)
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}

// manifest parses one YAML document, for cases written inline.
func manifest(text string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(text), &obj.Object)).To(Succeed())
	return obj
}

// createAndCleanUp creates obj (and its namespace if needed) and deletes it after the spec.
func createAndCleanUp(obj *unstructured.Unstructured) error {
	if ns := obj.GetNamespace(); ns != "" {
		ensureNamespace(ns)
	}
	if err := k8sClient.Create(ctx, obj); err != nil {
		return err
	}
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed())
	})
	return nil
}

func ensureNamespace(name string) {
	ns := &corev1.Namespace{}
	ns.Name = name
	if err := k8sClient.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}
