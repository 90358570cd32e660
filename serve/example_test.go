package serve_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/serve"
	"gonum.org/v1/gonum/mat"
)

func Example() {
	// A model (here the Euclidean metric on two features; in a service,
	// model.LoadFile) and a labelled reference set (serve.ReadCSV).
	m := &model.Model{Kind: model.KindMetric, Metric: model.Identity(2)}
	ref := &serve.Reference{
		X:      mat.NewDense(4, 2, []float64{0, 0, 0, 1, 5, 5, 5, 6}),
		Labels: []string{"small", "small", "large", "large"},
	}
	ix, err := serve.NewIndex(context.Background(), m, ref)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := serve.NewHandler(m, ix, serve.Options{K: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	// In a service: serve.Serve(ctx, serve.NewServer(addr, h), listener, grace).
	for _, req := range []struct{ path, body string }{
		{"/v1/predict", `{"rows": [[0.2, 0.4], [4, 5]]}`},
		{"/v1/transform", `{"rows": [[0.5, 2]]}`},
		{"/v1/distance", `{"a": [[0, 0]], "b": [[3, 4]]}`},
		{"/v1/predict", `{"rows": [[1, 2, 3]]}`},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", req.path, strings.NewReader(req.body)))
		fmt.Print(rec.Code, " ", rec.Body)
	}
	// Output:
	// 200 {"labels":["small","large"]}
	// 200 {"rows":[[0.5,2]]}
	// 200 {"distances":[5]}
	// 400 {"error":"row 0: model: dimension mismatch: TransformRowTo: a row of 3 features into 2 coordinates, the model maps 2 features to 2"}
}

func ExampleIndex_Predict() {
	m := &model.Model{Kind: model.KindMetric, Metric: model.Identity(1)}
	ref := &serve.Reference{X: mat.NewDense(5, 1, []float64{1, 2, 3, 10, 11}), Labels: []string{"a", "a", "a", "b", "b"}}
	ix, err := serve.NewIndex(context.Background(), m, ref)
	if err != nil {
		fmt.Println(err)
		return
	}
	var s serve.Scratch // one per goroutine; reused, it allocates nothing
	for _, x := range []float64{2.2, 9, 7} {
		class, nb, err := ix.Predict(&s, []float64{x}, 3)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%v: %s (nearest: row %d at %v)\n", x, ix.Classes()[class], nb[0].Row, nb[0].Distance)
	}
	// Output:
	// 2.2: a (nearest: row 1 at 0.20000000000000018)
	// 9: b (nearest: row 3 at 1)
	// 7: b (nearest: row 3 at 3)
}
