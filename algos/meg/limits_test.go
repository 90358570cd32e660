package meg

import (
	"errors"
	"runtime"
	"testing"

	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// TestMemoryLimit is the memory limit at the library level: 2·10⁹ distance
// examples allocated 16 bytes each up front and the process died out of
// memory in 0.02 s. The sequence, the RBF kernel and the learner now check
// their size first.
func TestMemoryLimit(t *testing.T) {
	defer limits.SetMaxMemory(limits.SetMaxMemory(1 << 30))
	u := mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1})
	before := allocated()
	if seq, err := SampleDistances(u, 2000000000, 0, 1); !errors.Is(err, limits.ErrMemory) || seq != nil {
		t.Fatalf("2e9 steps: error %v, want ErrMemory", err)
	}
	if spent := allocated() - before; spent > 1<<20 {
		t.Errorf("the refusal allocated %d bytes", spent)
	}
	if seq, err := SampleDistances(u, 1000, 0, 1); err != nil || seq.Len() != 1000 {
		t.Fatalf("1000 steps: %v", err)
	}
	if _, err := NewLearner(100000, LearnerOptions{Eta: 0.1}); !errors.Is(err, limits.ErrMemory) {
		t.Errorf("learner on 10⁵×10⁵ matrices: %v", err)
	}
	if _, err := RBFKernel(mat.NewDense(20000, 1, nil), 1); !errors.Is(err, limits.ErrMemory) {
		t.Errorf("RBF kernel on 20,000 objects: %v", err)
	}
}

// allocated returns the bytes the process has allocated so far: a refusal
// "before allocating" is measured by what it allocated, not by how long it
// took on a machine that may be loaded.
func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}
