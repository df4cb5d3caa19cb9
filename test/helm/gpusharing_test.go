package helm

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/scheduling"
	"github.com/kai-minruntime/kai-scheduler/pkg/gpuwebhook"
)

// gpuSharingObjects are the objects GPU sharing adds (kind, namespace, name), whichever
// issues the certificate.
var gpuSharingObjects = [][3]string{
	{"Namespace", "", scheduling.ReservationNamespace},
	{"ServiceAccount", scheduling.ReservationNamespace, "kai-resource-reservation"},
	{"Role", scheduling.ReservationNamespace, "kai-resource-reservation"},
	{"RoleBinding", scheduling.ReservationNamespace, "kai-resource-reservation"},
	{"Role", scheduling.ReservationNamespace, "kai-gpu-reservations"},
	{"RoleBinding", scheduling.ReservationNamespace, "kai-gpu-reservations"},
	{"ClusterRole", "", "kai-gpu-sharing"},
	{"ClusterRoleBinding", "", "kai-gpu-sharing"},
	{"Service", "kai-system", "kai-webhook"},
	{"MutatingWebhookConfiguration", "", "kai-gpu-sharing"},
}

// certificateObjects are the objects issuing the webhook's certificate: cert-manager's, or
// helm's Secret.
var certificateObjects = [][3]string{
	{"Issuer", "kai-system", "kai-webhook-selfsigned"},
	{"Certificate", "kai-system", "kai-webhook-cert"},
	{"Secret", "kai-system", "kai-webhook-cert"},
}

func render(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	objects, err := Template(args...)
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

// mustFind returns the rendered object of a kind and name in its namespace.
func mustFind(t *testing.T, objects []*unstructured.Unstructured, want [3]string) *unstructured.Unstructured {
	t.Helper()
	o := Find(objects, want[0], want[2])
	if o == nil {
		t.Fatalf("%s %s is not rendered", want[0], want[2])
	}
	if o.GetNamespace() != want[1] {
		t.Fatalf("%s %s is in namespace %q, want %q", want[0], want[2], o.GetNamespace(), want[1])
	}
	return o
}

// rulesOf is a role's rules as "group/resource: verbs" lines, resource names after a '@'.
func rulesOf(role *unstructured.Unstructured) []string {
	rules, _ := role.Object["rules"].([]any)
	var out []string
	for _, rule := range rules {
		r := rule.(map[string]any)
		for _, group := range toStrings(r["apiGroups"]) {
			for _, resource := range toStrings(r["resources"]) {
				line := fmt.Sprintf("%s/%s: %s", group, resource, strings.Join(toStrings(r["verbs"]), ","))
				if names := toStrings(r["resourceNames"]); len(names) > 0 {
					line += "@" + strings.Join(names, ",")
				}
				out = append(out, line)
			}
		}
	}
	return out
}

func schedulerContainer(t *testing.T, objects []*unstructured.Unstructured, name string) map[string]any {
	t.Helper()
	deployment := Find(objects, "Deployment", name)
	if deployment == nil {
		t.Fatalf("no Deployment %s", name)
	}
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	return containers[0].(map[string]any)
}

// Off by default, as upstream: GPU sharing renders none of its objects and leaves the
// scheduler exactly as it was.
func TestGPUSharingIsOffByDefault(t *testing.T) {
	objects := render(t)
	for _, want := range append(slices.Clone(gpuSharingObjects), certificateObjects...) {
		if Find(objects, want[0], want[2]) != nil {
			t.Errorf("%s %s is rendered with gpuSharing off", want[0], want[2])
		}
	}
	container := schedulerContainer(t, objects, "kai")
	for _, arg := range toStrings(container["args"]) {
		if strings.Contains(arg, "gpu-sharing") || strings.Contains(arg, "webhook") || strings.Contains(arg, "reservation") || strings.Contains(arg, "cdi") {
			t.Errorf("a GPU-sharing flag with gpuSharing off: %s", arg)
		}
	}
	if strings.Contains(fmt.Sprint(Find(objects, "Deployment", "kai").Object), "webhook") {
		t.Error("the Deployment mentions a webhook with gpuSharing off")
	}
	// Turning it on adds its flags after the others and changes none of them.
	on := toStrings(schedulerContainer(t, render(t, "--set", "gpuSharing.enabled=true"), "kai")["args"])
	if off := toStrings(container["args"]); !slices.Equal(on[:len(off)], off) {
		t.Errorf("gpuSharing changes the scheduler's other args:\noff %q\non  %q", off, on)
	}
}

// On, every object GPU sharing needs is rendered where the scheduler and the reservation
// program look for it, with no right beyond what they do.
func TestGPUSharingRendersItsObjects(t *testing.T) {
	// A cluster recent enough for matchConditions (helm template's default is 1.20).
	objects := render(t, "--set", "gpuSharing.enabled=true", "--kube-version", "1.31.0")
	for _, want := range gpuSharingObjects {
		mustFind(t, objects, want)
	}
	if ns := Find(objects, "Namespace", scheduling.ReservationNamespace); ns.GetLabels()["app.kubernetes.io/instance"] != "kai" {
		t.Errorf("the reservation namespace is not labelled as the chart's: %v", ns.GetLabels())
	}

	for _, tt := range []struct {
		role, binding      [3]string
		account, accountNS string
		rules              []string
	}{
		// The reservation program patches its own pod, in its namespace only.
		{gpuSharingObjects[2], gpuSharingObjects[3], "kai-resource-reservation", scheduling.ReservationNamespace, []string{"/pods: get,patch"}},
		// The scheduler makes and collects the reservation pods there.
		{gpuSharingObjects[4], gpuSharingObjects[5], "kai", "kai-system", []string{"/pods: create,delete,get,list,watch"}},
		// And writes each share's ConfigMaps in the share's namespace.
		{gpuSharingObjects[6], gpuSharingObjects[7], "kai", "kai-system", []string{"/configmaps: create,patch,delete"}},
	} {
		role, binding := mustFind(t, objects, tt.role), mustFind(t, objects, tt.binding)
		if got := rulesOf(role); !slices.Equal(got, tt.rules) {
			t.Errorf("%s %s grants %q, want %q", tt.role[0], tt.role[2], got, tt.rules)
		}
		ref, _, _ := unstructured.NestedStringMap(binding.Object, "roleRef")
		if ref["kind"] != tt.role[0] || ref["name"] != tt.role[2] {
			t.Errorf("%s %s binds %v, want %s %s", tt.binding[0], tt.binding[2], ref, tt.role[0], tt.role[2])
		}
		subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
		if want := fmt.Sprint([]any{map[string]any{"kind": "ServiceAccount", "name": tt.account, "namespace": tt.accountNS}}); fmt.Sprint(subjects) != want {
			t.Errorf("%s %s binds %v, want %s", tt.binding[0], tt.binding[2], subjects, want)
		}
	}
	// What the binder and collector do besides, the scheduler's ClusterRole already grants:
	// listing every pod, and labelling share pods.
	base := strings.Join(rulesOf(Find(objects, "ClusterRole", "kai")), "\n")
	if !strings.Contains(base, "/pods: get,list,watch,patch,delete") {
		t.Errorf("the scheduler's ClusterRole no longer lists and patches pods:\n%s", base)
	}

	// The Deployment: the flags, the webhook's port and the certificate, read-only.
	container := schedulerContainer(t, objects, "kai")
	args := toStrings(container["args"])
	for _, want := range []string{
		"--gpu-sharing",
		"--resource-reservation-image=ghcr.io/kai-minruntime/kai-resource-reservation:0.1.0",
		"--resource-reservation-service-account=kai-resource-reservation",
		"--gpu-sharing-runtime-class=nvidia",
		"--webhook-port=9443",
		"--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	if slices.Contains(args, "--cdi-enabled") {
		t.Error("--cdi-enabled without gpuSharing.cdi")
	}
	if !strings.Contains(fmt.Sprint(container["ports"]), "containerPort:9443 name:webhook") {
		t.Errorf("ports %v lack webhook 9443", container["ports"])
	}
	mounts := fmt.Sprint(container["volumeMounts"])
	if !strings.Contains(mounts, "mountPath:/tmp/k8s-webhook-server/serving-certs name:webhook-cert readOnly:true") {
		t.Errorf("the certificate is not mounted read-only at the cert dir: %s", mounts)
	}
	volumes, _, _ := unstructured.NestedSlice(Find(objects, "Deployment", "kai").Object, "spec", "template", "spec", "volumes")
	if !strings.Contains(fmt.Sprint(volumes), "secretName:kai-webhook-cert") {
		t.Errorf("no volume of the Secret kai-webhook-cert: %v", volumes)
	}

	// The Service reaches the webhook port of the scheduler pods.
	service := Find(objects, "Service", "kai-webhook")
	selector, _, _ := unstructured.NestedStringMap(service.Object, "spec", "selector")
	podLabels, _, _ := unstructured.NestedStringMap(Find(objects, "Deployment", "kai").Object, "spec", "template", "metadata", "labels")
	for k, v := range selector {
		if podLabels[k] != v {
			t.Errorf("the webhook Service selects %s=%s, the scheduler pods have %q", k, v, podLabels[k])
		}
	}
	ports, _, _ := unstructured.NestedSlice(service.Object, "spec", "ports")
	if len(selector) == 0 || fmt.Sprint(ports) != "[map[name:webhook port:443 targetPort:webhook]]" {
		t.Errorf("the webhook Service selects %v on ports %v, want 443 to the pods' webhook port", selector, ports)
	}

	// The webhook: pods' CREATE, at the handler's path, nothing from the system's, the
	// reservation pods' or the scheduler's own namespace, failing closed by default.
	webhooks, _, _ := unstructured.NestedSlice(Find(objects, "MutatingWebhookConfiguration", "kai-gpu-sharing").Object, "webhooks")
	if len(webhooks) != 1 {
		t.Fatalf("%d webhooks, want 1", len(webhooks))
	}
	hook := webhooks[0].(map[string]any)
	for _, tt := range []struct {
		path []string
		want string
	}{
		{[]string{"clientConfig", "service"}, fmt.Sprintf("map[name:kai-webhook namespace:kai-system path:%s port:443]", gpuwebhook.WebhookPath)},
		{[]string{"rules"}, "[map[apiGroups:[] apiVersions:[v1] operations:[CREATE] resources:[pods] scope:Namespaced]]"},
		{[]string{"namespaceSelector"}, "map[matchExpressions:[map[key:kubernetes.io/metadata.name operator:NotIn values:[kai-system kube-system kai-resource-reservation]]]]"},
		{[]string{"failurePolicy"}, "Fail"},
		{[]string{"sideEffects"}, "None"},
		{[]string{"admissionReviewVersions"}, "[v1]"},
		{[]string{"timeoutSeconds"}, "10"},
		{[]string{"matchConditions"}, `[map[expression:object.spec.schedulerName == "kai-scheduler" name:this-scheduler]]`},
	} {
		got, _, _ := unstructured.NestedFieldNoCopy(hook, tt.path...)
		if fmt.Sprint(got) != tt.want {
			t.Errorf("webhook %s = %v, want %s", strings.Join(tt.path, "."), got, tt.want)
		}
	}

	// The values reach it all.
	objects = render(t, "--set", "gpuSharing.enabled=true", "--set", "gpuSharing.cdi=true",
		"--set", "gpuSharing.runtimeClassName=nvidia-cdi", "--set", "gpuSharing.webhook.port=10250",
		"--set", "gpuSharing.webhook.failurePolicy=Ignore", "--set", "gpuSharing.reservation.image.repository=mirror.example/kai-rr",
		"--set", "gpuSharing.reservation.image.tag=v9", "--set", "schedulerName=gpu-sched", "--kube-version", "1.29.0")
	container = schedulerContainer(t, objects, "kai")
	args = toStrings(container["args"])
	for _, want := range []string{"--cdi-enabled", "--gpu-sharing-runtime-class=nvidia-cdi", "--webhook-port=10250", "--resource-reservation-image=mirror.example/kai-rr:v9"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	if !strings.Contains(fmt.Sprint(container["ports"]), "containerPort:10250 name:webhook") {
		t.Errorf("ports %v lack webhook 10250", container["ports"])
	}
	webhooks, _, _ = unstructured.NestedSlice(Find(objects, "MutatingWebhookConfiguration", "kai-gpu-sharing").Object, "webhooks")
	if policy := webhooks[0].(map[string]any)["failurePolicy"]; policy != "Ignore" {
		t.Errorf("failurePolicy %v, want Ignore", policy)
	}
	if conditions := webhooks[0].(map[string]any)["matchConditions"]; conditions != nil {
		t.Errorf("matchConditions %v on Kubernetes 1.29, which has them off by default", conditions)
	}
}

// Every scheduler of a release with node pools serves the webhook behind the one Service.
func TestGPUSharingReachesEveryNodePoolsScheduler(t *testing.T) {
	objects := render(t, "--set", "gpuSharing.enabled=true", "--set", "nodePools.a100.replicas=1")
	selector, _, _ := unstructured.NestedStringMap(Find(objects, "Service", "kai-webhook").Object, "spec", "selector")
	for _, name := range []string{"kai", "kai-a100"} {
		if !slices.Contains(toStrings(schedulerContainer(t, objects, name)["args"]), "--gpu-sharing") {
			t.Errorf("%s runs without --gpu-sharing", name)
		}
		labels, _, _ := unstructured.NestedStringMap(Find(objects, "Deployment", name).Object, "spec", "template", "metadata", "labels")
		for k, v := range selector {
			if labels[k] != v {
				t.Errorf("the webhook Service does not select %s's pods (%s=%s)", name, k, v)
			}
		}
	}
	if _, err := Template("--set", "gpuSharing.enabled=true", "--set", "nodePools.a100.metrics.port=9443"); err == nil ||
		!strings.Contains(err.Error(), "gpuSharing.webhook.port: 9443 is also metrics.port") {
		t.Errorf("a webhook port another port of the container has was not refused: %v", err)
	}
}

// With cert-manager's API, cert-manager issues the certificate and injects its CA; helm
// makes no Secret. certManager forces either way.
func TestGPUSharingCertificateByCertManager(t *testing.T) {
	for _, tt := range []struct {
		name        string
		args        []string
		certManager bool
	}{
		{"auto with cert-manager", []string{"--api-versions", "cert-manager.io/v1"}, true},
		{"auto without", nil, false},
		{"forced on", []string{"--set", "gpuSharing.webhook.certificate.certManager=true"}, true},
		{"forced off", []string{"--api-versions", "cert-manager.io/v1", "--set", "gpuSharing.webhook.certificate.certManager=false"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objects := render(t, append([]string{"--set", "gpuSharing.enabled=true"}, tt.args...)...)
			issuer, certificate := Find(objects, "Issuer", "kai-webhook-selfsigned"), Find(objects, "Certificate", "kai-webhook-cert")
			secret := Find(objects, "Secret", "kai-webhook-cert")
			config := Find(objects, "MutatingWebhookConfiguration", "kai-gpu-sharing")
			inject := config.GetAnnotations()["cert-manager.io/inject-ca-from"]
			webhooks, _, _ := unstructured.NestedSlice(config.Object, "webhooks")
			caBundle, _, _ := unstructured.NestedString(webhooks[0].(map[string]any), "clientConfig", "caBundle")
			if !tt.certManager {
				if issuer != nil || certificate != nil || inject != "" || secret == nil || caBundle == "" {
					t.Fatalf("helm's certificate: issuer %v, certificate %v, inject %q, Secret %v, caBundle set %v",
						issuer != nil, certificate != nil, inject, secret != nil, caBundle != "")
				}
				return
			}
			if issuer == nil || certificate == nil || secret != nil || caBundle != "" {
				t.Fatalf("cert-manager's: issuer %v, certificate %v, Secret %v, caBundle set %v", issuer != nil, certificate != nil, secret != nil, caBundle != "")
			}
			if inject != "kai-system/kai-webhook-cert" {
				t.Errorf("inject-ca-from %q, want kai-system/kai-webhook-cert", inject)
			}
			if selfSigned, ok, _ := unstructured.NestedMap(issuer.Object, "spec", "selfSigned"); !ok || len(selfSigned) != 0 {
				t.Errorf("the Issuer is not self-signed: %v", issuer.Object["spec"])
			}
			spec, _, _ := unstructured.NestedMap(certificate.Object, "spec")
			if spec["secretName"] != "kai-webhook-cert" || fmt.Sprint(spec["issuerRef"]) != "map[kind:Issuer name:kai-webhook-selfsigned]" {
				t.Errorf("the Certificate writes %v, issued by %v", spec["secretName"], spec["issuerRef"])
			}
			if !slices.Contains(toStrings(spec["dnsNames"]), "kai-webhook.kai-system.svc") {
				t.Errorf("the Certificate's names %v do not cover the Service", spec["dnsNames"])
			}
		})
	}
}

// Without cert-manager, helm's Secret holds a serving certificate for the Service that the
// caBundle's CA signed: the API server can call the webhook.
func TestGPUSharingCertificateByHelm(t *testing.T) {
	objects := render(t, "--set", "gpuSharing.enabled=true")
	secret := Find(objects, "Secret", "kai-webhook-cert")
	if secret == nil || secret.GetNamespace() != "kai-system" {
		t.Fatalf("no Secret kai-webhook-cert in kai-system: %v", secret)
	}
	if secret.Object["type"] != "kubernetes.io/tls" {
		t.Errorf("Secret type %v, want kubernetes.io/tls", secret.Object["type"])
	}
	webhooks, _, _ := unstructured.NestedSlice(Find(objects, "MutatingWebhookConfiguration", "kai-gpu-sharing").Object, "webhooks")
	caBundle, _, _ := unstructured.NestedString(webhooks[0].(map[string]any), "clientConfig", "caBundle")
	data, _, _ := unstructured.NestedStringMap(secret.Object, "data")
	verifyServing(t, caBundle, data)
	if expiry := secret.GetAnnotations()["kai.scheduler/webhook-cert-not-after"]; expiry == "" {
		t.Error("the Secret does not say when its certificate expires: an upgrade could not renew it in time")
	}
}

// verifyServing checks that data's tls.crt is a serving certificate for the webhook Service,
// signed by a CA of caBundle (base64, as in the webhook configuration), and that tls.key is
// its key.
func verifyServing(t *testing.T, caBundle string, data map[string]string) *x509.Certificate {
	t.Helper()
	decode := func(what, b64 string) []byte {
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(raw) == 0 {
			t.Fatalf("%s is not base64 PEM: %v", what, err)
		}
		return raw
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(decode("caBundle", caBundle)) {
		t.Fatal("the caBundle holds no certificate")
	}
	block, _ := pem.Decode(decode("tls.crt", data["tls.crt"]))
	if block == nil {
		t.Fatal("tls.crt is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kai-webhook.kai-system.svc", "kai-webhook.kai-system.svc.cluster.local"} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("the serving certificate does not verify for %s against the caBundle: %v", name, err)
		}
	}
	if !roots.AppendCertsFromPEM(decode("ca.crt", data["ca.crt"])) {
		t.Error("the Secret's ca.crt holds no certificate")
	}
	if _, err := tls.X509KeyPair(decode("tls.crt", data["tls.crt"]), decode("tls.key", data["tls.key"])); err != nil {
		t.Errorf("tls.key is not the serving certificate's key: %v", err)
	}
	return cert
}

// The schema refuses a value of the wrong type anywhere under gpuSharing, and a key it does
// not have, naming each.
func TestGPUSharingValuesOfTheWrongTypeAreRefused(t *testing.T) {
	_, err := Template("--set", "gpuSharing.enabled=yes", "--set", "gpuSharing.cdi=1",
		"--set", "gpuSharing.webhook.port=https", "--set", "gpuSharing.webhook.failurePolicy=Deny",
		"--set", "gpuSharing.webhook.certificate.certManager=maybe", "--set", "gpuSharing.webhook.certificate.rotate=now",
		"--set", "gpuSharing.runtimeClassName=Not_A_Name", "--set-json", "gpuSharing.reservation.image.tag=2",
		"--set", "gpuSharing.reservation.image.repository=", "--set", "gpuSharing.webhook.prot=9443")
	if err == nil {
		t.Fatal("the chart accepted gpuSharing values of the wrong type")
	}
	for _, want := range []string{
		"at '/gpuSharing/enabled': got string, want boolean",
		"at '/gpuSharing/cdi': got number, want boolean",
		"at '/gpuSharing/webhook/port': got string, want integer",
		"at '/gpuSharing/webhook/failurePolicy': value must be one of 'Fail', 'Ignore'",
		"at '/gpuSharing/webhook/certificate/certManager': value must be one of 'auto', true, false",
		"at '/gpuSharing/webhook/certificate/rotate': got string, want boolean",
		"at '/gpuSharing/runtimeClassName'",
		"at '/gpuSharing/reservation/image/tag': got number, want string",
		"at '/gpuSharing/reservation/image/repository'",
		"additional properties 'prot' not allowed",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	if _, err := Template("--set", "gpuSharing.webhook.port=70000"); err == nil || !strings.Contains(err.Error(), "/gpuSharing/webhook/port") {
		t.Errorf("port 70000 was accepted or not named: %v", err)
	}
}
