package helm

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kai-minruntime/kai-scheduler/test/testenv"
)

// On a real API server: the objects GPU sharing renders are accepted, the accounts may do
// exactly what their programs do, and helm's certificate is kept across upgrades, made anew
// on demand (trusting the old CA until the next upgrade) and when it nears its expiry.
// Needs KUBEBUILDER_ASSETS (make test sets it); skipped without.
func TestGPUSharingInstallsAndKeepsItsCertificate(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := env.Client
	helm := func(args ...string) {
		t.Helper()
		args = append(args, "kai", ChartDir(), "--namespace", "kai-system", "--kubeconfig", kubeconfig, "--set", "gpuSharing.enabled=true")
		if out, err := Run(args...); err != nil {
			t.Fatalf("helm %s: %v\n%s", args[0], err, out)
		}
	}
	type state struct {
		secret           map[string][]byte
		expiry, caBundle string
	}
	read := func() state {
		t.Helper()
		secret := &v1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "kai-system", Name: "kai-webhook-cert"}, secret); err != nil {
			t.Fatal(err)
		}
		config := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: "kai-gpu-sharing"}, config); err != nil {
			t.Fatal(err)
		}
		bundle := string(config.Webhooks[0].ClientConfig.CABundle)
		data := map[string]string{}
		for k, v := range secret.Data {
			data[k] = base64.StdEncoding.EncodeToString(v)
		}
		verifyServing(t, base64.StdEncoding.EncodeToString([]byte(bundle)), data)
		return state{secret.Data, secret.Annotations["kai.scheduler/webhook-cert-not-after"], bundle}
	}

	helm("install", "--create-namespace")
	installed := read()
	if installed.caBundle != string(installed.secret["ca.crt"]) {
		t.Error("on install the caBundle is not the Secret's CA alone")
	}
	if expiry, err := strconv.ParseInt(installed.expiry, 10, 64); err != nil || time.Until(time.Unix(expiry, 0)) < 9*365*24*time.Hour {
		t.Errorf("the certificate's expiry %q is not 10 years away", installed.expiry)
	}

	// Who may do what: the reservation program its own namespace's pods, get and patch; the
	// scheduler the reservation pods and every namespace's ConfigMaps.
	for _, tt := range []struct {
		user, namespace, resource, verb string
		allowed                         bool
	}{
		{"system:serviceaccount:kai-resource-reservation:kai-resource-reservation", "kai-resource-reservation", "pods", "patch", true},
		{"system:serviceaccount:kai-resource-reservation:kai-resource-reservation", "kai-resource-reservation", "pods", "get", true},
		{"system:serviceaccount:kai-resource-reservation:kai-resource-reservation", "kai-resource-reservation", "pods", "delete", false},
		{"system:serviceaccount:kai-resource-reservation:kai-resource-reservation", "default", "pods", "patch", false},
		{"system:serviceaccount:kai-system:kai", "kai-resource-reservation", "pods", "create", true},
		{"system:serviceaccount:kai-system:kai", "kai-resource-reservation", "pods", "delete", true},
		{"system:serviceaccount:kai-system:kai", "default", "pods", "create", false},
		{"system:serviceaccount:kai-system:kai", "team-a", "configmaps", "create", true},
		{"system:serviceaccount:kai-system:kai", "team-a", "configmaps", "patch", true},
		{"system:serviceaccount:kai-system:kai", "team-a", "configmaps", "delete", true},
		{"system:serviceaccount:kai-system:kai", "team-a", "secrets", "get", false},
	} {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: tt.user,
			Groups:             []string{"system:serviceaccounts", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: tt.namespace, Resource: tt.resource, Verb: tt.verb}}}
		if err := c.Create(ctx, review); err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != tt.allowed {
			t.Errorf("%s %s %s in %s: allowed %v, want %v", tt.user, tt.verb, tt.resource, tt.namespace, review.Status.Allowed, tt.allowed)
		}
	}

	helm("upgrade")
	if upgraded := read(); fmt.Sprint(upgraded) != fmt.Sprint(installed) {
		t.Error("an upgrade made a new certificate; the running pods serve the old one")
	}

	helm("upgrade", "--set", "gpuSharing.webhook.certificate.rotate=true")
	rotated := read()
	if string(rotated.secret["tls.crt"]) == string(installed.secret["tls.crt"]) || string(rotated.secret["ca.crt"]) == string(installed.secret["ca.crt"]) {
		t.Fatal("rotate=true kept the certificate")
	}
	if rotated.caBundle != string(rotated.secret["ca.crt"])+string(installed.secret["ca.crt"]) {
		t.Error("after a rotation the caBundle must trust the new CA and the old, which the pods serve until they reload")
	}
	helm("upgrade")
	if next := read(); next.caBundle != string(rotated.secret["ca.crt"]) || string(next.secret["tls.crt"]) != string(rotated.secret["tls.crt"]) {
		t.Error("the upgrade after a rotation must keep the new certificate and trust its CA alone")
	}

	// Within 30 days of its expiry, the next upgrade renews it.
	secret := &v1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kai-system", Name: "kai-webhook-cert"}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Annotations["kai.scheduler/webhook-cert-not-after"] = strconv.FormatInt(time.Now().Add(29*24*time.Hour).Unix(), 10)
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	helm("upgrade")
	if renewed := read(); string(renewed.secret["tls.crt"]) == string(rotated.secret["tls.crt"]) || !strings.HasPrefix(renewed.caBundle, string(renewed.secret["ca.crt"])) {
		t.Error("a certificate expiring within 30 days was not renewed")
	}
}
