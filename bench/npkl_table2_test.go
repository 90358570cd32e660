package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestNPKLTable2Small runs the Table 2 protocol briefly (3 runs) on iris,
// whose row the paper prints intact, and on the generated chessboard:
// SimpleNPKL must reproduce iris (97.4 with both losses) at the CLI's
// default C and beat k-means there, the squared hinge's certificate must
// be tight, and the report must carry the rows and the reading notes.
func TestNPKLTable2Small(t *testing.T) {
	rep, err := NPKLTable2(context.Background(), Table2Options{Seed: 1, Runs: 3, Data: []string{"iris", "chessboard"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 {
		t.Fatalf("%d rows", len(rep.Rows))
	}
	iris := rep.Rows[0]
	for _, loss := range []string{"linear", "sqhinge"} {
		cells := iris.Raw[loss]
		if len(cells) != len(Table2C) {
			t.Fatalf("iris %s: %d cells", loss, len(cells))
		}
		half := cells[2] // C = 0.5
		t.Logf("iris %s: %v (k-means %v), bracket %.3g, verdict %s", loss, half.Accuracy, iris.KMeans, half.Bracket, iris.Verdict[loss])
		if half.C != 0.5 || half.Accuracy.Mean < 95 || half.Accuracy.Mean <= iris.KMeans.Mean || iris.Verdict[loss] != "reproduced" {
			t.Errorf("iris %s at C = %g: %v against k-means %v, verdict %q", loss, half.C, half.Accuracy, iris.KMeans, iris.Verdict[loss])
		}
		if loss == "sqhinge" && !(half.Bracket >= 0 && half.Bracket < 0.05) {
			t.Errorf("iris squared hinge: bracket %g", half.Bracket)
		}
	}
	if rep.Rows[1].Paper != nil || rep.Rows[1].N != 100 {
		t.Errorf("chessboard row: paper %v, n %d", rep.Rows[1].Paper, rep.Rows[1].N)
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| iris (n = 150) | linear | 97.4 ± 0.0 |", "| chessboard (n = 100) | sqhinge |", "How the paper's rows were read"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// TestTable2JSONNull: a report with figures that are not known encodes,
// with null in their place.
func TestTable2JSONNull(t *testing.T) {
	nan := math.NaN()
	rep := Table2Report{Rows: []Table2Row{{
		Data:   "chessboard",
		Paper:  &Table2Paper{KMeans: MeanSD{nan, nan}},
		KMeans: MeanSD{49.8, 0.2},
		Raw:    map[string][]Table2Cell{"linear": {{C: 0.1, Accuracy: MeanSD{nan, nan}, LearnSeconds: nan, Bracket: nan, Error: "no kernel"}}},
	}}, Figure2: &Figure2{All: Figure2Point{Constraints: 565, Accuracy: MeanSD{63.4, 9.2}, Seconds: nan}}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := json.Marshal(PSDBoostCurve{Paper: []float64{0.1}, Optimum: math.NaN()}); err != nil || !strings.Contains(string(b), `"csdp_optimum":null`) {
		t.Errorf("PSDBoostCurve without CSDP: %s, %v", b, err)
	}
	for _, want := range []string{`"kmeans":{"mean":null,"sd":null}`, `"learn_seconds":null`, `"C":0.1`, `"seconds":null`, `"constraints":565`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
}
