package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/psdlearn/psdlearn/model"
)

// Options are the limits of a Handler; the zero value gives the defaults.
type Options struct {
	// MaxBodyBytes caps a request body (0: 1 MiB); a larger one gets 413.
	MaxBodyBytes int64
	// MaxRows caps the rows (or pairs) of one request (0: 256); more get 413.
	MaxRows int
	// K is the number of neighbours of a prediction when the request names
	// none (0: 3, at most the reference rows).
	K int
	// MaxK is the largest k a request may ask for (0: 100, at most the
	// reference rows).
	MaxK int
	// MaxInFlight is the number of requests computing at once (0:
	// GOMAXPROCS); the others wait for a slot, within RequestTimeout.
	MaxInFlight int
	// RequestTimeout bounds the time a request waits and computes (0: 10 s);
	// past it the request gets 503. The rows are checked between rows.
	RequestTimeout time.Duration
}

func (o Options) withDefaults(refRows int) Options {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.MaxRows <= 0 {
		o.MaxRows = 256
	}
	if o.MaxK <= 0 {
		o.MaxK = 100
	}
	if o.K <= 0 {
		o.K = 3
	}
	if refRows > 0 {
		o.MaxK = min(o.MaxK, refRows)
		o.K = min(o.K, o.MaxK)
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = runtime.GOMAXPROCS(0)
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 10 * time.Second
	}
	return o
}

// Handler answers the service's requests (see the package documentation
// for the endpoints) for one model and, for predictions, one Index. It is
// safe for concurrent use. It holds MaxInFlight sets of buffers, one per
// request computing; a request takes a set (or waits for one) and gives it
// back, and the buffers grow to the largest request the limits allow and
// stay, so a request allocates a constant amount whatever its number of
// rows, and the handler's memory is bounded by its limits.
type Handler struct {
	m      *model.Model
	ix     *Index
	opt    Options
	slots  chan *work // the free buffer sets
	mux    *http.ServeMux
	info   []byte   // the /v1/model response
	labels [][]byte // class names as JSON strings
}

// NewHandler returns the handler for m, with predictions against ix (nil:
// the predict endpoint answers 404). ix, if set, must be an index of m.
func NewHandler(m *model.Model, ix *Index, opt Options) (*Handler, error) {
	if m.OutputDim() == 0 {
		return nil, fmt.Errorf("%w: the model is not a metric model (no feature transform)", ErrInvalid)
	}
	if ix != nil && ix.model != m {
		return nil, fmt.Errorf("%w: the index was built for another model", ErrInvalid)
	}
	refRows := 0
	if ix != nil {
		refRows = ix.n
	}
	h := &Handler{m: m, ix: ix, opt: opt.withDefaults(refRows)}
	h.slots = make(chan *work, h.opt.MaxInFlight)
	for i := 0; i < h.opt.MaxInFlight; i++ {
		h.slots <- new(work)
	}
	info := map[string]any{
		"algo": m.Algo, "input_dim": m.InputDim(), "output_dim": m.OutputDim(),
		"limits": map[string]any{
			"max_body_bytes": h.opt.MaxBodyBytes, "max_rows": h.opt.MaxRows, "k": h.opt.K, "max_k": h.opt.MaxK,
			"max_in_flight": h.opt.MaxInFlight, "request_timeout_seconds": h.opt.RequestTimeout.Seconds(),
		},
	}
	if ix != nil {
		info["reference_rows"] = ix.n
		info["classes"] = ix.classes
		for _, c := range ix.classes {
			b, err := json.Marshal(c)
			if err != nil {
				return nil, fmt.Errorf("serve: class name %q: %w", c, err)
			}
			h.labels = append(h.labels, b)
		}
	}
	var err error
	if h.info, err = json.Marshal(info); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	h.info = append(h.info, '\n')
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /v1/model", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, h.info) })
	mux.HandleFunc("POST /v1/transform", h.compute(h.transform))
	mux.HandleFunc("POST /v1/distance", h.compute(h.distance))
	if ix != nil {
		mux.HandleFunc("POST /v1/predict", h.compute(h.predict))
	}
	h.mux = mux
	return h, nil
}

// Options returns the handler's limits with the defaults filled in.
func (h *Handler) Options() Options { return h.opt }

// ServeHTTP dispatches a request to its endpoint.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// request is the JSON body of every POST endpoint; each uses its fields.
type request struct {
	Rows      [][]float64 `json:"rows"`
	A         [][]float64 `json:"a"`
	B         [][]float64 `json:"b"`
	K         int         `json:"k"`
	Neighbors bool        `json:"neighbors"`
}

// reset empties r for the next request, keeping the memory of its rows:
// encoding/json decodes a slice into the capacity it finds.
func (r *request) reset() {
	r.Rows, r.A, r.B = r.Rows[:0], r.A[:0], r.B[:0]
	r.K, r.Neighbors = 0, false
}

// work is the memory of one request, reused by the requests that take its
// slot.
type work struct {
	body bytes.Buffer
	req  request
	out  []byte // the response
	nb   []byte // a prediction's neighbours, before they join out
	z    []float64
	s    Scratch
}

// httpError is an error with the status it answers.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) error {
	return &httpError{status, fmt.Sprintf(format, args...)}
}

// compute wraps an endpoint: it waits for one of the MaxInFlight buffer
// sets, reads the body within MaxBodyBytes, decodes it into the set's
// memory, runs f, which appends the response to wk.out, and writes the
// response or the error. The time budget is checked against a deadline
// rather than a context with a timer, which a request would allocate.
func (h *Handler) compute(f func(b budget, wk *work) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b := budget{ctx: r.Context(), end: time.Now().Add(h.opt.RequestTimeout)}
		var wk *work
		select {
		case wk = <-h.slots:
		default: // all slots taken: wait, within the budget
			t := time.NewTimer(h.opt.RequestTimeout)
			select {
			case wk = <-h.slots:
				t.Stop()
			case <-t.C:
				writeError(w, errorf(http.StatusServiceUnavailable, "busy: no free slot within %v", h.opt.RequestTimeout))
				return
			case <-r.Context().Done():
				t.Stop()
				writeError(w, errorf(http.StatusServiceUnavailable, "request stopped: %v", r.Context().Err()))
				return
			}
		}
		defer func() { h.slots <- wk }()
		wk.body.Reset()
		if _, err := wk.body.ReadFrom(http.MaxBytesReader(w, r.Body, h.opt.MaxBodyBytes)); err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", h.opt.MaxBodyBytes))
			} else {
				writeError(w, errorf(http.StatusBadRequest, "reading the request: %v", err))
			}
			return
		}
		wk.req.reset()
		if err := json.Unmarshal(wk.body.Bytes(), &wk.req); err != nil {
			writeError(w, errorf(http.StatusBadRequest, "decoding the request: %v", err))
			return
		}
		wk.out = wk.out[:0]
		if err := f(b, wk); err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, wk.out)
	}
}

// checkRows validates the number of rows of a request.
func (h *Handler) checkRows(field string, n int) error {
	if n == 0 {
		return errorf(http.StatusBadRequest, "no %q in the request", field)
	}
	if n > h.opt.MaxRows {
		return errorf(http.StatusRequestEntityTooLarge, "%d %s, at most %d per request", n, field, h.opt.MaxRows)
	}
	return nil
}

// budget is a request's time budget: its context (done when the client
// goes or the server shuts down) and a deadline.
type budget struct {
	ctx context.Context
	end time.Time
}

// check returns a 503 error when the budget is spent; the endpoints call it
// between rows.
func (b budget) check() error {
	if err := b.ctx.Err(); err != nil {
		return errorf(http.StatusServiceUnavailable, "request stopped: %v", err)
	}
	if time.Now().After(b.end) {
		return errorf(http.StatusServiceUnavailable, "request stopped: its time budget is spent")
	}
	return nil
}

// rowError is a model error about row i of a request: a 400.
func rowError(field string, i int, err error) error {
	return errorf(http.StatusBadRequest, "%s %d: %v", field, i, err)
}

// transform answers {"rows": [[…], …]} with the rows' learned-space
// coordinates, {"rows": [[…], …]}.
func (h *Handler) transform(b budget, wk *work) error {
	rows := wk.req.Rows
	if err := h.checkRows("rows", len(rows)); err != nil {
		return err
	}
	r := h.m.OutputDim()
	if cap(wk.z) < r {
		wk.z = make([]float64, r)
	}
	z := wk.z[:r]
	out := append(wk.out, `{"rows":[`...)
	for i, x := range rows {
		if err := b.check(); err != nil {
			return err
		}
		if err := h.m.TransformRowTo(z, x); err != nil {
			return rowError("row", i, err)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = appendFloats(out, z)
	}
	wk.out = append(out, "]}\n"...)
	return nil
}

// distance answers {"a": [[…], …], "b": [[…], …]} with the metric distance
// of every pair of rows a[i], b[i]: {"distances": […]}.
func (h *Handler) distance(bud budget, wk *work) error {
	a, b := wk.req.A, wk.req.B
	if err := h.checkRows("a", len(a)); err != nil {
		return err
	}
	if len(b) != len(a) {
		return errorf(http.StatusBadRequest, "%d rows in \"a\", %d in \"b\": want pairs", len(a), len(b))
	}
	out := append(wk.out, `{"distances":[`...)
	for i := range a {
		if err := bud.check(); err != nil {
			return err
		}
		d, err := h.m.Distance(a[i], b[i])
		if err != nil {
			return rowError("pair", i, err)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendFloat(out, d, 'g', -1, 64)
	}
	wk.out = append(out, "]}\n"...)
	return nil
}

// predict answers {"rows": [[…], …], "k": 3, "neighbors": false} with the
// k-NN class of every row, {"labels": […]}, and with "neighbors": true
// also each row's neighbours, {"neighbors": [[{"row", "label",
// "distance"}, …], …]}.
func (h *Handler) predict(b budget, wk *work) error {
	rows := wk.req.Rows
	if err := h.checkRows("rows", len(rows)); err != nil {
		return err
	}
	k := wk.req.K
	if k == 0 {
		k = h.opt.K
	}
	if k < 1 || k > h.opt.MaxK {
		return errorf(http.StatusBadRequest, "k = %d outside [1, %d]", k, h.opt.MaxK)
	}
	out := append(wk.out, `{"labels":[`...)
	var nbOut []byte // neighbours, appended after the labels
	if wk.req.Neighbors {
		nbOut = append(wk.nb[:0], `,"neighbors":[`...)
	}
	for i, x := range rows {
		if err := b.check(); err != nil {
			return err
		}
		class, nb, err := h.ix.Predict(&wk.s, x, k)
		if err != nil {
			return rowError("row", i, err)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, h.labels[class]...)
		if wk.req.Neighbors {
			if i > 0 {
				nbOut = append(nbOut, ',')
			}
			nbOut = append(nbOut, '[')
			for j, n := range nb {
				if j > 0 {
					nbOut = append(nbOut, ',')
				}
				nbOut = append(nbOut, `{"row":`...)
				nbOut = strconv.AppendInt(nbOut, int64(n.Row), 10)
				nbOut = append(nbOut, `,"label":`...)
				nbOut = append(nbOut, h.labels[n.Class]...)
				nbOut = append(nbOut, `,"distance":`...)
				nbOut = strconv.AppendFloat(nbOut, n.Distance, 'g', -1, 64)
				nbOut = append(nbOut, '}')
			}
			nbOut = append(nbOut, ']')
		}
	}
	out = append(out, ']')
	if wk.req.Neighbors {
		out = append(out, nbOut...)
		out = append(out, ']')
		wk.nb = nbOut
	}
	wk.out = append(out, "}\n"...)
	return nil
}

// appendFloats appends v as a JSON array of numbers in Go's shortest
// round-trip form.
func appendFloats(b []byte, v []float64) []byte {
	b = append(b, '[')
	for j, x := range v {
		if j > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	return append(b, ']')
}

// jsonType is the Content-Type header's value, shared by every response
// (net/http only reads it), which saves an allocation per request.
var jsonType = []string{"application/json"}

// writeJSON writes a JSON response. net/http adds the Content-Length of a
// body under 2 KiB and sends a longer one chunked.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(status)
	w.Write(body)
}

// writeError answers {"error": "…"} with the error's status (500 for an
// error without one).
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var he *httpError
	if errors.As(err, &he) {
		status = he.status
	}
	body, _ := json.Marshal(map[string]string{"error": err.Error()})
	writeJSON(w, status, append(body, '\n'))
}
