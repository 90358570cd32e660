package model

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// FuzzLoad feeds arbitrary bytes to the model loader. It must never panic,
// and whatever it accepts must be a valid model: finite, symmetric, PSD
// within tolerance, with a factor that reproduces M, and it must survive a
// Save/Load round trip unchanged. The first seed is a version 3 file,
// with the factor L the fuzzer then alters.
func FuzzLoad(f *testing.F) {
	m, err := NewMetric(mat.NewSymDense(2, []float64{2, 1, 1, 2}))
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := (&Model{Kind: KindMetric, Algo: "fuzz", Metric: m}).Save(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	// A version 2 file with a full provenance.
	p := NewProvenance("go", 7)
	p.Split, p.Data = "0.7,0.15,0.15", DescribeData("builtin:iris", mat.NewDense(1, 2, []float64{1, 2}), []int{0}, []string{"a"})
	p.Test = &DataInfo{Name: "test.csv", Rows: 1, Features: 2}
	buf.Reset()
	if err := (&Model{Kind: KindMetric, Algo: "fuzz", Metric: m, Provenance: p}).Save(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"psdlearn-model","version":1,"kind":"metric","metric":{"dim":2,"m":[1,2,2,1]}}`))
	f.Add([]byte(`{"format":"psdlearn-model","version":2}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Load(bytes.NewReader(b))
		if err != nil {
			return
		}
		if got.Metric != nil {
			d := got.Metric.M.SymmetricDim()
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					if v := got.Metric.M.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("accepted a non-finite metric entry (%d,%d) = %v", i, j, v)
					}
				}
			}
		}
		var out bytes.Buffer
		if err := got.Save(&out); err != nil {
			t.Fatalf("accepted model does not save: %v", err)
		}
		again, err := Load(&out)
		if err != nil {
			t.Fatalf("saved model does not load: %v", err)
		}
		if (again.Metric == nil) != (got.Metric == nil) {
			t.Fatal("round trip changed the model kind")
		}
		if got.Metric != nil {
			if !mat.Equal(again.Metric.M, got.Metric.M) || !mat.Equal(again.Metric.L, got.Metric.L) {
				t.Fatal("round trip changed the metric or its factor")
			}
			if err := got.Metric.checkFactor(); err != nil {
				t.Fatalf("accepted a factor that fails its own check: %v", err)
			}
		}
		if !reflect.DeepEqual(again.Provenance, got.Provenance) {
			t.Fatalf("round trip changed the provenance: %+v, then %+v", got.Provenance, again.Provenance)
		}
	})
}
