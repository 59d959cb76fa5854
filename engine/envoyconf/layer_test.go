package envoyconf_test

import (
	"os"
	"path/filepath"
	"testing"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// An imported cluster runs in the lab as one layer of settings over a
// preset: the run must use exactly the imported config.
func TestImportedClusterAsSettings(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "import", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no testdata/import files")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c, err := envoyconf.ParseCluster(data)
			if err != nil {
				t.Fatal(err)
			}
			sc, cfg, err := settings.Apply(scenario.SearchCache, c.Settings())
			if err != nil {
				t.Fatal(err)
			}
			cl := sc.Cluster
			if cfg != c.Outlier || float64(cl.HealthyPanicThreshold) != c.PanicThreshold || cl.Retry.MaxRetries != c.MaxRetries || cl.Retry.Budget != (c.RetryBudget != nil) {
				t.Errorf("applied %+v, panic %d, max_retries %d, budget %v; imported %+v", cfg, cl.HealthyPanicThreshold, cl.Retry.MaxRetries, cl.Retry.Budget, c)
			}
			if c.LBPolicy != "" && cl.LB.String() != c.LBPolicy {
				t.Errorf("lb %s, imported %s", cl.LB, c.LBPolicy)
			}
		})
	}
}
