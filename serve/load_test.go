package serve_test

import (
	"context"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/internal/loadtest"
	"github.com/psdlearn/psdlearn/serve"
	"gonum.org/v1/gonum/mat"
)

// TestLoad is the service's load test, short: a loopback server with
// 20,000 reference rows of 64 features (PCA to 32), driven by 8 clients
// with a mix of transform, distance and 5-NN predict requests for 2 s
// after a warm-up. Every answer must equal the one the service gives the
// request alone, and the memory must be flat. `psdlearn bench --suite
// serve` runs it at full length on the MNIST shape.
func TestLoad(t *testing.T) {
	warm, dur := time.Second, 2*time.Second
	if testing.Short() {
		warm, dur = 200*time.Millisecond, 500*time.Millisecond
	}
	x, labels := serve.Clusters(5, 20200, 64, 10)
	ref := &serve.Reference{X: mat.DenseCopyOf(x.Slice(0, 20000, 0, 64)), Labels: labels[:20000]}
	queries := mat.DenseCopyOf(x.Slice(20000, 20200, 0, 64))
	m := serve.TestModel(t, ref.X, 32, 32, 6)
	ctx := context.Background()
	ix, err := serve.NewIndex(ctx, m, ref)
	if err != nil {
		t.Fatal(err)
	}
	h, err := serve.NewHandler(m, ix, serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var reqs []loadtest.Request
	for _, e := range []string{loadtest.Predict, loadtest.Transform, loadtest.Distance} {
		r, err := loadtest.Requests(h, e, queries, 5)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r...)
	}
	rep, err := loadtest.Service(ctx, h, loadtest.Options{Requests: reqs, Clients: 8, Warmup: warm, Duration: dur})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("warm-up %v (%d GCs); %d requests in %v: %.0f/s, p50 %v, p99 %v, max %v, %d errors; RSS %s → %s (max %s), live heap %s → %s; %.0f allocations, %.0f bytes per request (clients included), %d GCs",
		rep.Warmup.Round(time.Millisecond), rep.WarmupGCs, rep.Requests, rep.Duration.Round(time.Millisecond), rep.RPS, rep.P50, rep.P99, rep.Max, rep.Errors,
		loadtest.MiB(rep.RSSStart), loadtest.MiB(rep.RSSEnd), loadtest.MiB(rep.RSSMax), loadtest.MiB(rep.HeapStart), loadtest.MiB(rep.HeapEnd),
		rep.AllocsPerRequest, rep.AllocBytesPerRequest, rep.GCs)
	if rep.Requests == 0 || rep.Errors != 0 {
		t.Errorf("%d requests, %d errors; first: %s", rep.Requests, rep.Errors, rep.FirstError)
	}
	if err := rep.Flat(32<<20, 4<<20); err != nil {
		t.Error(err)
	}
}
