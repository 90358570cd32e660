package progress_test

import (
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/progress"
)

func TestPrintfAndPrefix(t *testing.T) {
	if progress.Printf(nil, "x") != nil || progress.Prefix(nil, "p: ") != nil {
		t.Fatal("a nil Func must give nil reporters")
	}
	var got []progress.Event
	f := progress.Prefix(func(e progress.Event) { got = append(got, e) }, "run 2: ")
	progress.Printf(f, "frobmetric")("eval %d gap %.1g", 7, 1e-3)
	f(progress.Event{Algorithm: "boostmetric", Iteration: 3, Objective: 1.5, Gap: 0.25, Message: "iter 3"})
	if len(got) != 2 {
		t.Fatalf("%d events, want 2", len(got))
	}
	if e := got[0]; e.Algorithm != "frobmetric" || e.String() != "run 2: eval 7 gap 0.001" || !math.IsNaN(e.Objective) || !math.IsNaN(e.Gap) || e.Elapsed < 0 {
		t.Errorf("Printf event %+v", e)
	}
	if e := got[1]; e.Iteration != 3 || e.Objective != 1.5 || e.Gap != 0.25 || e.String() != "run 2: iter 3" {
		t.Errorf("Prefix event %+v", e)
	}
}
