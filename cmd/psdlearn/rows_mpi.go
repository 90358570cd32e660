package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/mpi"
)

// readRowsMPI reads this rank's rows of spec for a distributed run
// (distributed.ReadRows): only the rank's part of one uncompressed CSV,
// LIBSVM or IDX file, its own file with {rank}, otherwise the whole data,
// keeping its block. The loader options are the command line's (maxFeatures
// and why as for loadDataFeatures); every rank needs minRows rows.
func readRowsMPI(comm mpi.Comm, spec, labelCol string, maxFeatures int, why string, minRows int) (*distributed.Rows, error) {
	opt, err := dataOptions(labelCol, maxFeatures)
	if err != nil {
		return nil, err
	}
	load := func(s string) (*data.Dataset, error) {
		o := opt
		if isStdinSpec(s) && cur.env != nil {
			o.Stdin = cur.env.stdin
		}
		return data.Load(s, o)
	}
	rows, err := distributed.ReadRows(comm, spec, opt, load, minRows)
	if err != nil {
		return nil, explainLoadError(err, labelCol, why)
	}
	return rows, nil
}

// rowsMemory gathers every rank's bytes of rows and labels and the bytes it
// read from the data files (collective), and prints them on rank 0's
// progress line, prefixed by cmd.
func rowsMemory(comm mpi.Comm, rows *distributed.Rows, prog *progressLine, cmd string) (held, read []int64, err error) {
	held, read, err = rows.Memory(comm)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	hs, rs, any := make([]string, len(held)), make([]string, len(read)), false
	for q := range held {
		hs[q], rs[q] = limits.FormatBytes(float64(held[q])), limits.FormatBytes(float64(read[q]))
		any = any || read[q] > 0
	}
	how := "every rank loaded the whole input and kept its block"
	if any {
		how = "read from the file by rank: " + strings.Join(rs, ", ")
	}
	prog.printf("%s: rows held by rank: %s (%s)", cmd, strings.Join(hs, ", "), how)
	return held, read, nil
}

// openMPI opens the MPI job of a train run (mpi.Open) and sets its Go
// threads to its share of the node's cores: the ranks on one node
// (OMPI_COMM_WORLD_LOCAL_SIZE) divide runtime.NumCPU among them, at least
// one each, unless GOMAXPROCS is set. A rank that waits in a collective
// operation polls, so ranks whose goroutines outnumber the cores slow each
// other down (BoostMetric on letters, 2 ranks on 2 cores: 2.9 s with two
// threads per rank, 0.5 s with one).
func openMPI() (mpi.Comm, error) {
	comm, err := mpi.Open()
	if err != nil {
		return nil, err
	}
	if os.Getenv("GOMAXPROCS") == "" {
		local, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
		if local < 1 {
			local = comm.Size()
		}
		runtime.GOMAXPROCS(max(1, runtime.NumCPU()/local))
	}
	return comm, nil
}
