package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/internal/sdpa"
	"gonum.org/v1/gonum/mat"
)

// TestSDPReferenceSmall runs the SDP section on its smallest problems, a
// 150-point Swiss roll and iris (both losses): every row must be certified
// by psdlearn, and with csdp installed CSDP must succeed and every
// psdlearn objective lie where the certificates put it (the σ bound for
// MVU; above the trace relaxation's optimum for NPKL). Without csdp the
// report must say so and carry psdlearn's side.
func TestSDPReferenceSmall(t *testing.T) {
	rep, err := SDPReference(context.Background(), SDPOptions{Seed: 1, MVUSizes: []int{150}, NPKLData: []string{"iris"}, Parts: []string{"mvu", "npkl"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 {
		t.Fatalf("%d rows, want 3 (mvu, npkl linear, npkl sqhinge)", len(rep.Rows))
	}
	_, noCSDP := sdpa.CSDPPath()
	for _, r := range rep.Rows {
		t.Logf("%s %s: psdlearn %.8g (%.3gs), csdp %.8g (%.3gs, %s), relative difference %.3g, allowed %.3g, within %v",
			r.Problem, r.Data, r.Objective, r.Seconds, r.RefObjective, r.RefSeconds, r.RefStatus, r.RelDiff, r.Bound, r.Within)
		if !r.Certified {
			t.Errorf("%s %s: psdlearn not certified", r.Problem, r.Data)
		}
		if noCSDP != nil {
			if r.RefStatus != "" {
				t.Errorf("%s: a CSDP status without csdp", r.Problem)
			}
			continue
		}
		if r.RefStatus != sdpa.Success.String() || !r.Within {
			t.Errorf("%s %s: csdp %s, within %v", r.Problem, r.Data, r.RefStatus, r.Within)
		}
	}
	if noCSDP != nil && !strings.Contains(rep.Skipped, "csdp is not installed") {
		t.Errorf("skipped = %q", rep.Skipped)
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| swissroll:150:1 |") || !strings.Contains(md.String(), "### npkl sqhinge") {
		t.Errorf("markdown lacks rows:\n%s", md.String())
	}
}

// TestSDPParts: --case selects the SDP problems by part of their name, and
// a name that matches none is an error naming the problems.
func TestSDPParts(t *testing.T) {
	for _, tc := range []struct {
		c    string
		want []string
		err  bool
	}{
		{"", nil, false},
		{"psdboost", []string{"psdboost"}, false},
		{"PSD", []string{"psdboost"}, false},
		{"npkl", []string{"npkl"}, false},
		{"m", []string{"mvu"}, false},
		{"k", []string{"npkl"}, false},
		{"sdp", nil, true},
	} {
		got, err := sdpParts(tc.c)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("sdpParts(%q) = %v, %v; want %v (error %v)", tc.c, got, err, tc.want, tc.err)
		}
		if err != nil && (!errors.Is(err, ErrCase) || !strings.Contains(err.Error(), "mvu, npkl, psdboost")) {
			t.Errorf("sdpParts(%q): error %q does not name the problems", tc.c, err)
		}
	}
}

// TestPSDBoostSDPValue checks the SDPA form of PSDBoost's problem against
// a point computed by hand: for X = I/D and ρ = min_r ⟨A_r, X⟩, ξ = 0,
// the constraints hold with slacks s_r = ⟨A_r, X⟩ − ρ and the objective is ρ.
func TestPSDBoostSDPValue(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{0, 0, 1, 0, 0, 2, 3, 1})
	ts, err := constraints.NewTripletSet(4, []constraints.Triplet{{I: 0, J: 1, K: 2}, {I: 3, J: 1, K: 0}})
	if err != nil {
		t.Fatal(err)
	}
	p := psdBoostSDP(x, ts, 0.7)
	// ⟨A_r, I/2⟩ = (‖p‖² − ‖q‖²)/2: triplet 0: (4 − 1)/2, triplet 1: (10 − 5)/2.
	margins := []float64{1.5, 2.5}
	rho := 1.5
	blocks := []sdpa.Block{{Sym: mat.NewSymDense(2, []float64{0.5, 0, 0, 0.5})}, {Diag: []float64{rho, 0, 0, 0, margins[0] - rho, margins[1] - rho}}}
	for i, a := range p.A {
		if got := innerEntries(a, blocks); math.Abs(got-p.B[i]) > 1e-12 {
			t.Errorf("constraint %d: %g, want %g", i, got, p.B[i])
		}
	}
	if got := innerEntries(p.C, blocks); math.Abs(got-rho) > 1e-12 {
		t.Errorf("objective %g, want ρ = %g", got, rho)
	}
}

func innerEntries(es []sdpa.Entry, x []sdpa.Block) float64 {
	var s float64
	for _, e := range es {
		b := x[e.Block]
		switch {
		case b.Diag != nil:
			s += e.V * b.Diag[e.I]
		case e.I == e.J:
			s += e.V * b.Sym.At(e.I, e.J)
		default:
			s += 2 * e.V * b.Sym.At(e.I, e.J)
		}
	}
	return s
}
