// Package loadtest drives an HTTP service with concurrent clients for a
// bounded time and reports its throughput, latency percentiles, errors and
// the memory of the process over the run. The service's tests and
// `psdlearn bench --suite serve` use it.
//
// Each client sends one request at a time (a closed loop) on its own
// keep-alive connection, cycling through Options.Requests from its own
// offset, and checks every response: status 200 and, when the request has
// one, the expected body byte for byte, so that a wrong answer under load
// counts as an error. The clients run in the measuring process: when the
// service is in the same process (an httptest server, a loopback
// listener), they share its cores, and the memory figures are the
// process's.
//
// Memory is sampled every SampleEvery after the warm-up: the resident set
// (from /proc/self/statm; 0 where it is unavailable) and the Go heap live
// after the last collection. The run starts and ends with a forced
// collection while the clients keep running, so HeapStart and HeapEnd
// compare like with like; Flat checks that the memory did not grow beyond
// a bound.
//
// Latencies go into a histogram with 64 buckets per power of two, so the
// percentiles are within 1.6% of the true ones and the recording costs no
// memory during the run.
package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Request is one request of the load: method (POST when empty), path
// under Options.URL, body, and the body the service must answer (nil: any,
// with status 200).
type Request struct {
	Method, Path string
	Body         []byte
	Want         []byte
}

// Options describe a load test.
type Options struct {
	URL      string    // the service's base URL, e.g. "http://127.0.0.1:8080"
	Requests []Request // cycled by every client
	Clients  int       // concurrent clients (0: 2·GOMAXPROCS)
	// Warmup is run before the measurement starts (0: none); Duration is
	// the measured time (0: 1 s).
	Warmup, Duration time.Duration
	// WarmupGCs makes a warm-up of at least Warmup also last until this
	// many garbage collections have finished under the load (0: 1): a
	// collection starts when the heap has grown to its target under the
	// load, so the memory is measured from its working size on. The
	// warm-up lasts at most Warmup + 60 s.
	WarmupGCs int
	// SampleEvery is the memory sampling period (0: 100 ms).
	SampleEvery time.Duration
	// Timeout bounds one request (0: 30 s); a request past it is an error.
	Timeout time.Duration
}

// Sample is the memory of the process at one time.
type Sample struct {
	At       time.Duration // since the measurement started
	RSS      uint64        // resident set, bytes (0: unknown)
	LiveHeap uint64        // Go heap live after the last collection, bytes
}

// Report is what a load test measured after the warm-up.
type Report struct {
	Clients int
	// Warmup is how long the warm-up lasted and WarmupGCs the collections
	// during it.
	Warmup     time.Duration
	WarmupGCs  uint64
	Duration   time.Duration // measured time
	Requests   int64         // completed, errors included
	Errors     int64
	FirstError string
	// RPS is Requests per second of Duration.
	RPS float64
	// Latency percentiles of the measured requests, errors included.
	P50, P90, P99, Max time.Duration
	// Memory samples over the measurement, and the resident set and live
	// heap after the forced collections at its start and end.
	Samples              []Sample
	RSSStart, RSSEnd     uint64
	HeapStart, HeapEnd   uint64
	RSSMax, HeapMax      uint64
	AllocBytesPerRequest float64 // Go heap bytes allocated per request, clients and service
	AllocsPerRequest     float64 // and objects
	GCs                  uint64  // collections during the measurement
}

// Run runs the load test. It returns an error only when the test cannot
// run (no requests, a bad URL, ctx done before the end); failed requests
// are counted in the report.
func Run(ctx context.Context, opt Options) (*Report, error) {
	if len(opt.Requests) == 0 {
		return nil, errors.New("loadtest: no requests")
	}
	if !strings.HasPrefix(opt.URL, "http://") && !strings.HasPrefix(opt.URL, "https://") {
		return nil, fmt.Errorf("loadtest: URL %q is not http(s)", opt.URL)
	}
	clients := opt.Clients
	if clients <= 0 {
		clients = 2 * runtime.GOMAXPROCS(0)
	}
	dur := opt.Duration
	if dur <= 0 {
		dur = time.Second
	}
	every := opt.SampleEvery
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        clients,
		MaxIdleConnsPerHost: clients,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: timeout}

	// The clients record only while recording is set; the phase changes
	// happen between their requests.
	var (
		recording atomic.Bool
		stop      = make(chan struct{})
		wg        sync.WaitGroup
	)
	states := make([]*clientState, clients)
	for c := range states {
		states[c] = &clientState{}
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			st := states[c]
			var buf bytes.Buffer
			for i := c * len(opt.Requests) / clients; ; i++ {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				req := &opt.Requests[i%len(opt.Requests)]
				t0 := time.Now()
				err := do(ctx, client, opt.URL, req, &buf)
				lat := time.Since(t0)
				if recording.Load() {
					st.record(lat, err)
				}
			}
		}(c)
	}
	finish := func() {
		close(stop)
		wg.Wait()
	}

	rep := &Report{Clients: clients}
	if opt.Warmup > 0 {
		gcs := uint64(opt.WarmupGCs)
		if gcs == 0 {
			gcs = 1
		}
		t0, gc0 := time.Now(), readAllocs().gcs
		wait := time.NewTimer(opt.Warmup)
		poll := time.NewTicker(50 * time.Millisecond)
		limit := time.NewTimer(opt.Warmup + time.Minute)
	warm:
		for done := false; ; {
			select {
			case <-wait.C:
				done = true
			case <-poll.C:
			case <-limit.C:
				break warm
			case <-ctx.Done():
				poll.Stop()
				finish()
				return nil, ctx.Err()
			}
			if rep.WarmupGCs = readAllocs().gcs - gc0; done && rep.WarmupGCs >= gcs {
				break
			}
		}
		poll.Stop()
		wait.Stop()
		limit.Stop()
		rep.Warmup = time.Since(t0)
	}
	rep.RSSStart, rep.HeapStart = collect()
	allocs0 := readAllocs()
	recording.Store(true)
	start := time.Now()
	tick := time.NewTicker(every)
	deadline := time.NewTimer(dur)
	rep.Samples = make([]Sample, 0, int(dur/every)+2)
	rep.Samples = append(rep.Samples, Sample{0, rep.RSSStart, rep.HeapStart})
loop:
	for {
		select {
		case <-tick.C:
			rss, live := memory()
			rep.Samples = append(rep.Samples, Sample{time.Since(start), rss, live})
		case <-deadline.C:
			break loop
		case <-ctx.Done():
			tick.Stop()
			finish()
			return nil, ctx.Err()
		}
	}
	tick.Stop()
	recording.Store(false)
	rep.Duration = time.Since(start)
	allocs1 := readAllocs()
	rep.RSSEnd, rep.HeapEnd = collect()
	rep.Samples = append(rep.Samples, Sample{time.Since(start), rep.RSSEnd, rep.HeapEnd})
	finish()

	var hist histogram
	for _, st := range states {
		rep.Requests += st.n
		rep.Errors += st.errors
		if rep.FirstError == "" {
			rep.FirstError = st.firstError
		}
		hist.merge(&st.hist)
		rep.Max = max(rep.Max, st.max)
	}
	rep.RPS = float64(rep.Requests) / rep.Duration.Seconds()
	rep.P50, rep.P90, rep.P99 = hist.quantile(0.5), hist.quantile(0.9), hist.quantile(0.99)
	for _, s := range rep.Samples {
		rep.RSSMax, rep.HeapMax = max(rep.RSSMax, s.RSS), max(rep.HeapMax, s.LiveHeap)
	}
	if rep.Requests > 0 {
		rep.AllocBytesPerRequest = float64(allocs1.bytes-allocs0.bytes) / float64(rep.Requests)
		rep.AllocsPerRequest = float64(allocs1.objects-allocs0.objects) / float64(rep.Requests)
	}
	rep.GCs = allocs1.gcs - allocs0.gcs
	return rep, nil
}

// Flat checks the memory of a report: the resident set at the end may
// exceed the one at the start by at most rssSlack bytes, and the live heap
// by at most heapSlack. The resident set is skipped where it is unknown.
// Both are taken after a forced collection with the load running, so a
// service that keeps nothing per request shows the same live heap; the
// resident set also moves with the heap's target and the allocator's
// returns to the OS, so its bound is looser.
func (r *Report) Flat(rssSlack, heapSlack uint64) error {
	if r.RSSStart > 0 && r.RSSEnd > r.RSSStart+rssSlack {
		return fmt.Errorf("resident set grew from %s to %s during the run (bound +%s)", MiB(r.RSSStart), MiB(r.RSSEnd), MiB(rssSlack))
	}
	if r.HeapEnd > r.HeapStart+heapSlack {
		return fmt.Errorf("live heap grew from %s to %s during the run (bound +%s)", MiB(r.HeapStart), MiB(r.HeapEnd), MiB(heapSlack))
	}
	return nil
}

// MiB formats a byte count in MiB.
func MiB(b uint64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }

// do sends one request and checks its answer, reading the body into buf.
func do(ctx context.Context, c *http.Client, base string, r *Request, buf *bytes.Buffer) error {
	method := r.Method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, base+r.Path, bytes.NewReader(r.Body))
	if err != nil {
		return err
	}
	if len(r.Body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return fmt.Errorf("%s %s: reading the response: %w", method, r.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d: %s", method, r.Path, resp.StatusCode, strings.TrimSpace(trunc(buf.String(), 200)))
	}
	if r.Want != nil && !bytes.Equal(buf.Bytes(), r.Want) {
		return fmt.Errorf("%s %s: wrong answer: %s, want %s", method, r.Path, trunc(buf.String(), 120), trunc(string(r.Want), 120))
	}
	return nil
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// clientState is what one client recorded.
type clientState struct {
	n, errors  int64
	firstError string
	max        time.Duration
	hist       histogram
}

func (s *clientState) record(lat time.Duration, err error) {
	s.n++
	if err != nil {
		s.errors++
		if s.firstError == "" {
			s.firstError = err.Error()
		}
	}
	s.max = max(s.max, lat)
	s.hist.add(lat)
}

// histogram counts durations in buckets of relative width 1/64: bucket
// (e, m) holds [2^e·(1 + m/64), 2^e·(1 + (m+1)/64)) nanoseconds, and the
// values below 64 ns have a bucket each.
type histogram struct {
	counts [64 * 64]int64
	total  int64
}

const subBuckets = 64

func bucketOf(ns int64) int {
	if ns < subBuckets {
		return int(max(ns, 0))
	}
	e := bits.Len64(uint64(ns)) - 1 // 2^e ≤ ns < 2^(e+1), e ≥ 6
	m := int(ns>>(e-6)) - subBuckets
	return (e-5)*subBuckets + m
}

// upper returns the upper end of bucket b in nanoseconds.
func upper(b int) int64 {
	if b < subBuckets {
		return int64(b + 1)
	}
	e := b/subBuckets + 5
	m := b % subBuckets
	return int64(subBuckets+m+1) << (e - 6)
}

func (h *histogram) add(d time.Duration) {
	b := bucketOf(int64(d))
	b = min(b, len(h.counts)-1)
	h.counts[b]++
	h.total++
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
}

// quantile returns the upper end of the bucket holding the q-quantile.
func (h *histogram) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := int64(q*float64(h.total-1)) + 1
	var seen int64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(upper(b))
		}
	}
	return time.Duration(upper(len(h.counts) - 1))
}

// allocCounters are the runtime's cumulative allocation counters.
type allocCounters struct{ bytes, objects, gcs uint64 }

func readAllocs() allocCounters {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return allocCounters{s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()}
}

// collect forces a collection and returns the resident set and the live heap.
func collect() (rss, live uint64) {
	runtime.GC()
	return memory()
}

// memory returns the resident set (0 when unknown) and the Go heap live
// after the last collection.
func memory() (rss, live uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return residentSet(), s[0].Value.Uint64()
}

// residentSet reads the resident set of the process from /proc/self/statm
// (its second field, in pages), or returns 0.
func residentSet() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}
