// Package mpitest is the conformance suite of mpi communicators, in the
// manner of psdlearn's other binding suites (lapacktest, lptest): TestComm
// runs every collective of an mpi.Comm and checks the results against
// answers known in closed form for any number of ranks, so the same suite
// runs on mpi.Single, on the pure-Go world and, under mpirun, on every rank of
// the native world communicator.
//
// Every rank must run TestComm (the checks are collectives). The suite never
// stops early: a failed check is reported with t.Errorf and the remaining
// collectives still run, so one rank's failure does not leave the other
// ranks waiting in a collective it skipped.
package mpitest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/mpi"
)

// Lengths are the buffer lengths of the reductions and broadcasts: empty,
// one element, odd lengths and one above the eager limit of shared-memory
// transports (64 KiB), so that long messages take the rendezvous path.
var Lengths = []int{0, 1, 7, 1000, 1<<14 + 3}

// TestComm runs the whole suite on c.
func TestComm(t *testing.T, c mpi.Comm) {
	t.Helper()
	if p, r := c.Size(), c.Rank(); p < 1 || r < 0 || r >= p {
		t.Errorf("rank %d, size %d", r, p)
		return
	}
	t.Run("Barrier", func(t *testing.T) { TestBarrier(t, c) })
	t.Run("AllreduceSum", func(t *testing.T) { TestAllreduceSum(t, c) })
	t.Run("AllreduceMax", func(t *testing.T) { TestAllreduceMax(t, c) })
	t.Run("Scalars", func(t *testing.T) { TestScalars(t, c) })
	t.Run("Bcast", func(t *testing.T) { TestBcast(t, c) })
	t.Run("BcastBytes", func(t *testing.T) { TestBcastBytes(t, c) })
	t.Run("Allgatherv", func(t *testing.T) { TestAllgatherv(t, c) })
	t.Run("ArgumentErrors", func(t *testing.T) { TestArgumentErrors(t, c) })
}

// TestBarrier calls Barrier twice.
func TestBarrier(t *testing.T, c mpi.Comm) {
	for i := 0; i < 2; i++ {
		if err := c.Barrier(); err != nil {
			t.Errorf("Barrier: %v", err)
		}
	}
}

// triangle is 1 + 2 + … + p.
func triangle(p int) float64 { return float64(p*(p+1)) / 2 }

// TestAllreduceSum: rank r contributes (r+1)·(i+1) at index i, so every rank
// must receive (i+1)·p(p+1)/2 (exact in float64 at these sizes).
func TestAllreduceSum(t *testing.T, c mpi.Comm) {
	r, p := c.Rank(), c.Size()
	for _, n := range Lengths {
		buf := make([]float64, n)
		for i := range buf {
			buf[i] = float64((r + 1) * (i + 1))
		}
		if err := c.AllreduceSum(buf); err != nil {
			t.Errorf("n=%d: AllreduceSum: %v", n, err)
			continue
		}
		for i, v := range buf {
			if want := float64(i+1) * triangle(p); v != want {
				t.Errorf("n=%d: rank %d of %d: sum[%d] = %v, want %v", n, r, p, i, v, want)
				break
			}
		}
	}
}

// TestAllreduceMax: rank r contributes (r+1)·(i−n/2) at index i, so the
// maximum over ranks is p·(i−n/2) where that is positive (the last rank's)
// and i−n/2 where it is not (rank 0's).
func TestAllreduceMax(t *testing.T, c mpi.Comm) {
	r, p := c.Rank(), c.Size()
	for _, n := range Lengths {
		buf := make([]float64, n)
		for i := range buf {
			buf[i] = float64((r + 1) * (i - n/2))
		}
		if err := c.AllreduceMax(buf); err != nil {
			t.Errorf("n=%d: AllreduceMax: %v", n, err)
			continue
		}
		for i, v := range buf {
			want := float64(i - n/2)
			if want > 0 {
				want *= float64(p)
			}
			if v != want {
				t.Errorf("n=%d: rank %d of %d: max[%d] = %v, want %v", n, r, p, i, v, want)
				break
			}
		}
	}
}

// TestScalars checks the scalar reductions: the sum of r+1 is p(p+1)/2, the
// maximum of r is p−1 and the maximum of −r is 0.
func TestScalars(t *testing.T, c mpi.Comm) {
	r, p := c.Rank(), c.Size()
	if s, err := c.AllreduceSumScalar(float64(r + 1)); err != nil || s != triangle(p) {
		t.Errorf("rank %d of %d: AllreduceSumScalar(r+1) = %v, %v; want %v", r, p, s, err, triangle(p))
	}
	if m, err := c.AllreduceMaxScalar(float64(r)); err != nil || m != float64(p-1) {
		t.Errorf("rank %d of %d: AllreduceMaxScalar(r) = %v, %v; want %v", r, p, m, err, p-1)
	}
	if m, err := c.AllreduceMaxScalar(-float64(r)); err != nil || m != 0 {
		t.Errorf("rank %d of %d: AllreduceMaxScalar(−r) = %v, %v; want 0", r, p, m, err)
	}
}

// TestBcast broadcasts from every root in turn: the root holds
// 1000·root + i, the others −1, and afterwards all hold the root's values.
func TestBcast(t *testing.T, c mpi.Comm) {
	r, p := c.Rank(), c.Size()
	for root := 0; root < p; root++ {
		for _, n := range Lengths {
			buf := make([]float64, n)
			for i := range buf {
				buf[i] = -1
				if r == root {
					buf[i] = float64(1000*root + i)
				}
			}
			if err := c.Bcast(buf, root); err != nil {
				t.Errorf("root=%d n=%d: Bcast: %v", root, n, err)
				continue
			}
			for i, v := range buf {
				if want := float64(1000*root + i); v != want {
					t.Errorf("root=%d n=%d: rank %d: buf[%d] = %v, want %v", root, n, r, i, v, want)
					break
				}
			}
		}
	}
}

// TestBcastBytes is TestBcast for bytes.
func TestBcastBytes(t *testing.T, c mpi.Comm) {
	r, p := c.Rank(), c.Size()
	for root := 0; root < p; root++ {
		want := []byte(fmt.Sprintf("model from rank %d: %s", root, strings.Repeat("x", 100*root)))
		buf := make([]byte, len(want))
		if r == root {
			copy(buf, want)
		}
		if err := c.BcastBytes(buf, root); err != nil {
			t.Errorf("root=%d: BcastBytes: %v", root, err)
			continue
		}
		if string(buf) != string(want) {
			t.Errorf("root=%d: rank %d received %q, want %q", root, r, buf, want)
		}
	}
}

// TestAllgatherv gathers uneven pieces: element j of rank r's piece is
// 100·r + j, with counts r+1 (all different), r mod 2 (rank 0 sends
// nothing, with a nil send), all zero, and one long piece on the last rank.
func TestAllgatherv(t *testing.T, c mpi.Comm) {
	r, p := c.Rank(), c.Size()
	patterns := map[string]func(q int) int{
		"r+1":     func(q int) int { return q + 1 },
		"r mod 2": func(q int) int { return q % 2 },
		"zero":    func(int) int { return 0 },
		"last big": func(q int) int {
			if q == p-1 {
				return 1 << 14
			}
			return 2
		},
	}
	for _, name := range []string{"r+1", "r mod 2", "zero", "last big"} {
		count := patterns[name]
		counts := make([]int, p)
		total := 0
		for q := range counts {
			counts[q] = count(q)
			total += counts[q]
		}
		var send []float64
		if counts[r] > 0 {
			send = make([]float64, counts[r])
			for j := range send {
				send[j] = float64(100*r + j)
			}
		}
		recv := make([]float64, total)
		for i := range recv {
			recv[i] = -1
		}
		if err := c.Allgatherv(send, recv, counts); err != nil {
			t.Errorf("counts %s %v: Allgatherv: %v", name, counts, err)
			continue
		}
		i := 0
	check:
		for q := 0; q < p; q++ {
			for j := 0; j < counts[q]; j++ {
				if want := float64(100*q + j); recv[i] != want {
					t.Errorf("counts %s %v: rank %d: recv[%d] = %v, want %v (rank %d's element %d)", name, counts, r, i, recv[i], want, q, j)
					break check
				}
				i++
			}
		}
	}
}

// TestArgumentErrors checks that the arguments one process can check are
// refused, before any communication, with errors that wrap
// mpi.ErrInvalidArgument (and errs.ErrInvalid) and name the operation.
func TestArgumentErrors(t *testing.T, c mpi.Comm) {
	r, p := c.Rank(), c.Size()
	okCounts := make([]int, p)
	okCounts[r] = 1
	buf := []float64{1}
	for _, tc := range []struct {
		name, op string
		call     func() error
	}{
		{"AllreduceSum nil", "allreduce", func() error { return c.AllreduceSum(nil) }},
		{"AllreduceMax nil", "allreduce", func() error { return c.AllreduceMax(nil) }},
		{"Bcast nil", "bcast", func() error { return c.Bcast(nil, 0) }},
		{"BcastBytes nil", "bcast", func() error { return c.BcastBytes(nil, 0) }},
		{"Bcast root -1", "bcast", func() error { return c.Bcast(buf, -1) }},
		{"Bcast root size", "bcast", func() error { return c.Bcast(buf, p) }},
		{"BcastBytes root size", "bcast", func() error { return c.BcastBytes([]byte{1}, p) }},
		{"Allgatherv nil counts", "allgatherv", func() error { return c.Allgatherv(buf, make([]float64, p), nil) }},
		{"Allgatherv short counts", "allgatherv", func() error { return c.Allgatherv(buf, make([]float64, p), make([]int, p-1)) }},
		{"Allgatherv long counts", "allgatherv", func() error { return c.Allgatherv(buf, make([]float64, p), make([]int, p+1)) }},
		{"Allgatherv negative count", "allgatherv", func() error {
			counts := make([]int, p)
			counts[0] = -1
			return c.Allgatherv(nil, nil, counts)
		}},
		{"Allgatherv send length", "allgatherv", func() error { return c.Allgatherv([]float64{1, 2}, make([]float64, 1), okCounts) }},
		{"Allgatherv recv length", "allgatherv", func() error { return c.Allgatherv(buf, make([]float64, 2), okCounts) }},
		{"Allgatherv overlap", "allgatherv", func() error {
			recv := make([]float64, 1)
			return c.Allgatherv(recv, recv, okCounts)
		}},
	} {
		err := tc.call()
		switch {
		case err == nil:
			t.Errorf("%s: no error", tc.name)
		case !errors.Is(err, mpi.ErrInvalidArgument) || !errors.Is(err, errs.ErrInvalid):
			t.Errorf("%s: %v does not wrap mpi.ErrInvalidArgument and errs.ErrInvalid", tc.name, err)
		case !strings.HasPrefix(err.Error(), "mpi: "+tc.op+": "):
			t.Errorf("%s: %q does not start with %q", tc.name, err, "mpi: "+tc.op+": ")
		}
	}
	// A collective still works after the refused calls (none of them
	// communicated, so the ranks are still in step).
	if s, err := c.AllreduceSumScalar(1); err != nil || s != float64(p) {
		t.Errorf("AllreduceSumScalar(1) after the argument errors = %v, %v; want %d", s, err, p)
	}
}

// TestClose closes the world communicator c (returned by mpi.Open) and
// checks that Close is idempotent, that every collective then fails with
// mpi.ErrClosed, and that Open does too. It must be the last use of MPI in
// the process.
func TestClose(t *testing.T, c mpi.Comm) {
	t.Helper()
	if err := mpi.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := mpi.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	buf := []float64{1}
	for name, call := range map[string]func() error{
		"barrier":    c.Barrier,
		"allreduce":  func() error { return c.AllreduceSum(buf) },
		"allreduce ": func() error { _, err := c.AllreduceMaxScalar(1); return err },
		"bcast":      func() error { return c.Bcast(buf, 0) },
		"bcast ":     func() error { return c.BcastBytes([]byte{1}, 0) },
		"allgatherv": func() error {
			counts := make([]int, c.Size())
			counts[c.Rank()] = 1
			return c.Allgatherv(buf, make([]float64, 1), counts)
		},
	} {
		op := strings.TrimSpace(name)
		if err := call(); !errors.Is(err, mpi.ErrClosed) || !strings.HasPrefix(err.Error(), "mpi: "+op+": ") {
			t.Errorf("%s after Close: %v; want mpi: %s: …ErrClosed", op, err, op)
		}
	}
	if c2, err := mpi.Open(); c2 != nil || !errors.Is(err, mpi.ErrClosed) {
		t.Errorf("Open after Close = %v, %v; want ErrClosed", c2, err)
	}
}
