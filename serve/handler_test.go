package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// post sends body to path on h and returns the status and the response.
func post(t testing.TB, h http.Handler, path, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec.Code, rec.Body.String()
}

func rowsJSON(x mat.Matrix) string {
	r, _ := x.Dims()
	rows := make([][]float64, r)
	for i := range rows {
		rows[i] = mat.Row(nil, i, x)
	}
	b, _ := json.Marshal(rows)
	return string(b)
}

func TestEndpoints(t *testing.T) {
	ix, _, q := testIndex(t, 300, 8, 5, 4, 3, 4)
	m := ix.Model()
	h, err := NewHandler(m, ix, Options{})
	if err != nil {
		t.Fatal(err)
	}

	// transform: the coordinates of TransformRowTo, exactly (shortest
	// round-trip formatting).
	code, body := post(t, h, "/v1/transform", `{"rows":`+rowsJSON(q)+`}`)
	var tr struct{ Rows [][]float64 }
	if err := json.Unmarshal([]byte(body), &tr); code != 200 || err != nil || len(tr.Rows) != 4 {
		t.Fatalf("transform: %d %s (%v)", code, body, err)
	}
	z := make([]float64, m.OutputDim())
	for i, row := range tr.Rows {
		if err := m.TransformRowTo(z, q.RawRowView(i)); err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(mat.NewVecDense(len(z), z), mat.NewVecDense(len(row), row)) {
			t.Errorf("transform row %d: %v, want %v", i, row, z)
		}
	}

	// distance: Model.Distance of each pair.
	a, b := q.Slice(0, 2, 0, 8), q.Slice(2, 4, 0, 8)
	code, body = post(t, h, "/v1/distance", `{"a":`+rowsJSON(a)+`,"b":`+rowsJSON(b)+`}`)
	var dr struct{ Distances []float64 }
	if err := json.Unmarshal([]byte(body), &dr); code != 200 || err != nil || len(dr.Distances) != 2 {
		t.Fatalf("distance: %d %s (%v)", code, body, err)
	}
	for i, d := range dr.Distances {
		want, _ := m.Distance(q.RawRowView(i), q.RawRowView(i+2))
		if d != want {
			t.Errorf("distance %d: %v, want %v", i, d, want)
		}
	}

	// predict: Index.Predict's classes and neighbours.
	code, body = post(t, h, "/v1/predict", `{"rows":`+rowsJSON(q)+`,"k":5,"neighbors":true}`)
	var pr struct {
		Labels    []string
		Neighbors [][]struct {
			Row      int
			Label    string
			Distance float64
		}
	}
	if err := json.Unmarshal([]byte(body), &pr); code != 200 || err != nil || len(pr.Labels) != 4 || len(pr.Neighbors) != 4 {
		t.Fatalf("predict: %d %s (%v)", code, body, err)
	}
	var s Scratch
	for i := range pr.Labels {
		class, nb, err := ix.Predict(&s, q.RawRowView(i), 5)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Labels[i] != ix.Classes()[class] || len(pr.Neighbors[i]) != 5 {
			t.Errorf("predict row %d: %q, %d neighbours; want %q", i, pr.Labels[i], len(pr.Neighbors[i]), ix.Classes()[class])
			continue
		}
		for j, n := range nb {
			got := pr.Neighbors[i][j]
			if got.Row != n.Row || got.Label != ix.Classes()[n.Class] || got.Distance != n.Distance {
				t.Errorf("predict row %d neighbour %d: %+v, want %+v", i, j, got, n)
			}
		}
	}
	// The default k and no neighbours.
	code, body = post(t, h, "/v1/predict", `{"rows":`+rowsJSON(q.Slice(0, 1, 0, 8))+`}`)
	if class, _, _ := ix.Predict(&s, q.RawRowView(0), 3); code != 200 || body != `{"labels":["`+ix.Classes()[class]+`"]}`+"\n" {
		t.Errorf("predict with defaults: %d %s", code, body)
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/model", nil))
	var info struct {
		InputDim, OutputDim, ReferenceRows int `json:"-"`
		Classes                            []string
		Limits                             map[string]float64
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &info); rec.Code != 200 || err != nil || len(info.Classes) != 3 || info.Limits["max_rows"] != 256 || info.Limits["k"] != 3 {
		t.Errorf("model info: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != 200 || rec.Body.String() != "ok\n" {
		t.Errorf("healthz: %d %q", rec.Code, rec.Body)
	}
}

func TestRequestErrors(t *testing.T) {
	ix, _, q := testIndex(t, 50, 4, 0, 4, 2, 2)
	m := ix.Model()
	h, err := NewHandler(m, ix, Options{MaxBodyBytes: 2000, MaxRows: 3, MaxK: 10})
	if err != nil {
		t.Fatal(err)
	}
	noIndex, err := NewHandler(m, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	row := `[1,2,3,4]`
	for _, tc := range []struct {
		name, method, path, body string
		h                        http.Handler
		status                   int
		msg                      string
	}{
		{"bad JSON", "POST", "/v1/transform", `{"rows": [1,`, h, 400, "decoding the request"},
		{"not an object", "POST", "/v1/transform", `[1,2]`, h, 400, "decoding the request"},
		{"string number", "POST", "/v1/transform", `{"rows": [["1",2,3,4]]}`, h, 400, "decoding the request"},
		{"huge number", "POST", "/v1/transform", `{"rows": [[1e999,2,3,4]]}`, h, 400, "decoding the request"},
		{"no rows", "POST", "/v1/transform", `{"row": [` + row + `]}`, h, 400, `no "rows"`},
		{"short row", "POST", "/v1/transform", `{"rows": [` + row + `,[1,2]]}`, h, 400, "row 1: model: dimension mismatch"},
		{"too many rows", "POST", "/v1/transform", `{"rows": [` + strings.Repeat(row+",", 3) + row + `]}`, h, 413, "4 rows, at most 3"},
		{"body too large", "POST", "/v1/transform", `{"rows": [[` + strings.Repeat("1,", 1200) + `1]]}`, h, 413, "larger than 2000 bytes"},
		{"pairs", "POST", "/v1/distance", `{"a": [` + row + `], "b": []}`, h, 400, "want pairs"},
		{"no pairs", "POST", "/v1/distance", `{"b": [` + row + `]}`, h, 400, `no "a"`},
		{"short pair", "POST", "/v1/distance", `{"a": [` + row + `], "b": [[1]]}`, h, 400, "pair 0: model: dimension mismatch"},
		{"k too large", "POST", "/v1/predict", `{"rows": [` + row + `], "k": 11}`, h, 400, "k = 11 outside [1, 10]"},
		{"negative k", "POST", "/v1/predict", `{"rows": [` + row + `], "k": -1}`, h, 400, "k = -1"},
		{"predict without index", "POST", "/v1/predict", `{"rows": [` + row + `]}`, noIndex, 404, ""},
		{"GET predict", "GET", "/v1/predict", "", h, 405, ""},
		{"POST model", "POST", "/v1/model", "{}", h, 405, ""},
		{"unknown path", "POST", "/v2/transform", "{}", h, 404, ""},
	} {
		rec := httptest.NewRecorder()
		tc.h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body)))
		if rec.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, rec.Code, strings.TrimSpace(rec.Body.String()), tc.status)
		}
		if tc.msg != "" {
			var e struct{ Error string }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || !strings.Contains(e.Error, tc.msg) || rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("%s: error body %q is not {\"error\": …} JSON with %q", tc.name, rec.Body, tc.msg)
			}
		}
	}
	// A request whose budget is spent gets 503.
	slow, err := NewHandler(m, ix, Options{RequestTimeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := post(t, slow, "/v1/predict", `{"rows":`+rowsJSON(q)+`}`); code != 503 {
		t.Errorf("spent budget: %d %s, want 503", code, body)
	}
	// All slots taken: a request waits for its budget, then gets 503.
	busy, err := NewHandler(m, ix, Options{MaxInFlight: 1, RequestTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	held := <-busy.slots
	if code, body := post(t, busy, "/v1/transform", `{"rows": [`+row+`]}`); code != 503 || !strings.Contains(body, "busy") {
		t.Errorf("no free slot: %d %s, want 503", code, body)
	}
	busy.slots <- held
	if code, body := post(t, busy, "/v1/transform", `{"rows": [`+row+`]}`); code != 200 {
		t.Errorf("slot given back: %d %s", code, body)
	}
	// The reused request memory does not leak fields into the next request.
	if code, body := post(t, h, "/v1/predict", `{"rows": [`+row+`], "k": 7, "neighbors": true}`); code != 200 || !strings.Contains(body, "neighbors") {
		t.Fatalf("predict: %d %s", code, body)
	}
	for i := 0; i < 4; i++ { // another slot may come next
		if code, body := post(t, h, "/v1/predict", `{"rows": [`+row+`]}`); code != 200 || strings.Contains(body, "neighbors") {
			t.Errorf("a request without neighbors got %d %s", code, body)
		}
	}
	if _, err := NewHandler(m, &Index{model: testModel(t, q, 0, 2, 3)}, Options{}); err == nil {
		t.Error("a handler with another model's index")
	}
}

// discard is a ResponseWriter that keeps nothing, for counting the
// handler's own allocations.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// TestAllocationsDoNotGrowWithRows: once the pool's buffers have grown, a
// request of 64 rows allocates as much as one of a single row, for every
// endpoint. (The constant is encoding/json's and net/http's per-request
// work.)
func TestAllocationsDoNotGrowWithRows(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation changes allocation counts")
	}
	ix, _, q := testIndex(t, 400, 10, 6, 6, 3, 64)
	h, err := NewHandler(ix.Model(), ix, Options{MaxInFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	allocs := func(path, body string) float64 {
		w := &discard{h: http.Header{}}
		req := httptest.NewRequest(http.MethodPost, path, nil)
		rd := strings.NewReader(body)
		return testing.AllocsPerRun(20, func() {
			rd.Reset(body)
			req.Body = io.NopCloser(rd)
			h.ServeHTTP(w, req)
		})
	}
	one, all := rowsJSON(q.Slice(0, 1, 0, 10)), rowsJSON(q)
	for _, tc := range []struct{ path, one, all string }{
		{"/v1/transform", `{"rows":` + one + `}`, `{"rows":` + all + `}`},
		{"/v1/predict", `{"rows":` + one + `,"neighbors":true}`, `{"rows":` + all + `,"neighbors":true}`},
		{"/v1/distance", `{"a":` + one + `,"b":` + one + `}`, `{"a":` + all + `,"b":` + all + `}`},
	} {
		a1, a64 := allocs(tc.path, tc.one), allocs(tc.path, tc.all)
		t.Logf("%s: %v allocations with 1 row, %v with 64", tc.path, a1, a64)
		if a64 > a1 {
			t.Errorf("%s: %v allocations with 64 rows, %v with 1", tc.path, a64, a1)
		}
	}
}

// TestConcurrentRequests sends mixed requests from many goroutines to one
// service (run it with -race) and checks every answer against the answer
// to the same request alone: the pooled buffers are never shared.
func TestConcurrentRequests(t *testing.T) {
	ix, _, q := testIndex(t, 300, 6, 4, 4, 3, 12)
	h, err := NewHandler(ix.Model(), ix, Options{MaxInFlight: 3})
	if err != nil {
		t.Fatal(err)
	}
	type call struct{ path, body, want string }
	var calls []call
	for i := 0; i < 12; i++ {
		one := rowsJSON(q.Slice(i, i+1, 0, 6))
		calls = append(calls,
			call{"/v1/transform", `{"rows":` + rowsJSON(q.Slice(0, i+1, 0, 6)) + `}`, ""},
			call{"/v1/predict", fmt.Sprintf(`{"rows":%s,"k":%d,"neighbors":%v}`, one, 1+i%5, i%2 == 0), ""},
			call{"/v1/distance", `{"a":` + one + `,"b":` + rowsJSON(q.Slice(11-i, 12-i, 0, 6)) + `}`, ""})
	}
	for i := range calls {
		code, body := post(t, h, calls[i].path, calls[i].body)
		if code != 200 {
			t.Fatalf("%s: %d %s", calls[i].path, code, body)
		}
		calls[i].want = body
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := 0; k < 3*len(calls); k++ {
				c := calls[(w*7+k)%len(calls)]
				resp, err := srv.Client().Post(srv.URL+c.path, "application/json", strings.NewReader(c.body))
				if err != nil {
					errc <- err
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || string(b) != c.want {
					errc <- fmt.Errorf("worker %d %s: %d %s (%v), want %s", w, c.path, resp.StatusCode, b, err, c.want)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// TestServeShutsDownGracefully: on cancellation Serve stops accepting,
// lets the request in progress finish and returns nil; past the grace
// period it closes the connection and says so.
func TestServeShutsDownGracefully(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace time.Duration
		ok    bool
	}{{"in time", 5 * time.Second, true}, {"past the grace period", 50 * time.Millisecond, false}} {
		t.Run(tc.name, func(t *testing.T) {
			started, release := make(chan struct{}), make(chan struct{})
			srv := NewServer("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(started)
				<-release
				w.Write([]byte("done"))
			}))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- Serve(ctx, srv, ln, tc.grace) }()
			got := make(chan string, 1)
			go func() {
				resp, err := http.Get("http://" + ln.Addr().String() + "/")
				if err != nil {
					got <- "error: " + err.Error()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got <- string(b)
			}()
			<-started
			cancel()
			if tc.ok {
				// Shutdown closes the listener before it waits for the request.
				for i := 0; i < 100; i++ {
					if c, err := net.Dial("tcp", ln.Addr().String()); err != nil {
						break
					} else {
						c.Close()
					}
					time.Sleep(10 * time.Millisecond)
				}
				if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
					c.Close()
					t.Error("still accepting connections after the cancellation")
				}
				close(release)
				if body := <-got; body != "done" {
					t.Errorf("request in progress: %q", body)
				}
				if err := <-served; err != nil {
					t.Errorf("Serve: %v", err)
				}
				return
			}
			err = <-served
			close(release)
			if err == nil || !strings.Contains(err.Error(), "still running") {
				t.Errorf("Serve past the grace period: %v", err)
			}
			if body := <-got; !strings.HasPrefix(body, "error") {
				t.Errorf("request past the grace period: %q", body)
			}
		})
	}
}

// TestNewServerTimeouts: a client that sends headers slowly is cut off.
func TestNewServerTimeouts(t *testing.T) {
	srv := NewServer("", http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Fatalf("timeouts not set: %+v", srv)
	}
	srv.ReadHeaderTimeout = 100 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Serve(ctx, srv, ln, time.Second)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("POST /v1/transform HTTP/1.1\r\nHost: x\r\n")) // never finishes the headers
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var buf bytes.Buffer
	_, err = io.Copy(&buf, c)
	if err != nil {
		t.Fatalf("the server did not close the slow connection: %v", err)
	}
}
