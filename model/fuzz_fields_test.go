package model

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// FuzzModelFields builds well-formed model files from fuzzed field values —
// every number of the metric, the standardizer, the PCA and the kernel, the
// dimensions, and text after the object — so that the fuzzer explores the
// validation of each field rather than the JSON syntax. Load must never
// panic, and whatever it accepts must hold: finite values, non-negative PCA
// variances, orthonormal PCA components, a PSD metric, nothing after the
// JSON, and an unchanged Save/Load round trip.
func FuzzModelFields(f *testing.F) {
	f.Add(uint8(0), 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 2.0, 1.0, "")
	f.Add(uint8(1), 1e308, 0.0, 1.0, 6e307, 1.0, 1.0, 0.0, 2.0, -1.0, "")
	f.Add(uint8(2), 1.0, 0.0, 1.0, 0.0, 1.0, 1e308, 0.0, 2.0, 1.0, "x")
	f.Add(uint8(3), 2.0, 1.0, 2.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, " ")
	f.Add(uint8(4), 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 3.0, 0.5, "{}")
	f.Fuzz(func(t *testing.T, shape uint8, m00, m01, m11, mean, scale, c00, c01, v0, v1 float64, tail string) {
		num := func(v float64) string {
			if math.IsNaN(v) || math.IsInf(v, 0) { // not JSON: keep the file well-formed
				return "1e999"
			}
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
		var pre string
		switch shape % 4 {
		case 1:
			pre = fmt.Sprintf(`,"preprocess":{"standardize":{"mean":[%s,0],"scale":[%s,1]}}`, num(mean), num(scale))
		case 2:
			pre = fmt.Sprintf(`,"preprocess":{"pca":{"mean":[%s,0],"components":[[%s,%s],[%s,%s]],"variances":[%s,%s]}}`,
				num(mean), num(c00), num(c01), num(-c01), num(c00), num(v0), num(v1))
		case 3:
			pre = fmt.Sprintf(`,"preprocess":{"standardize":{"mean":[%s,0],"scale":[%s,1]},"pca":{"mean":[0,0],"components":[[%s],[%s]],"variances":[%s]}}`,
				num(mean), num(scale), num(c00), num(c01), num(v0))
		}
		var file string
		if shape&4 != 0 {
			file = fmt.Sprintf(`{"format":"psdlearn-model","version":1,"kind":"kernel","kernel":{"n":2,"rank":1,"lambda":[%s],"v":[[%s],[%s]]}}`,
				num(v0), num(c00), num(c01))
		} else {
			if shape%4 == 3 { // the PCA projects onto one dimension
				file = fmt.Sprintf(`{"format":"psdlearn-model","version":1,"kind":"metric"%s,"metric":{"dim":1,"m":[[%s]]}}`, pre, num(m00))
			} else {
				file = fmt.Sprintf(`{"format":"psdlearn-model","version":1,"kind":"metric"%s,"metric":{"dim":2,"m":[[%s,%s],[%s,%s]]}}`,
					pre, num(m00), num(m01), num(m01), num(m11))
			}
		}
		file += tail
		got, err := Load(strings.NewReader(file))
		if err != nil {
			return
		}
		if strings.TrimSpace(tail) != "" {
			t.Fatalf("accepted text %q after the JSON", tail)
		}
		if got.Metric != nil {
			d := got.Metric.M.SymmetricDim()
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					if v := got.Metric.M.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("accepted metric entry (%d,%d) = %v", i, j, v)
					}
				}
			}
		}
		if p := got.Preprocess; p != nil && p.PCA != nil {
			for i, v := range p.PCA.Variances {
				if !(v >= 0) || math.IsInf(v, 0) {
					t.Fatalf("accepted PCA variance %d = %v", i, v)
				}
			}
			c := p.PCA.Components
			var ctc mat.Dense
			ctc.Mul(c.T(), c)
			r, _ := ctc.Dims()
			for i := 0; i < r; i++ {
				for j := 0; j < r; j++ {
					want := 0.0
					if i == j {
						want = 1
					}
					if math.Abs(ctc.At(i, j)-want) > 1e-5 {
						t.Fatalf("accepted non-orthonormal PCA components: (CᵀC)[%d][%d] = %v", i, j, ctc.At(i, j))
					}
				}
			}
		}
		if p := got.Preprocess; p != nil && p.Std != nil {
			for j := range p.Std.Mean {
				if math.IsInf(p.Std.Mean[j], 0) || !(p.Std.Scale[j] > 0) || math.IsInf(p.Std.Scale[j], 0) {
					t.Fatalf("accepted standardizer feature %d: mean %v scale %v", j, p.Std.Mean[j], p.Std.Scale[j])
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
		if got.Metric != nil && !mat.Equal(again.Metric.M, got.Metric.M) {
			t.Fatal("round trip changed the metric")
		}
	})
}
