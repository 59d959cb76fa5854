package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"sigs.k8s.io/yaml"
)

// deploy/compose.yaml agrees with serve's flags, with nginx.conf and with
// itself: the replicas' command lines parse and name the three NATS
// servers with the clients' user; every NATS server (its command line
// read by nats-server's own flags) asks its clients and routes for a
// user, routes to all three giving the route user, with JetStream on its
// volume; the passwords are the environment's, which compose requires;
// nginx's upstreams are the replicas, and every image name is qualified.
func TestDeployCompose(t *testing.T) {
	raw, err := os.ReadFile("deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Compose's interpolation: every variable must be required (${VAR:?…}),
	// as an unset password would otherwise be an empty one.
	const clientPW, routePW = "client-pw-from-env", "route-pw-from-env"
	vars := map[string]string{"OUTLIERLAB_NATS_PASSWORD": clientPW, "OUTLIERLAB_NATS_ROUTE_PASSWORD": routePW}
	var interpolateErr []string
	ref := regexp.MustCompile(`\$\{([A-Z_]+)([^}]*)\}`)
	raw = ref.ReplaceAllFunc(raw, func(m []byte) []byte {
		sub := ref.FindSubmatch(m)
		v, ok := vars[string(sub[1])]
		if !ok || !strings.HasPrefix(string(sub[2]), ":?") {
			interpolateErr = append(interpolateErr, string(m))
		}
		return []byte(v)
	})
	if len(interpolateErr) > 0 || bytes.Contains(raw, []byte("${")) {
		t.Errorf("variables not known or not required (${VAR:?message}): %q", interpolateErr)
	}
	var c struct {
		Services map[string]struct {
			Image    string   `json:"image"`
			Build    string   `json:"build"`
			Command  []string `json:"command"`
			ReadOnly bool     `json:"read_only"`
			Stop     string   `json:"stop_grace_period"`
			Ports    []string `json:"ports"`
			Volumes  []string `json:"volumes"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	nginx, err := os.ReadFile("deploy/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	upstreams := regexp.MustCompile(`(?m)^\s*server (\S+):8080[ ;]`).FindAllStringSubmatch(string(nginx), -1)
	var replicas []string
	for _, u := range upstreams {
		replicas = append(replicas, u[1])
	}
	natsURLs := "nats://outlierlab:" + clientPW + "@nats1:4222,nats://outlierlab:" + clientPW + "@nats2:4222,nats://outlierlab:" + clientPW + "@nats3:4222"
	for name, s := range c.Services {
		if s.Image != "" {
			if reg, _, ok := strings.Cut(s.Image, "/"); !ok || !strings.Contains(reg, ".") {
				t.Errorf("%s: image %s is not a qualified name", name, s.Image)
			}
		}
		switch {
		case strings.HasPrefix(name, "nats"):
			o, err := server.ConfigureOptions(flag.NewFlagSet(name, flag.ContinueOnError), s.Command, nil, nil, nil)
			if err != nil {
				t.Fatalf("%s: nats-server %v: %v", name, s.Command, err)
			}
			var routes []string
			for _, r := range o.Routes {
				routes = append(routes, r.String())
			}
			if !o.JetStream || o.StoreDir != "/data" || o.ServerName != name || o.Cluster.Name != "outlierlab" || o.Cluster.Port != 6222 {
				t.Errorf("%s: JetStream %v in %q, name %q, cluster %q on %d", name, o.JetStream, o.StoreDir, o.ServerName, o.Cluster.Name, o.Cluster.Port)
			}
			if o.Username != "outlierlab" || o.Password != clientPW {
				t.Errorf("%s: clients' user %q with password %q, want outlierlab with $OUTLIERLAB_NATS_PASSWORD", name, o.Username, o.Password)
			}
			if o.Cluster.Username != "route" || o.Cluster.Password != routePW {
				t.Errorf("%s: routes' user %q with password %q, want route with $OUTLIERLAB_NATS_ROUTE_PASSWORD", name, o.Cluster.Username, o.Cluster.Password)
			}
			if want := []string{"nats://route:" + routePW + "@nats1:6222", "nats://route:" + routePW + "@nats2:6222", "nats://route:" + routePW + "@nats3:6222"}; !slices.Equal(routes, want) {
				t.Errorf("%s: routes %v, want %v", name, routes, want)
			}
			if len(s.Volumes) != 1 || !strings.HasSuffix(s.Volumes[0], ":/data") {
				t.Errorf("%s: JetStream's store is not a volume: %v", name, s.Volumes)
			}
		case strings.HasPrefix(name, "replica"):
			if !slices.Contains(replicas, name) {
				t.Errorf("%s is not an upstream of nginx.conf (%v)", name, replicas)
			}
			cfg, err := parseServe(s.Command, io.Discard, func(k string) string {
				return map[string]string{"PORT": "8080", "OUTLIERLAB_DATA_DIR": "/data"}[k]
			})
			if err != nil || cfg.bus.URL != natsURLs || !cfg.proxies.Peer || cfg.addr != ":8080" {
				t.Errorf("%s: serve %v: %+v, %v", name, s.Command, cfg, err)
			}
			if s.Build == "" || !s.ReadOnly {
				t.Errorf("%s: not built from the repository with a read-only root", name)
			}
			if stop, err := time.ParseDuration(s.Stop); err != nil || stop <= cfg.grace || stop > cfg.grace+30*time.Second {
				t.Errorf("%s: stop_grace_period %q is not a little above serve's -shutdown-grace %s", name, s.Stop, cfg.grace)
			}
		case name == "nginx":
			if !slices.Contains(s.Ports, "8080:8080") || !slices.Contains(s.Volumes, "./nginx.conf:/etc/nginx/nginx.conf:ro") {
				t.Errorf("nginx: ports %v, volumes %v", s.Ports, s.Volumes)
			}
		default:
			t.Errorf("unexpected service %s", name)
		}
	}
	for _, r := range replicas {
		if _, ok := c.Services[r]; !ok {
			t.Errorf("nginx.conf's upstream %s is not a service", r)
		}
	}
	if len(c.Services) != 6 {
		t.Errorf("%d services, want 3 NATS + 2 replicas + nginx", len(c.Services))
	}
}

// deploy/kubernetes.yaml: probes on the paths serve answers (liveness
// /healthz, readiness /healthz?ready), the data volume where serve keeps
// the workshops, a read-only root, non-root.
func TestDeployKubernetes(t *testing.T) {
	raw, err := os.ReadFile("deploy/kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type probe struct {
		HTTPGet struct {
			Path string `json:"path"`
		} `json:"httpGet"`
	}
	var dep struct {
		Kind string `json:"kind"`
		Spec struct {
			Template struct {
				Spec struct {
					TerminationGracePeriodSeconds int `json:"terminationGracePeriodSeconds"`
					SecurityContext               struct {
						RunAsNonRoot bool `json:"runAsNonRoot"`
					} `json:"securityContext"`
					Containers []struct {
						Args []string `json:"args"`
						Env  []struct {
							Name, Value string
						} `json:"env"`
						SecurityContext struct {
							ReadOnlyRootFilesystem bool `json:"readOnlyRootFilesystem"`
						} `json:"securityContext"`
						LivenessProbe  probe `json:"livenessProbe"`
						ReadinessProbe probe `json:"readinessProbe"`
						VolumeMounts   []struct {
							MountPath string `json:"mountPath"`
						} `json:"volumeMounts"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	found := false
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		if !strings.Contains(doc, "kind: Deployment") {
			continue
		}
		found = true
		if err := yaml.Unmarshal([]byte(doc), &dep); err != nil {
			t.Fatal(err)
		}
	}
	if !found || len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("kubernetes.yaml has no Deployment with one container")
	}
	ctr := dep.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range ctr.Env {
		env[e.Name] = e.Value
	}
	cfg, err := parseServe(ctr.Args, io.Discard, func(k string) string { return env[k] })
	if err != nil || cfg.bus.DataDir == "" || len(ctr.VolumeMounts) != 1 || ctr.VolumeMounts[0].MountPath != cfg.bus.DataDir {
		t.Errorf("the data directory %q (%v) is not the mounted volume %+v", cfg.bus.DataDir, err, ctr.VolumeMounts)
	}
	if grace := time.Duration(dep.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second; grace <= cfg.grace || grace > cfg.grace+30*time.Second {
		t.Errorf("terminationGracePeriodSeconds %v is not a little above serve's -shutdown-grace %s", grace, cfg.grace)
	}
	if !ctr.SecurityContext.ReadOnlyRootFilesystem || !dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot {
		t.Error("not read-only root and non-root")
	}
	live, ready := ctr.LivenessProbe.HTTPGet.Path, ctr.ReadinessProbe.HTTPGet.Path
	if live != "/healthz" || ready != "/healthz?ready" {
		t.Fatalf("probes %q and %q, want /healthz and /healthz?ready", live, ready)
	}
	s := startServe(t, "-addr", "127.0.0.1:0")
	for _, p := range []string{live, ready} {
		res, err := http.Get("http://" + s.HTTP + p)
		if err != nil || res.StatusCode != 200 {
			t.Errorf("GET %s: %v %v", p, err, res)
		} else {
			res.Body.Close()
		}
	}
}

// deploy/kubernetes.yaml meets the Pod Security Standards' "restricted"
// level (kubernetes.io/docs/concepts/security/pod-security-standards), so
// a namespace that enforces it admits the pod: checked here by reading
// the YAML, with no kubectl or cluster.
func TestDeployKubernetesRestricted(t *testing.T) {
	raw, err := os.ReadFile("deploy/kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pods := 0
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		spec, ok := podSpec(obj)
		if !ok {
			continue
		}
		pods++
		for _, v := range restrictedViolations(spec) {
			t.Errorf("%s %v: %s", obj["kind"], dig(obj, "metadata", "name"), v)
		}
	}
	if pods == 0 {
		t.Fatal("kubernetes.yaml has no pod spec")
	}
}

// The check itself finds what it is for: each broken spec is refused
// for its reason.
func TestRestrictedViolations(t *testing.T) {
	good := func() map[string]any {
		return map[string]any{
			"securityContext": map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
			"containers": []any{map[string]any{"name": "c", "securityContext": map[string]any{
				"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}}},
			"volumes": []any{map[string]any{"name": "d", "persistentVolumeClaim": map[string]any{"claimName": "x"}}},
		}
	}
	if v := restrictedViolations(good()); len(v) > 0 {
		t.Fatalf("a restricted spec refused: %v", v)
	}
	ctr := func(s map[string]any) map[string]any {
		return s["containers"].([]any)[0].(map[string]any)["securityContext"].(map[string]any)
	}
	for _, tt := range []struct {
		want   string
		break_ func(map[string]any)
	}{
		{"runAsNonRoot", func(s map[string]any) { delete(s["securityContext"].(map[string]any), "runAsNonRoot") }},
		{"runAsNonRoot", func(s map[string]any) { ctr(s)["runAsNonRoot"] = false }},
		{"runAsUser 0", func(s map[string]any) { ctr(s)["runAsUser"] = 0.0 }},
		{"seccompProfile", func(s map[string]any) { delete(s["securityContext"].(map[string]any), "seccompProfile") }},
		{"seccompProfile", func(s map[string]any) { ctr(s)["seccompProfile"] = map[string]any{"type": "Unconfined"} }},
		{"allowPrivilegeEscalation", func(s map[string]any) { delete(ctr(s), "allowPrivilegeEscalation") }},
		{"capabilities", func(s map[string]any) { ctr(s)["capabilities"] = map[string]any{"drop": []any{"NET_RAW"}} }},
		{"capabilities", func(s map[string]any) {
			ctr(s)["capabilities"] = map[string]any{"drop": []any{"ALL"}, "add": []any{"SYS_ADMIN"}}
		}},
		{"privileged", func(s map[string]any) { ctr(s)["privileged"] = true }},
		{"hostNetwork", func(s map[string]any) { s["hostNetwork"] = true }},
		{"hostPID", func(s map[string]any) { s["hostPID"] = true }},
		{"hostPort", func(s map[string]any) {
			s["containers"].([]any)[0].(map[string]any)["ports"] = []any{map[string]any{"containerPort": 80.0, "hostPort": 80.0}}
		}},
		{"hostPath", func(s map[string]any) {
			s["volumes"] = []any{map[string]any{"name": "h", "hostPath": map[string]any{"path": "/"}}}
		}},
		{"initContainers", func(s map[string]any) { s["initContainers"] = []any{map[string]any{"name": "i"}} }},
	} {
		s := good()
		tt.break_(s)
		v := restrictedViolations(s)
		if !strings.Contains(strings.Join(v, "; "), tt.want) {
			t.Errorf("broken for %s: %v", tt.want, v)
		}
	}
}

// podSpec finds a manifest's pod spec: a Pod's own, or a workload's
// template's (Deployment, StatefulSet, DaemonSet, Job; a CronJob's job's).
func podSpec(obj map[string]any) (map[string]any, bool) {
	switch obj["kind"] {
	case "Pod":
		s, ok := dig(obj, "spec").(map[string]any)
		return s, ok
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
		s, ok := dig(obj, "spec", "template", "spec").(map[string]any)
		return s, ok
	case "CronJob":
		s, ok := dig(obj, "spec", "jobTemplate", "spec", "template", "spec").(map[string]any)
		return s, ok
	}
	return nil, false
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// restrictedViolations lists what a pod spec does that the "restricted"
// Pod Security level (with the baseline's rules it includes) refuses, in
// its words: host namespaces and ports, privileged containers, hostPath
// and other volume types than its list, privilege escalation, root, added
// capabilities or not dropping ALL, no seccomp profile (or Unconfined).
func restrictedViolations(spec map[string]any) []string {
	var out []string
	add := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
	for _, k := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if spec[k] == true {
			add("%s: true (allowed unset or false)", k)
		}
	}
	allowedVolumes := []string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
	vols, _ := spec["volumes"].([]any)
	for _, v := range vols {
		vm, _ := v.(map[string]any)
		for k := range vm {
			if k != "name" && !slices.Contains(allowedVolumes, k) {
				add("volume %v: %s (allowed %s)", vm["name"], k, strings.Join(allowedVolumes, ", "))
			}
		}
	}
	pod, _ := spec["securityContext"].(map[string]any)
	seccomp := func(sc map[string]any) string { s, _ := dig(sc, "seccompProfile", "type").(string); return s }
	podSeccomp := seccomp(pod)
	if podSeccomp != "" && podSeccomp != "RuntimeDefault" && podSeccomp != "Localhost" {
		add("securityContext.seccompProfile.type %s (allowed RuntimeDefault, Localhost)", podSeccomp)
	}
	if uid, ok := pod["runAsUser"].(float64); ok && uid == 0 {
		add("securityContext.runAsUser 0 (root)")
	}
	for _, kind := range []string{"containers", "initContainers", "ephemeralContainers"} {
		list, _ := spec[kind].([]any)
		for _, c := range list {
			cm, _ := c.(map[string]any)
			name := fmt.Sprintf("%s %v", kind, cm["name"])
			sc, _ := cm["securityContext"].(map[string]any)
			if sc["privileged"] == true {
				add("%s: privileged", name)
			}
			if sc["allowPrivilegeEscalation"] != false {
				add("%s: allowPrivilegeEscalation must be false", name)
			}
			if nonRoot, set := sc["runAsNonRoot"]; set && nonRoot != true || !set && pod["runAsNonRoot"] != true {
				add("%s: runAsNonRoot must be true (in the pod's or the container's securityContext)", name)
			}
			if uid, ok := sc["runAsUser"].(float64); ok && uid == 0 {
				add("%s: runAsUser 0 (root)", name)
			}
			switch s := seccomp(sc); {
			case s == "" && podSeccomp == "":
				add("%s: no seccompProfile (RuntimeDefault or Localhost, the pod's or its own)", name)
			case s != "" && s != "RuntimeDefault" && s != "Localhost":
				add("%s: seccompProfile.type %s (allowed RuntimeDefault, Localhost)", name, s)
			}
			drop, _ := dig(sc, "capabilities", "drop").([]any)
			if !slices.Contains(drop, any("ALL")) {
				add("%s: capabilities must drop ALL", name)
			}
			added, _ := dig(sc, "capabilities", "add").([]any)
			for _, a := range added {
				if a != "NET_BIND_SERVICE" {
					add("%s: capabilities add %v (allowed only NET_BIND_SERVICE)", name, a)
				}
			}
			ports, _ := cm["ports"].([]any)
			for _, p := range ports {
				if hp, _ := dig(p, "hostPort").(float64); hp != 0 {
					add("%s: hostPort %v", name, hp)
				}
			}
		}
	}
	return out
}
