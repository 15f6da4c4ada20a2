// Package deploy holds the deployment files (deploy/kubernetes, the
// compose file at the top of the repository) and the tests that read them
// as their tools would: every Kubernetes manifest decodes strictly into
// the k8s.io/api types (an unknown or misspelt field fails), and the
// compose file into the compose schema's fields this project uses.
package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// kustomization is the part of kustomize's Kustomization the manifests use
// (kustomize has no k8s.io/api type); decoded strictly too.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// manifests are the decoded objects of deploy/kubernetes.
type manifests struct {
	kust       kustomization
	deployment *appsv1.Deployment
	pdb        *policyv1.PodDisruptionBudget
	service    *corev1.Service
	configMap  *corev1.ConfigMap
	secret     *corev1.Secret
	account    *corev1.ServiceAccount
	namespace  *corev1.Namespace
}

// readManifests decodes every file of deploy/kubernetes strictly, each
// into the type its kind names, and fails on a file the kustomization does
// not list or a listed one that is missing.
func readManifests(t *testing.T) manifests {
	t.Helper()
	var m manifests
	decode(t, filepath.Join("kubernetes", "kustomization.yaml"), &m.kust)
	if m.kust.Kind != "Kustomization" || m.kust.APIVersion != "kustomize.config.k8s.io/v1beta1" {
		t.Errorf("kustomization.yaml: kind %q apiVersion %q", m.kust.Kind, m.kust.APIVersion)
	}
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if name == "kustomization.yaml" {
			continue
		}
		if !slices.Contains(m.kust.Resources, name) {
			t.Errorf("%s is not listed in kustomization.yaml", name)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(readManifest(t, f), &tm); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 Deployment":
			m.deployment = &appsv1.Deployment{}
			obj = m.deployment
		case "policy/v1 PodDisruptionBudget":
			m.pdb = &policyv1.PodDisruptionBudget{}
			obj = m.pdb
		case "v1 Service":
			m.service = &corev1.Service{}
			obj = m.service
		case "v1 ConfigMap":
			m.configMap = &corev1.ConfigMap{}
			obj = m.configMap
		case "v1 Secret":
			m.secret = &corev1.Secret{}
			obj = m.secret
		case "v1 ServiceAccount":
			m.account = &corev1.ServiceAccount{}
			obj = m.account
		case "v1 Namespace":
			m.namespace = &corev1.Namespace{}
			obj = m.namespace
		default:
			t.Fatalf("%s: unexpected %s %s", f, tm.APIVersion, tm.Kind)
		}
		decode(t, f, obj)
	}
	for _, r := range m.kust.Resources {
		if _, err := os.Stat(filepath.Join("kubernetes", r)); err != nil {
			t.Errorf("kustomization.yaml lists %s: %v", r, err)
		}
	}
	if m.deployment == nil || m.pdb == nil || m.service == nil || m.configMap == nil || m.secret == nil || m.account == nil {
		t.Fatalf("missing manifests: %+v", m)
	}
	return m
}

// readManifest reads the manifest at path, which must hold one object.
func readManifest(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("\n---")) {
		t.Fatalf("%s: one object per file", path)
	}
	return b
}

// decode reads path into v, refusing unknown fields.
func decode(t *testing.T, path string, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(readManifest(t, path), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestKubernetesManifests: the manifests decode strictly, and they hang
// together: several replicas, a disruption budget and a service that
// select the pods, probes on /healthz at the port the config listens on,
// the config and the Secret the pod mounts, and the securityContext the
// agents' sandbox needs (and no more).
func TestKubernetesManifests(t *testing.T) {
	m := readManifests(t)
	d := m.deployment
	pod := d.Spec.Template
	labels := pod.Labels
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas %v, want at least 2", d.Spec.Replicas)
	}
	if !selects(d.Spec.Selector, labels) || !selects(m.pdb.Spec.Selector, labels) ||
		!selects(&metav1.LabelSelector{MatchLabels: m.service.Spec.Selector}, labels) {
		t.Errorf("deployment, budget and service do not all select the pods (labels %v)", labels)
	}
	if mu := m.pdb.Spec.MaxUnavailable; mu == nil || mu.IntValue() != 1 {
		t.Errorf("disruption budget maxUnavailable %v, want 1", mu)
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g < 40 {
		t.Errorf("termination grace %v s, want ≥ 40 (the bridge gives turns 30 s)", g)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want the bridge only", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	port := c.Ports[0]
	if port.Name != "http" || port.ContainerPort != 9464 {
		t.Errorf("container port %+v", port)
	}
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe %+v, want GET /healthz on port http", name, p)
		}
	}
	bridgeYAML := m.configMap.Data["bridge.yaml"]
	for _, want := range []string{`listen: "0.0.0.0:9464"`, "driver: postgres", `dsn: "${DATABASE_URL}"`, "enabled: true", "data_dir: /data", "workdir: /workspace"} {
		if !strings.Contains(bridgeYAML, want) {
			t.Errorf("configmap bridge.yaml lacks %q", want)
		}
	}
	if want := "/etc/agentbridge/bridge.yaml"; !slices.Contains(c.Args, want) || !mounts(c, "config", filepath.Dir(want)) {
		t.Errorf("the bridge does not read the ConfigMap's bridge.yaml: args %v", c.Args)
	}
	for _, v := range []string{"data", "workspace", "home", "tmp"} {
		if !mounts(c, v, "") {
			t.Errorf("volume %s not mounted", v)
		}
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != m.secret.Name {
		t.Errorf("the environment does not come from the Secret %s: %+v", m.secret.Name, c.EnvFrom)
	}
	for _, ref := range envRefs(bridgeYAML) {
		if _, ok := m.secret.StringData[ref]; !ok {
			t.Errorf("bridge.yaml uses ${%s}, which the Secret does not have", ref)
		}
	}
	if pod.Spec.ServiceAccountName != m.account.Name || pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("service account %q, token mounted %v: want %s without a token", pod.Spec.ServiceAccountName,
			pod.Spec.AutomountServiceAccountToken, m.account.Name)
	}
	checkSecurity(t, pod.Spec, c)
}

// checkSecurity: what bubblewrap needs in a container (an unmasked /proc,
// no seccomp or AppArmor filter refusing unshare and mount), in a user
// namespace of the pod's own, as the non-root user, without capabilities
// or privilege escalation.
func checkSecurity(t *testing.T, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	if spec.HostUsers == nil || *spec.HostUsers {
		t.Error("hostUsers must be false: the pod's own user namespace (procMount Unmasked requires it)")
	}
	ps := spec.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser != 10001 {
		t.Errorf("pod securityContext %+v, want non-root uid 10001 (the image's user)", ps)
	}
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("no container securityContext")
	case sc.Privileged != nil && *sc.Privileged:
		t.Error("privileged: the sandbox needs no such thing")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation must be false")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities %+v, want all dropped and none added", sc.Capabilities)
	case sc.ProcMount == nil || *sc.ProcMount != corev1.UnmaskedProcMount:
		t.Error("procMount must be Unmasked: bwrap mounts a fresh /proc")
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeUnconfined:
		t.Error("seccompProfile must let bwrap create user namespaces")
	case sc.AppArmorProfile == nil || sc.AppArmorProfile.Type != corev1.AppArmorProfileTypeUnconfined:
		t.Error("appArmorProfile must let bwrap mount")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem should be true")
	}
}

// selects reports whether sel's matchLabels all hold for labels.
func selects(sel *metav1.LabelSelector, labels map[string]string) bool {
	if sel == nil || len(sel.MatchLabels) == 0 || len(sel.MatchExpressions) > 0 {
		return false
	}
	for k, v := range sel.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// mounts reports whether c mounts volume (at path, when path is set).
func mounts(c corev1.Container, volume, path string) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == volume && (path == "" || m.MountPath == path)
	})
}

// envRefs are the ${NAME} references of a config text.
func envRefs(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		s = s[i+2:]
		j := strings.IndexByte(s, '}')
		if j < 0 {
			return out
		}
		out = append(out, s[:j])
		s = s[j+1:]
	}
}

// TestManifestsDecodeStrictly: the strict decoding the other tests rely on
// does refuse a misspelt field.
func TestManifestsDecodeStrictly(t *testing.T) {
	bad := strings.Replace(string(readManifest(t, filepath.Join("kubernetes", "deployment.yaml"))), "\n            procMount:", "\n            procMonut:", 1)
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(bad), &d); err == nil || !strings.Contains(err.Error(), "procMonut") {
		t.Errorf("a misspelt field decoded: %v", err)
	}
}
