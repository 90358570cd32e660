package sdp_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/psdlearn/psdlearn/algos/sdp"
)

// Solve min ⟨C,X⟩ + ½‖X‖²_F s.t. tr X = 1, X ⪰ 0 with C = −diag(3, 2, 1):
// the solution is X = diag((c − ν)_+) with Σ (c_i − ν)_+ = 1, i.e. ν = 2.
func ExampleSolve() {
	p := &sdp.Problem{
		N:     3,
		Sigma: 1,
		C:     sdp.SymMatrix{Entries: []sdp.Entry{{I: 0, J: 0, V: -3}, {I: 1, J: 1, V: -2}, {I: 2, J: 2, V: -1}}},
		Constraints: []sdp.Constraint{{
			A:        sdp.SymMatrix{Entries: []sdp.Entry{{I: 0, J: 0, V: 1}, {I: 1, J: 1, V: 1}, {I: 2, J: 2, V: 1}}},
			B:        1,
			Equality: true,
		}},
	}
	sol, err := sdp.Solve(context.Background(), p, sdp.Options{})
	if err != nil {
		log.Fatal(err)
	}
	x := sol.X()
	fmt.Printf("certified: %v, ν = %.4f\n", sol.Certified, sol.U[0])
	for i := 0; i < 3; i++ {
		fmt.Printf("%.4f %.4f %.4f\n", math.Abs(x.At(i, 0)), math.Abs(x.At(i, 1)), math.Abs(x.At(i, 2)))
	}
	// Output:
	// certified: true, ν = 2.0000
	// 1.0000 0.0000 0.0000
	// 0.0000 0.0000 0.0000
	// 0.0000 0.0000 0.0000
}
