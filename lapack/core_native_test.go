//go:build cgo && !purego

package lapack

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestSelectCoreReplacesFallback puts OpenBLAS on its Prescott fallback,
// as its selection does for processors it does not know, and checks that
// selectCore replaces it on a processor with AVX2 and that products agree
// with gonum's before and after, to the bound of their rounding.
func TestSelectCoreReplacesFallback(t *testing.T) {
	if os.Getenv("OPENBLAS_CORETYPE") != "" {
		t.Skip("OPENBLAS_CORETYPE is set: the package leaves OpenBLAS's choice alone")
	}
	orig := coreName()
	if !setCore("Prescott") {
		t.Skip("this OpenBLAS has no runtime kernel selection (not a DYNAMIC_ARCH build)")
	}
	defer setCore(orig)
	if got := coreName(); got != "Prescott" {
		t.Fatalf("OPENBLAS_CORETYPE=Prescott gave %q", got)
	}
	checkDgemm(t, "Prescott")
	c := selectCore()
	want := coreFor("Prescott", cpuFeatures())
	if len(want) == 0 {
		if c.Name != "Prescott" || c.Detected != "" {
			t.Fatalf("no AVX2: selectCore = %+v, want OpenBLAS's Prescott kept", c)
		}
		return
	}
	if c.Detected != "Prescott" || preAVX[c.Name] || c.Name != coreName() {
		t.Fatalf("selectCore = %+v (library reports %q), want one of %q replacing Prescott", c, coreName(), want)
	}
	checkDgemm(t, c.Name)
}

// checkDgemm compares a product of the native BLAS with gonum's:
// |Δc_ij| ≤ 2·k·ε·Σ_l |a_il||b_lj|.
func checkDgemm(t *testing.T, core string) {
	t.Helper()
	const m, n, k = 97, 83, 164
	rng := rand.New(rand.NewPCG(5, 6))
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	got, want := make([]float64, m*n), make([]float64, m*n)
	NativeBLAS.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, got, n)
	gonum.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, want, n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for l := 0; l < k; l++ {
				s += math.Abs(a[i*k+l] * b[l*n+j])
			}
			if d := math.Abs(got[i*n+j] - want[i*n+j]); d > 2*k*0x1p-53*s {
				t.Fatalf("%s kernels: C[%d,%d] = %v, gonum %v", core, i, j, got[i*n+j], want[i*n+j])
			}
		}
	}
}

// TestCoreTypeRespected runs this test binary again with
// OPENBLAS_CORETYPE=Prescott: the package must keep that choice.
func TestCoreTypeRespected(t *testing.T) {
	if os.Getenv("PSDLEARN_CORE_CHILD") != "" {
		os.Stdout.WriteString("core=" + BLASCore().Name + "," + BLASCore().Detected + "\n")
		return
	}
	if !hasCore("Prescott") {
		t.Skip("this OpenBLAS has no runtime kernel selection with a Prescott set")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCoreTypeRespected$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PSDLEARN_CORE_CHILD=1", "OPENBLAS_CORETYPE=Prescott")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "core=Prescott,\n") {
		t.Fatalf("with OPENBLAS_CORETYPE=Prescott the child reports %q", out)
	}
}
