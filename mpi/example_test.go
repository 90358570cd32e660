package mpi_test

import (
	"fmt"

	"github.com/psdlearn/psdlearn/mpi"
)

// Example sums a partial gradient over the processes of the job. Run alone
// (or built without the mpi tag) it is a job of one process; under
// mpirun -np 2 every rank prints the sum over both.
func Example() {
	comm, err := mpi.Open()
	if err != nil {
		panic(err)
	}
	// Each rank computes its part from its own share of the data…
	grad := []float64{1, 2, 3}
	for i := range grad {
		grad[i] *= float64(comm.Rank() + 1)
	}
	// …and all of them get the total.
	if err := comm.AllreduceSum(grad); err != nil {
		panic(err)
	}
	n, err := comm.AllreduceSumScalar(1)
	if err != nil {
		panic(err)
	}
	// A real program calls mpi.Close before it exits (not here: the other
	// tests of this process still use the communicator).
	fmt.Printf("rank %d of %d: gradient %v over %v processes\n", comm.Rank(), comm.Size(), grad, n)
	// Output:
	// rank 0 of 1: gradient [1 2 3] over 1 processes
}
