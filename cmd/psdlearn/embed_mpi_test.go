package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
)

// TestEmbedMPI builds psdlearn with -tags mpi and runs `mpirun -np 2` and
// `-np 3` (uneven rows) `psdlearn embed --data swissroll:200
// --inequalities --gap-tol 1e-4 --feas-tol 1e-3 --json --out F`: MVU with
// its negative parts on PARPACK. Rank 0 alone must print one JSON summary
// (ranks, the sparse method, operator products) and write the 200
// coordinates; the run must be certified, as must one process (mvu.Embed,
// the same options), and the two dual objectives, each within the gap
// tolerance of the optimum, must agree to twice that. -np 2 runs the
// default shift-and-invert (each rank solves the whole system), -np 3
// --shift-invert=false (every product split by rows), and -np 2 once more
// on the roll written as one file per rank (--data roll-{rank}.csv, 120 and
// 80 rows: each rank reads only its rows and the kNN graph is built across
// the ranks). (PARPACK's rounding differs from ARPACK's, so the
// iterates drift apart; the exactness of the distributed eigensolves is
// dist's TestEigsMVUFake: the one-process result to the last bit on fake
// ranks.)
// --method dense is a usage error. Skipped without -tags mpi or mpirun.
func TestEmbedMPI(t *testing.T) {
	bin := mpitest.MPIProgram(t, ".")
	dir := t.TempDir()
	x, _, _ := datasets.SwissRoll(200, 1)
	b, err := engine.Get("native")
	if err != nil {
		t.Skip("no native backend")
	}
	want, err := mvu.Embed(context.Background(), x, mvu.Options{K: 6, Dims: 2,
		SDP: sdp.Options{Method: sdp.Sparse, GapTol: 1e-4, FeasTol: 1e-3, Backend: b, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// The same roll in one file per rank, split unevenly (120 + 80 rows),
	// with exact decimal digits: every rank reads only its rows.
	for r, rows := range [][2]int{{0, 120}, {120, 200}} {
		var sb strings.Builder
		sb.WriteString("x1,x2,x3,label\n")
		for i := rows[0]; i < rows[1]; i++ {
			for j := 0; j < 3; j++ {
				sb.WriteString(strconv.FormatFloat(x.At(i, j), 'g', -1, 64) + ",")
			}
			sb.WriteString(strconv.Itoa(i%2) + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("roll-%d.csv", r)), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		np   int
		data string
	}{{2, "swissroll:200"}, {3, "swissroll:200"}, {2, filepath.Join(dir, "roll-{rank}.csv")}} {
		np := tc.np
		out := filepath.Join(dir, "emb.csv")
		args := []string{bin, "embed", "--data", tc.data, "--inequalities", "--gap-tol", "1e-4", "--feas-tol", "1e-3", "--backend", "native", "--json", "--quiet", "--out", out}
		if np == 3 {
			// Every product split by rows.
			args = append(args, "--shift-invert=false")
		}
		// The limit guards against a hang, not a slow machine: three ranks
		// splitting every product by rows take 20–60 s on two busy cores.
		stdout, _, err := mpitest.Mpirun(t, mpitest.Job{NP: np, Stdout: true, Args: args, Timeout: 4 * time.Minute})
		if err != nil {
			t.Fatalf("-np %d: %v\n%s", np, err, stdout)
		}
		var sum struct {
			Ranks            int     `json:"ranks"`
			N                int     `json:"n"`
			OperatorProducts int     `json:"operator_products"`
			Method           string  `json:"method"`
			Iterations       int     `json:"iterations"`
			Dual             float64 `json:"dual_objective"`
			Converged        bool    `json:"converged"`
		}
		if strings.Count(stdout, `"schema"`) != 1 {
			t.Fatalf("-np %d: want one JSON summary (rank 0's):\n%s", np, stdout)
		}
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatalf("-np %d: %v\n%s", np, err, stdout)
		}
		t.Logf("-np %d, %s: %+v; one process: dual %.12g, %d iterations, %d products", np, tc.data, sum, want.Solution.Dual, want.Iterations, want.OperatorProducts)
		if sum.Ranks != np || sum.N != 200 || sum.OperatorProducts == 0 || sum.Method != "sparse" {
			t.Errorf("-np %d: summary %+v", np, sum)
		}
		if !sum.Converged || !want.Solution.Certified {
			t.Errorf("-np %d: certified %v, one process %v", np, sum.Converged, want.Solution.Certified)
		}
		if d := math.Abs(sum.Dual-want.Solution.Dual) / math.Abs(want.Solution.Dual); !(d <= 2e-4) {
			t.Errorf("-np %d: dual %.12g, one process %.12g (relative %.2g)", np, sum.Dual, want.Solution.Dual, d)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if rows := strings.Count(strings.TrimSpace(string(raw)), "\n"); rows != 200 {
			t.Errorf("-np %d: %d rows written", np, rows)
		}
	}
	if _, _, err := mpitest.Mpirun(t, mpitest.Job{NP: 2, Args: []string{bin, "embed", "--data", "swissroll:100", "--method", "dense", "--quiet"}}); err == nil {
		t.Error("--method dense under mpirun: the job succeeded")
	}
}
