package mpi_test

import (
	"errors"
	"testing"

	"github.com/psdlearn/psdlearn/mpi"
)

// TestWithFortranHandle: only the native world has a handle; f is not
// called otherwise. (The native handle is exercised by package parpack,
// whose PARPACK solver calls MPI through it.)
func TestWithFortranHandle(t *testing.T) {
	called := false
	err := mpi.WithFortranHandle(mpi.Single, func(int32) { called = true })
	if !errors.Is(err, mpi.ErrNotNative) || called || mpi.IsNative(mpi.Single) {
		t.Errorf("Single: err %v, called %v, IsNative %v", err, called, mpi.IsNative(mpi.Single))
	}
	if !mpi.HaveNative {
		return
	}
	c, err := mpi.Open()
	if err != nil {
		t.Fatal(err)
	}
	if !mpi.IsNative(c) {
		t.Fatal("the native world is not native")
	}
	var h int32 = -1
	if err := mpi.WithFortranHandle(c, func(f int32) { h = f }); err != nil || h < 0 {
		t.Errorf("world: handle %d, %v", h, err)
	}
}
