package bench

// The "serve" suite: the example service under load (package serve,
// driven by internal/loadtest), one case per endpoint.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/loadtest"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/serve"
	"gonum.org/v1/gonum/mat"
)

// ServeData is the data of the serve suite: a labelled reference set and
// labelled query rows, raw features.
type ServeData struct {
	Ref         *serve.Reference
	Queries     *mat.Dense
	QueryLabels []string
}

// ServeSource returns the data of the serve suite; the seed fixes every
// random choice it makes. SyntheticMNIST is the default; a loader of the
// real MNIST plugs in the same way (ServeCasesFrom).
type ServeSource func(seed uint64) (*ServeData, error)

// ServeOptions shape the serve suite's model and load; the zero value
// gives the defaults of `psdlearn bench --suite serve`.
type ServeOptions struct {
	PCA      int           // PCA dimension of the model (0: 164)
	K        int           // neighbours of a prediction (0: 3)
	Clients  int           // concurrent clients (0: 8)
	Warmup   time.Duration // least load before the measurement (0: 3 s; see loadtest.Options)
	Duration time.Duration // measured load per case (0: 20 s)
	// FitRows is the number of reference rows the preprocessing is
	// fitted on (0: 10,000; the serving cost depends on the shapes only).
	FitRows int
	// Rows is the number of reference rows the source gives, the cases'
	// Size (0: 60,000, SyntheticMNIST's), and Data names the data in the
	// table (0: SyntheticMNIST's description).
	Rows int
	Data string
}

func (o ServeOptions) withDefaults() ServeOptions {
	if o.PCA <= 0 {
		o.PCA = 164
	}
	if o.K <= 0 {
		o.K = 3
	}
	if o.Clients <= 0 {
		o.Clients = 8
	}
	if o.Warmup <= 0 {
		o.Warmup = 3 * time.Second
	}
	if o.Duration <= 0 {
		o.Duration = 20 * time.Second
	}
	if o.FitRows <= 0 {
		o.FitRows = 10000
	}
	if o.Rows <= 0 {
		o.Rows = 60000
	}
	if o.Data == "" {
		o.Data = "synthetic rows of MNIST's shape (10 classes)"
	}
	return o
}

// ServeCases returns the cases of the "serve" suite: the service of
// package serve on a loopback port, with a model of MNIST's shape (784
// standardised features, PCA to 164, a full-rank metric there) and 60,000
// reference rows of SyntheticMNIST, each endpoint driven by 8 clients for
// 20 s after a warm-up of at least 3 s and one garbage collection.
func ServeCases(seed uint64) []Case {
	return ServeCasesFrom(seed, SyntheticMNIST, ServeOptions{})
}

// ServeCasesFrom returns the serve cases on the data of src: one per
// endpoint (serve_predict: k-NN against every reference row;
// serve_transform; serve_distance), single-row requests cycling through
// the query rows, each answer checked against the answer to the same
// request alone. The model is fitted once, on the first case's backend
// (only the PCA fit uses it; serving uses gonum). Each case runs once
// (Case.Once) and reports requests per second, latency percentiles,
// errors, the resident set and the live heap over the run, and the
// allocations per request in Result.Metrics; Markdown prints them as a
// table of their own.
func ServeCasesFrom(seed uint64, src ServeSource, opt ServeOptions) []Case {
	opt = opt.withDefaults()
	var (
		once  sync.Once
		setup *serveSetup
		err   error
	)
	prepare := func(b engine.Backend) (*serveSetup, error) {
		once.Do(func() { setup, err = newServeSetup(b, seed, src, opt) })
		return setup, err
	}
	var cases []Case
	for _, e := range []struct{ name, endpoint string }{
		{"serve_predict", loadtest.Predict},
		{"serve_transform", loadtest.Transform},
		{"serve_distance", loadtest.Distance},
	} {
		e := e
		cases = append(cases, Case{
			Name: e.name, Size: opt.Rows, Once: true, Detail: opt.Data,
			Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
				s, err := prepare(b)
				if err != nil {
					return nil, err
				}
				reqs := s.requests[e.endpoint]
				return func(ctx context.Context) (Outcome, error) {
					rep, err := loadtest.Service(ctx, s.handler, loadtest.Options{
						Requests: reqs, Clients: opt.Clients, Warmup: opt.Warmup, Duration: opt.Duration,
					})
					if err != nil {
						return Outcome{}, err
					}
					return Outcome{Metrics: s.metrics(rep, e.endpoint)}, nil
				}, nil
			},
		})
	}
	return cases
}

// serveSetup is what the serve cases share: the service and its requests.
type serveSetup struct {
	refRows, in, r  int
	k               int
	accuracy        float64
	handler         *serve.Handler
	requests        map[string][]loadtest.Request
	setupSec, ixSec float64
}

func newServeSetup(b engine.Backend, seed uint64, src ServeSource, opt ServeOptions) (*serveSetup, error) {
	t0 := time.Now()
	d, err := src(seed)
	if err != nil {
		return nil, err
	}
	if d == nil || d.Ref == nil || d.Ref.X == nil || d.Queries == nil {
		return nil, errors.New("bench: serve: the source returned no data")
	}
	n, dim := d.Ref.X.Dims()
	fitRows := min(opt.FitRows, n)
	pre, err := data.FitPipeline(b, d.Ref.X.Slice(0, fitRows, 0, dim).(*mat.Dense), true, min(opt.PCA, dim))
	if err != nil {
		return nil, fmt.Errorf("bench: serve: %w", err)
	}
	r := pre.PCA.OutDim()
	met, err := model.NewMetric(randomMetric(seed, r))
	if err != nil {
		return nil, fmt.Errorf("bench: serve: %w", err)
	}
	m := &model.Model{Kind: model.KindMetric, Algo: "random full-rank metric", Metric: met, Preprocess: pre}
	t1 := time.Now()
	ix, err := serve.NewIndex(context.Background(), m, d.Ref)
	if err != nil {
		return nil, fmt.Errorf("bench: serve: %w", err)
	}
	s := &serveSetup{refRows: n, in: dim, r: m.OutputDim(), k: opt.K, ixSec: time.Since(t1).Seconds()}
	d.Ref = nil // the index holds what the service needs
	if s.handler, err = serve.NewHandler(m, ix, serve.Options{K: opt.K}); err != nil {
		return nil, fmt.Errorf("bench: serve: %w", err)
	}
	if len(d.QueryLabels) > 0 {
		var sc serve.Scratch
		q, _ := d.Queries.Dims()
		right := 0
		for i := 0; i < q; i++ {
			class, _, err := ix.Predict(&sc, d.Queries.RawRowView(i), opt.K)
			if err != nil {
				return nil, fmt.Errorf("bench: serve: query %d: %w", i, err)
			}
			if ix.Classes()[class] == d.QueryLabels[i] {
				right++
			}
		}
		s.accuracy = float64(right) / float64(q)
	}
	s.requests = map[string][]loadtest.Request{}
	for _, e := range []string{loadtest.Predict, loadtest.Transform, loadtest.Distance} {
		if s.requests[e], err = loadtest.Requests(s.handler, e, d.Queries, opt.K); err != nil {
			return nil, fmt.Errorf("bench: serve: %w", err)
		}
	}
	s.setupSec = time.Since(t0).Seconds()
	debug.FreeOSMemory() // the raw reference rows go back before the load
	return s, nil
}

// randomMetric returns I + BBᵀ/d for a random d×d B: a well-conditioned
// full-rank metric, which costs what a learned one does.
func randomMetric(seed uint64, d int) *mat.SymDense {
	rng := rand.New(rand.NewPCG(seed, 164))
	b := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	m := mat.NewSymDense(d, nil)
	m.SymOuterK(1/float64(d), b)
	for i := 0; i < d; i++ {
		m.SetSym(i, i, m.At(i, i)+1)
	}
	return m
}

// metrics turns a load report into the case's metrics.
func (s *serveSetup) metrics(rep *loadtest.Report, endpoint string) map[string]float64 {
	const mib = 1 << 20
	ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 }
	m := map[string]float64{
		"reference_rows": float64(s.refRows), "input_dim": float64(s.in), "output_dim": float64(s.r),
		"clients": float64(rep.Clients), "seconds": rep.Duration.Seconds(),
		"requests": float64(rep.Requests), "errors": float64(rep.Errors), "requests_per_second": rep.RPS,
		"p50_ms": ms(rep.P50), "p90_ms": ms(rep.P90), "p99_ms": ms(rep.P99), "max_ms": ms(rep.Max),
		"rss_start_mb": float64(rep.RSSStart) / mib, "rss_end_mb": float64(rep.RSSEnd) / mib, "rss_max_mb": float64(rep.RSSMax) / mib,
		"heap_start_mb": float64(rep.HeapStart) / mib, "heap_end_mb": float64(rep.HeapEnd) / mib,
		"allocs_per_request": rep.AllocsPerRequest, "alloc_kb_per_request": rep.AllocBytesPerRequest / 1024,
		"setup_seconds": s.setupSec, "index_seconds": s.ixSec,
		"warmup_seconds": rep.Warmup.Seconds(), "warmup_gcs": float64(rep.WarmupGCs),
	}
	if endpoint == loadtest.Predict {
		m["k"] = float64(s.k)
		if s.accuracy > 0 {
			m["query_accuracy"] = s.accuracy
		}
	}
	if err := rep.Flat(serveRSSSlack(rep), 8*mib); err != nil {
		m["memory_grew"] = 1
	}
	return m
}

// serveRSSSlack is the resident-set growth the serve suite accepts: 32 MiB
// or 10% of the resident set at the start.
func serveRSSSlack(rep *loadtest.Report) uint64 { return max(32<<20, rep.RSSStart/10) }

// SyntheticMNIST returns data of MNIST's shape: 60,000 reference rows and
// 1,000 query rows of 784 features in 10 classes (see synthetic). The
// serving cost depends only on the shapes.
func SyntheticMNIST(seed uint64) (*ServeData, error) {
	return synthetic(seed, 60000, 1000, 784, 10), nil
}

// synthetic returns n reference rows and q query rows of dim features in
// the given number of classes: a random centre per class (N(0, 1)
// entries), plus a point of a shared random 40-dimensional subspace
// (spread 0.15 per feature) and noise (0.5), so that the classes are
// apart, the rows have a low intrinsic dimension, and PCA keeps the
// classes.
func synthetic(seed uint64, n, q, dim, classes int) *ServeData {
	const sub = 40
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	centres := mat.NewDense(classes, dim, nil)
	basis := mat.NewDense(sub, dim, nil)
	for _, m := range []*mat.Dense{centres, basis} {
		raw := m.RawMatrix().Data
		for i := range raw {
			raw[i] = rng.NormFloat64()
		}
	}
	basis.Scale(0.15, basis)
	rows := func(count int) (*mat.Dense, []string) {
		u := mat.NewDense(count, sub, nil)
		for i, raw := 0, u.RawMatrix().Data; i < len(raw); i++ {
			raw[i] = rng.NormFloat64()
		}
		var x mat.Dense
		x.Mul(u, basis)
		labels := make([]string, count)
		for i := 0; i < count; i++ {
			c := rng.IntN(classes)
			labels[i] = strconv.Itoa(c)
			row, centre := x.RawRowView(i), centres.RawRowView(c)
			for f := range row {
				row[f] += centre[f] + 0.5*rng.NormFloat64()
			}
		}
		return &x, labels
	}
	x, labels := rows(n)
	qx, ql := rows(q)
	return &ServeData{Ref: &serve.Reference{X: x, Labels: labels}, Queries: qx, QueryLabels: ql}
}

// isServe reports whether every result is of the serve suite.
func isServe(results []Result) bool {
	for _, r := range results {
		if r.Suite != "serve" {
			return false
		}
	}
	return len(results) > 0
}

// serveMarkdown writes the serve suite's table: per endpoint the load,
// the throughput, the latency percentiles, the errors and the memory.
func serveMarkdown(w io.Writer, results []Result) error {
	var sb strings.Builder
	sb.WriteString("| endpoint | reference rows | features → coordinates | clients | requests/s | p50 | p90 | p99 | errors | RSS start → end (max) | live heap start → end | allocations per request |\n")
	sb.WriteString("|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|---:|\n")
	sorted := append([]Result(nil), results...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Case < sorted[j].Case })
	var notes []string
	for _, r := range sorted {
		endpoint := strings.TrimPrefix(r.Case, "serve_")
		if r.Error != "" {
			fmt.Fprintf(&sb, "| %s | | | | error: %s | | | | | | | |\n", endpoint, r.Error)
			continue
		}
		m := r.Metrics
		if m["k"] > 0 {
			endpoint = fmt.Sprintf("%s (k = %.0f)", endpoint, m["k"])
		}
		fmt.Fprintf(&sb, "| %s | %.0f | %.0f → %.0f | %.0f | %.0f | %s | %s | %s | %.0f | %.0f → %.0f MiB (%.0f) | %.1f → %.1f MiB | %.0f |\n",
			endpoint, m["reference_rows"], m["input_dim"], m["output_dim"], m["clients"], m["requests_per_second"],
			fmtMillis(m["p50_ms"]), fmtMillis(m["p90_ms"]), fmtMillis(m["p99_ms"]), m["errors"],
			m["rss_start_mb"], m["rss_end_mb"], m["rss_max_mb"], m["heap_start_mb"], m["heap_end_mb"], m["allocs_per_request"])
		if m["memory_grew"] > 0 {
			notes = append(notes, fmt.Sprintf("%s: the memory grew beyond the bound (resident set +max(32 MiB, 10%%), live heap +8 MiB).", endpoint))
		}
		if m["warmup_gcs"] < 1 {
			notes = append(notes, fmt.Sprintf("%s: the warm-up ended at its limit before a garbage collection; the memory figures may include the heap's growth to its working size.", endpoint))
		}
		if a := m["query_accuracy"]; a > 0 {
			notes = append(notes, fmt.Sprintf("%s: %.1f%% of the query rows predicted right (a check of the answers, not a benchmark).", endpoint, 100*a))
		}
	}
	if len(sorted) > 0 {
		m := sorted[0].Metrics
		lo, hi := m["warmup_seconds"], m["warmup_seconds"]
		for _, r := range sorted {
			lo, hi = min(lo, r.Metrics["warmup_seconds"]), max(hi, r.Metrics["warmup_seconds"])
		}
		notes = append(notes, fmt.Sprintf("Data: %s; the model standardises the features, projects them by PCA and applies a full-rank metric. Each endpoint ran %.3g s with single-row requests, after a warm-up of %.3g to %.3g s that lasted until a garbage collection had finished. Clients and service share the process and its cores, and the allocations count both. Setup (data, preprocessing fit, index) took %.1f s, the index %.1f s.",
			sorted[0].Detail, m["seconds"], lo, hi, m["setup_seconds"], m["index_seconds"]))
	}
	for _, n := range notes {
		sb.WriteString("\n" + n + "\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// fmtMillis formats milliseconds with three significant digits.
func fmtMillis(ms float64) string {
	switch {
	case ms < 1:
		return fmt.Sprintf("%.0f µs", ms*1e3)
	case ms < 100:
		return fmt.Sprintf("%.3g ms", ms)
	}
	return fmt.Sprintf("%.0f ms", ms)
}
