package mpi_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
)

// TestPureGoClose checks Open and Close in the pure-Go build on a fresh
// world (the native build cannot re-initialise MPI: TestMPIChild checks
// Close under mpirun).
func TestPureGoClose(t *testing.T) {
	if mpi.HaveNative {
		t.Skip("native build: MPI cannot be re-initialised after Close; TestMPIChild checks Close")
	}
	defer mpi.ResetWorld()()
	if err := mpi.Close(); err != nil {
		t.Fatalf("Close before Open: %v", err)
	}
	c, err := mpi.Open()
	if err != nil {
		t.Fatal(err)
	}
	mpitest.TestClose(t, c)
}
