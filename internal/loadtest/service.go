package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/psdlearn/psdlearn/serve"
	"gonum.org/v1/gonum/mat"
)

// Endpoints of package serve that Requests builds loads for.
const (
	Transform = "/v1/transform"
	Distance  = "/v1/distance"
	Predict   = "/v1/predict"
)

// Requests returns one single-row request per row of queries for endpoint
// (Transform, Distance: row i against row i+1, or Predict with k
// neighbours), each with the answer h gives it alone, so that the load test
// checks every answer under load against it.
func Requests(h http.Handler, endpoint string, queries *mat.Dense, k int) ([]Request, error) {
	if queries == nil || queries.IsEmpty() {
		return nil, errors.New("loadtest: no queries")
	}
	n, _ := queries.Dims()
	var reqs []Request
	for i := 0; i < n; i++ {
		var b []byte
		switch endpoint {
		case Transform:
			b = append(appendRow(append(b, `{"rows":[`...), queries.RawRowView(i)), "]}"...)
		case Distance:
			b = appendRow(append(b, `{"a":[`...), queries.RawRowView(i))
			b = append(appendRow(append(b, `],"b":[`...), queries.RawRowView((i+1)%n)), "]}"...)
		case Predict:
			b = append(appendRow(append(b, `{"rows":[`...), queries.RawRowView(i)), `],"k":`...)
			b = append(strconv.AppendInt(b, int64(k), 10), '}')
		default:
			return nil, fmt.Errorf("loadtest: unknown endpoint %q", endpoint)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, endpoint, bytes.NewReader(b)))
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("loadtest: %s query %d alone: status %d: %s", endpoint, i, rec.Code, bytes.TrimSpace(rec.Body.Bytes()))
		}
		reqs = append(reqs, Request{Path: endpoint, Body: b, Want: rec.Body.Bytes()})
	}
	return reqs, nil
}

func appendRow(b []byte, row []float64) []byte {
	b = append(b, '[')
	for j, v := range row {
		if j > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return append(b, ']')
}

// Service serves h on a loopback port with serve.NewServer's timeouts,
// runs the load test opt against it (opt.URL is set), then shuts it down
// with serve.Serve's graceful shutdown and reports; a shutdown that does
// not finish cleanly is an error.
func Service(ctx context.Context, h http.Handler, opt Options) (*Report, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("loadtest: %w", err)
	}
	srv := serve.NewServer(ln.Addr().String(), h)
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- serve.Serve(sctx, srv, ln, 10*time.Second) }()
	opt.URL = "http://" + ln.Addr().String()
	rep, err := Run(ctx, opt)
	stop()
	if serr := <-served; serr != nil && err == nil {
		err = fmt.Errorf("loadtest: %w", serr)
	}
	return rep, err
}
