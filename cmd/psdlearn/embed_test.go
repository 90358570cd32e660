package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/algos/mvu"
)

// runCLI runs `psdlearn args…` in-process.
func embedCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	st := runMain(context.Background(), args, &out, &errb)
	return st, out.String(), errb.String()
}

// TestEmbedSwissRoll runs `psdlearn embed --algo mvu` on a Swiss roll and
// checks the JSON summary against the CSV coordinates and the PNG plot.
func TestEmbedSwissRoll(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "emb.csv")
	pngPath := filepath.Join(dir, "emb.png")
	st, out, errs := embedCLI("embed", "--algo", "mvu", "--data", "swissroll:400:7", "--k", "6",
		"--dims", "2", "--iters", "300", "--out", csvPath, "--plot", pngPath, "--json")
	if st != 0 {
		t.Fatalf("status %d: %s %s", st, out, errs)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var sum map[string]any
	if err := dec.Decode(&sum); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value: %q", out)
	}
	if sum["algo"] != "mvu" || sum["n"] != 400.0 || sum["dims"] != 2.0 || sum["k"] != 6.0 || sum["input_dim"] != 3.0 {
		t.Errorf("summary header %v", sum)
	}
	// Without --sigma the σ chosen is reported; for 400 points the
	// geodesic estimate (about 4.5e4) is below the floor.
	if sum["sigma"] != mvu.SigmaFloor {
		t.Errorf("sigma %v, want the floor %g", sum["sigma"], mvu.SigmaFloor)
	}
	it, _ := sum["iterations"].(float64)
	if it < 1 || it > 300 {
		t.Errorf("iterations %v, want 1..300", sum["iterations"])
	}
	// The default is the paper's inequality form (no relaxation step) at
	// MVU's default certificate, stated in the summary.
	if sum["constraints"] != "inequalities" || sum["relax_iterations"] != 0.0 || sum["gap_tol"] != mvu.DefaultGapTol || sum["feas_tol"] != mvu.DefaultFeasTol {
		t.Errorf("constraints %v, relax_iterations %v, gap_tol %v, feas_tol %v; want inequalities, 0 and MVU's defaults",
			sum["constraints"], sum["relax_iterations"], sum["gap_tol"], sum["feas_tol"])
	}
	for _, key := range []string{"objective", "duality_gap", "max_violation", "edge_error_mean", "variance_top", "peak_rss_mb", "train_seconds"} {
		if _, ok := sum[key].(float64); !ok {
			t.Errorf("%s = %v, want a number", key, sum[key])
		}
	}
	// The CSV has a header, 400 rows of two finite coordinates and a label,
	// and its variance agrees with the reported top eigenvalues.
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 401 || strings.Join(rows[0], ",") != "y1,y2,label" {
		t.Fatalf("CSV: %d rows, header %v", len(rows), rows[0])
	}
	var ss [2]float64
	for _, r := range rows[1:] {
		for j := 0; j < 2; j++ {
			v, err := strconv.ParseFloat(r[j], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("bad coordinate %q", r[j])
			}
			ss[j] += v * v
		}
		if l, err := strconv.Atoi(r[2]); err != nil || l < 0 || l > 9 {
			t.Fatalf("bad label %q", r[2])
		}
	}
	eig, _ := sum["eigenvalues"].([]any)
	if len(eig) < 2 {
		t.Fatalf("eigenvalues %v", sum["eigenvalues"])
	}
	for j := 0; j < 2; j++ {
		if want := eig[j].(float64); math.Abs(ss[j]-want) > 1e-6*want {
			t.Errorf("coordinate %d has sum of squares %g, eigenvalue %g", j+1, ss[j], want)
		}
	}
	// The plot is a PNG image.
	pf, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil {
		t.Fatalf("plot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("plot is %v", b)
	}
}

func TestEmbedErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"embed", "--algo", "isomap", "--data", "swissroll:50"}, "unknown --algo"},
		{[]string{"embed"}, "--data is required"},
		{[]string{"embed", "--data", "swissroll:50", "--sigma", "-1"}, "--sigma"},
		{[]string{"embed", "--data", "swissroll:50", "--dims", "0"}, "--dims"},
		{[]string{"embed", "--data", "swissroll:50", "--method", "qr"}, "--method"},
		{[]string{"embed", "--data", "swissroll:x"}, "swissroll"},
		{[]string{"embed", "--data", "swissroll:50", "--k", "60"}, "neighbours"},
		{[]string{"embed", "--data", "swissroll:50", "--dims", "1", "--plot", "x.png"}, "--plot"},
		{[]string{"embed", "--data", "swissroll:50", "extra"}, "unexpected argument"},
	} {
		st, out, errs := embedCLI(append(tc.args, "--json")...)
		if st == 0 {
			t.Errorf("%v: status 0", tc.args)
			continue
		}
		var e struct{ Error string }
		if err := json.Unmarshal([]byte(out), &e); err != nil || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%v: output %q %q, want an error mentioning %q", tc.args, out, errs, tc.want)
		}
	}
}

// TestTrainFrobMetricJSON: `psdlearn train --algo frobmetric` reports a
// certified duality gap and the C chosen on the validation rows.
func TestTrainFrobMetricJSON(t *testing.T) {
	st, out, errs := embedCLI("train", "--algo", "frobmetric", "--data", "builtin:wine", "--standardize", "--C", "1,100", "--seed", "2", "--json")
	if st != 0 {
		t.Fatalf("status %d: %s %s", st, out, errs)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	gap, ok := sum["duality_gap"].(float64)
	if !ok || !(gap <= 1e-6) || gap < -1e-9 {
		t.Errorf("duality_gap %v, want a relative gap in [0, 1e-6]", sum["duality_gap"])
	}
	if c := sum["chosen_c"]; c != 1.0 && c != 100.0 {
		t.Errorf("chosen_c %v, want 1 or 100", c)
	}
	if v, ok := sum["val_error"].(float64); !ok || v < 0 || v > 1 {
		t.Errorf("val_error %v", sum["val_error"])
	}
	if sum["algo"] != "frobmetric" {
		t.Errorf("algo %v", sum["algo"])
	}
	// The selection table: both values, ascending, each solved to the
	// selection tolerance frob.SelectGapTol (the chosen one is then solved
	// to the certificate checked above), and the chosen C is the first
	// with the lowest validation error.
	var sel struct {
		Candidates []struct {
			C          float64  `json:"c"`
			ValError   float64  `json:"val_error"`
			Iterations int      `json:"iterations"`
			DualityGap *float64 `json:"duality_gap"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(out), &sel); err != nil {
		t.Fatal(err)
	}
	cands := sel.Candidates
	if len(cands) != 2 || cands[0].C != 1 || cands[1].C != 100 {
		t.Fatalf("candidates %+v, want C = 1 and 100", cands)
	}
	best := 0
	for i, c := range cands {
		if c.DualityGap == nil || !(*c.DualityGap <= frob.SelectGapTol) || c.Iterations < 1 {
			t.Errorf("candidate C = %g: duality gap %v after %d iterations", c.C, c.DualityGap, c.Iterations)
		}
		if c.ValError < cands[best].ValError {
			best = i
		}
	}
	if sum["chosen_c"] != cands[best].C {
		t.Errorf("chose C = %v (validation %v), the table's best is %+v", sum["chosen_c"], sum["val_error"], cands[best])
	}
}
