package loadtest

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHistogram: every quantile is the upper end of the bucket of the
// exact quantile: at or above it, by less than 1/64 of it (plus 1 ns).
func TestHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h histogram
	var all []time.Duration
	for i := 0; i < 20000; i++ {
		d := time.Duration(rng.ExpFloat64() * float64(time.Millisecond))
		if i%100 == 0 {
			d = time.Duration(rng.IntN(64)) // the exact buckets below 64 ns
		}
		h.add(d)
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.99, 0.999, 1} {
		exact := all[int(q*float64(len(all)-1))]
		got := h.quantile(q)
		if got <= exact || float64(got) > float64(exact)*(1+1.0/64)+1 {
			t.Errorf("q=%v: %v, exact %v", q, got, exact)
		}
	}
	for _, ns := range []int64{0, 1, 63, 64, 65, 127, 128, 1000, 1 << 40} {
		b := bucketOf(ns)
		if lo := upper(b - 1); b > 0 && lo > ns || upper(b) <= ns {
			t.Errorf("%d ns in bucket %d with upper end %d", ns, b, upper(b))
		}
	}
}

// TestRunCountsErrors: a service that fails every third request, and
// answers another wrongly, has those requests counted as errors.
func TestRunCountsErrors(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wrong" {
			w.Write([]byte("no"))
			return
		}
		if n.Add(1)%3 == 0 {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("yes"))
	}))
	defer srv.Close()
	rep, err := Run(context.Background(), Options{
		URL: srv.URL, Clients: 3, Duration: 300 * time.Millisecond,
		Requests: []Request{{Path: "/ok", Want: []byte("yes")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests < 10 || rep.Errors == 0 || rep.Errors > rep.Requests/2 || !strings.Contains(rep.FirstError, "status 500") {
		t.Errorf("requests %d, errors %d (%s)", rep.Requests, rep.Errors, rep.FirstError)
	}
	if rep.P50 <= 0 || rep.P99 < rep.P50 || rep.Max < rep.P50 || rep.RPS <= 0 || len(rep.Samples) < 2 {
		t.Errorf("report %+v", rep)
	}
	rep, err = Run(context.Background(), Options{
		URL: srv.URL, Clients: 1, Duration: 100 * time.Millisecond,
		Requests: []Request{{Path: "/wrong", Want: []byte("yes")}},
	})
	if err != nil || rep.Errors != rep.Requests || !strings.Contains(rep.FirstError, "wrong answer") {
		t.Errorf("wrong answers: %d of %d errors (%s), %v", rep.Errors, rep.Requests, rep.FirstError, err)
	}
	if _, err := Run(context.Background(), Options{URL: srv.URL}); err == nil {
		t.Error("no requests accepted")
	}
}

func TestFlat(t *testing.T) {
	r := Report{RSSStart: 100 << 20, RSSEnd: 120 << 20, HeapStart: 10 << 20, HeapEnd: 11 << 20}
	if err := r.Flat(32<<20, 2<<20); err != nil {
		t.Errorf("within bounds: %v", err)
	}
	if err := r.Flat(16<<20, 2<<20); err == nil || !strings.Contains(err.Error(), "resident set") {
		t.Errorf("RSS growth: %v", err)
	}
	if err := r.Flat(32<<20, 512<<10); err == nil || !strings.Contains(err.Error(), "live heap") {
		t.Errorf("heap growth: %v", err)
	}
}
