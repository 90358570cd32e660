package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestServeSuite runs the serve suite's three cases briefly on a small
// synthetic source (3,000 reference rows of 200 features) through Run, as `psdlearn bench --suite serve` does at
// full length: each case runs once, on one backend, with no errors, and
// Markdown prints the serve table.
func TestServeSuite(t *testing.T) {
	small := func(seed uint64) (*ServeData, error) { return synthetic(seed, 3000, 50, 200, 10), nil }
	cases := ServeCasesFrom(1, small, ServeOptions{PCA: 32, Clients: 4, Warmup: 100 * time.Millisecond, Duration: 400 * time.Millisecond, FitRows: 1000, Rows: 3000, Data: "synthetic, 200 features"})
	res, err := Run(context.Background(), "serve", cases, Options{Runs: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results, want one per endpoint", len(res))
	}
	for _, r := range res {
		m := r.Metrics
		if r.Error != "" || r.Runs != 1 || m["requests"] < 1 || m["errors"] != 0 || m["requests_per_second"] <= 0 || m["p99_ms"] < m["p50_ms"] || m["reference_rows"] != 3000 || m["output_dim"] != 32 {
			t.Errorf("%s: %+v", r.Case, r)
		}
	}
	if a := res[0].Metrics["query_accuracy"]; a < 0.9 {
		t.Errorf("3-NN accuracy on the synthetic queries %v: the classes are well apart", a)
	}
	var buf bytes.Buffer
	if err := Markdown(&buf, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| endpoint |", "| predict (k = 3) | 3000 | 200 → 32 | 4 |", "| transform |", "| distance |", "predicted right"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	t.Logf("\n%s", buf.String())
}
