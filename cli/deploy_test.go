package cli

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// deploy/compose.yaml agrees with serve's flags, with nginx.conf and with
// itself: the replicas' command lines parse and name the three NATS
// servers, every NATS server routes to all three with JetStream on its
// volume, nginx's upstreams are the replicas, and every image name is
// qualified.
func TestDeployCompose(t *testing.T) {
	raw, err := os.ReadFile("deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
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
	upstreams := regexp.MustCompile(`(?m)^\s*server (\S+):8080;`).FindAllStringSubmatch(string(nginx), -1)
	var replicas []string
	for _, u := range upstreams {
		replicas = append(replicas, u[1])
	}
	natsURLs := "nats://nats1:4222,nats://nats2:4222,nats://nats3:4222"
	for name, s := range c.Services {
		if s.Image != "" {
			if reg, _, ok := strings.Cut(s.Image, "/"); !ok || !strings.Contains(reg, ".") {
				t.Errorf("%s: image %s is not a qualified name", name, s.Image)
			}
		}
		switch {
		case strings.HasPrefix(name, "nats"):
			cmd := strings.Join(s.Command, " ")
			for _, want := range []string{"-js", "-sd /data", "--routes nats://nats1:6222,nats://nats2:6222,nats://nats3:6222", "--name " + name} {
				if !strings.Contains(cmd, want) {
					t.Errorf("%s: command %q lacks %q", name, cmd, want)
				}
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
