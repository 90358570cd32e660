package bench

import (
	"compress/gzip"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/engine"
)

// writeIDX writes a gzip IDX file: unsigned bytes with the given dimensions.
func writeIDX(t *testing.T, path string, dims []int, body []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := gzip.NewWriter(f)
	hdr := []byte{0, 0, 0x08, byte(len(dims))}
	for _, d := range dims {
		hdr = binary.BigEndian.AppendUint32(hdr, uint32(d))
	}
	if _, err := z.Write(append(hdr, body...)); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}

// tinyFashion writes a Fashion-MNIST-shaped data set of nTrain + nTest 6×6
// images in three classes (class c brightens row c) into a new directory.
func tinyFashion(t *testing.T, nTrain, nTest int) string {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	write := func(images, labels string, n int) {
		px := make([]byte, 0, n*36)
		lab := make([]byte, n)
		for i := 0; i < n; i++ {
			c := i % 3
			lab[i] = byte(c)
			for p := 0; p < 36; p++ {
				v := rng.IntN(100)
				if p/6 == c {
					v += 120
				}
				px = append(px, byte(v))
			}
		}
		writeIDX(t, filepath.Join(dir, images), []int{n, 6, 6}, px)
		writeIDX(t, filepath.Join(dir, labels), []int{n}, lab)
	}
	write("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", nTrain)
	write("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", nTest)
	return dir
}

// TestFashionCasesTiny runs the fashion cases on a tiny stand-in with the
// real file layout (training images then test images, row ranges for
// training and validation) and requires the phase breakdown, the
// certificate and the errors in the metrics.
func TestFashionCasesTiny(t *testing.T) {
	t.Setenv("PSDLEARN_FASHION_DIR", "")
	p := FashionProtocol{Dir: tinyFashion(t, 60, 21), Train: 45, Val: 15, PCA: 8, K: 3}
	cases := FashionCases(1, p)
	if len(cases) != 3 {
		t.Fatalf("%d fashion cases", len(cases))
	}
	res, err := Run(t.Context(), "algos", cases, Options{Backends: []engine.Backend{engine.Default()}, Runs: 1, NoWarmup: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Error != "" {
			t.Fatalf("%s: %s", r.Case, r.Error)
		}
		m := r.Metrics
		for _, k := range []string{"phase_load", "phase_preprocess", "phase_triplets", "phase_train", "phase_evaluation", "test_error", "converged"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no %s in %v", r.Case, k, m)
			}
		}
		if !(m["phase_load"] > 0) || r.Size != 45 || !strings.Contains(r.Detail, "PCA 8") {
			t.Errorf("%s: load %g s, size %d, detail %q", r.Case, m["phase_load"], r.Size, r.Detail)
		}
		solves := 0
		for k := range m {
			if strings.HasPrefix(k, "phase_solve") {
				solves++
			}
		}
		want := map[string]int{"fashion boostmetric exp stage-wise": 1, "fashion frobmetric C=100": 1, "fashion frobmetric": len(psdlearn.DefaultFrobMetricC)}[r.Case]
		if solves != want {
			t.Errorf("%s: %d solve phases, want %d: %v", r.Case, solves, want, m)
		}
		if strings.Contains(r.Case, "frobmetric") && m["gap_tolerance"] != 1e-7 {
			t.Errorf("%s: gap tolerance %v", r.Case, m["gap_tolerance"])
		}
	}
}

// TestFashionCasesSkip: without the data files each case reports a skip
// naming the missing file and the package, without failing the run.
func TestFashionCasesSkip(t *testing.T) {
	t.Setenv("PSDLEARN_FASHION_DIR", "")
	p := DefaultFashion
	p.Dir = filepath.Join(t.TempDir(), "absent")
	res, err := Run(t.Context(), "algos", FashionCases(1, p), Options{Backends: []engine.Backend{engine.Default()}, Runs: 1, NoWarmup: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if !strings.HasPrefix(r.Error, "skipped: Fashion-MNIST not found") || !strings.Contains(r.Error, "dataset-fashion-mnist") || !strings.Contains(r.Error, "absent") {
			t.Errorf("%s: error %q", r.Case, r.Error)
		}
	}
}
