package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// rankPlaceholder in a --data spec under mpirun names one file per rank:
// rank r reads the spec with the placeholder replaced by r, and no rank
// reads another's rows.
const rankPlaceholder = "{rank}"

// rankShard is one rank's rows of a data set split into one file per rank.
type rankShard struct {
	x       *mat.Dense // this rank's rows
	y       []int      // their labels, indices into classes
	classes []string   // the union of every rank's classes
	n, lo   int        // rows over all ranks; this rank's first row
}

// loadRankShard loads this rank's file of spec (see rankPlaceholder) with
// load, naming cmd in its errors. The
// ranks agree, before anything else is exchanged, that every file loaded
// and that they have the same number of features (a rank whose file fails
// returns its error, the others say that a rank failed), then on one class
// list: the union of their label names, ordered as data.Load orders
// classes, so that the rows, numbered rank by rank, carry the labels a
// one-process run on the files concatenated in rank order would give them.
func loadRankShard(comm mpi.Comm, cmd, spec, labelCol string, load func(spec, labelCol string) (*data.Dataset, error)) (*rankShard, error) {
	r := comm.Rank()
	path := strings.ReplaceAll(spec, rankPlaceholder, strconv.Itoa(r))
	d, lerr := load(path, labelCol)
	rows, dim := 0, 0
	if lerr == nil {
		rows, dim = d.X.Dims()
		if rows == 0 {
			lerr = fmt.Errorf("%s: %s has no rows: every rank needs at least one", cmd, path)
		}
	}
	agree := []float64{0, float64(dim), -float64(dim)}
	if lerr != nil {
		agree = []float64{1, 0, 0}
	}
	if err := comm.AllreduceMax(agree); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	switch {
	case lerr != nil:
		return nil, fmt.Errorf("%s: rank %d: %w", cmd, r, lerr)
	case agree[0] != 0:
		return nil, fmt.Errorf("%s: another rank could not load its part of %s (rank %d loaded %s)", cmd, spec, r, path)
	case agree[1] != -agree[2]:
		return nil, fmt.Errorf("%s: the ranks' files of %s have %g to %g features", cmd, spec, -agree[2], agree[1])
	}
	p := comm.Size()
	// Rows and the length of the class names of every rank.
	names := strings.Join(d.Classes, "\x00")
	sizes := make([]float64, 2*p)
	if err := comm.Allgatherv([]float64{float64(rows), float64(len(names))}, sizes, twos(p)); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	s := &rankShard{x: d.X, y: d.Y}
	counts := make([]int, p)
	total := 0
	for q := 0; q < p; q++ {
		if q < r {
			s.lo += int(sizes[2*q])
		}
		s.n += int(sizes[2*q])
		counts[q] = int(sizes[2*q+1])
		total += counts[q]
	}
	// Every rank's class names, as bytes.
	send := make([]float64, len(names))
	for i := 0; i < len(names); i++ {
		send[i] = float64(names[i])
	}
	recv := make([]float64, total)
	if err := comm.Allgatherv(send, recv, counts); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	others := make([]*data.Dataset, 0, p)
	off := 0
	for q := 0; q < p; q++ {
		b := make([]byte, counts[q])
		for i := range b {
			b[i] = byte(recv[off+i])
		}
		off += counts[q]
		if q != r {
			others = append(others, &data.Dataset{Classes: strings.Split(string(b), "\x00")})
		}
	}
	if err := data.UnifyClasses(append([]*data.Dataset{d}, others...)...); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	s.y, s.classes = d.Y, d.Classes
	return s, nil
}

// twos returns p counts of 2 (one pair of numbers per rank).
func twos(p int) []int {
	c := make([]int, p)
	for i := range c {
		c[i] = 2
	}
	return c
}

// mpiRows is one rank's block of the rows of a data set under mpirun, with
// what every rank knows of the whole: see loadMPIRows.
type mpiRows struct {
	x          *mat.Dense // this rank's rows
	yLocal     []int      // their labels
	n, dim, lo int        // rows over all ranks, features, this rank's first row
	name       string
	classes    []string
	// info describes the whole data for a model file (rank 0 only): its
	// name, shape and hash, or only its shape when no rank holds it all.
	info *model.DataInfo
}

// loadMPIRows loads this rank's rows of spec: with rankPlaceholder in it,
// rank r reads only its own file (loadRankShard); otherwise every rank
// parses the data and keeps the block r·n/P … (r+1)·n/P − 1, as train
// does. Every rank needs at least minRows rows. prep, if not nil,
// transforms the whole data before the split (standardisation, fitted on
// all the rows as in one process); it needs every rank to read the whole
// data, so with rankPlaceholder it is a usage error.
func loadMPIRows(comm mpi.Comm, cmd, spec, labelCol string, minRows int, prep func(*mat.Dense) (*mat.Dense, error)) (*mpiRows, error) {
	p, r := comm.Size(), comm.Rank()
	out := &mpiRows{name: spec}
	if strings.Contains(spec, rankPlaceholder) {
		if prep != nil {
			return nil, usagef("%s: with one file per rank (%s) the data cannot be standardised across the files: standardise them beforehand", cmd, rankPlaceholder)
		}
		sh, err := loadRankShard(comm, cmd, spec, labelCol, loadData)
		if err != nil {
			return nil, err
		}
		out.x, out.yLocal, out.n, out.lo, out.classes = sh.x, sh.y, sh.n, sh.lo, sh.classes
		_, out.dim = sh.x.Dims()
		// No rank holds the whole data to hash it: the model records its
		// shape only.
		out.info = &model.DataInfo{Rows: out.n, Features: out.dim}
		return out, nil
	}
	ds, err := loadData(spec, labelCol)
	if err != nil {
		return nil, err
	}
	out.n, out.dim = ds.X.Dims()
	if out.n < minRows*p {
		return nil, usagef("%s: %d rows for %d ranks: every rank needs at least %d rows", cmd, out.n, p, minRows)
	}
	x := ds.X
	if prep != nil {
		if x, err = prep(x); err != nil {
			return nil, err
		}
	}
	lo, hi := r*out.n/p, (r+1)*out.n/p
	out.x = mat.DenseCopyOf(x.Slice(lo, hi, 0, out.dim))
	out.yLocal = append([]int(nil), ds.Y[lo:hi]...)
	out.lo, out.name, out.classes = lo, ds.Name, ds.Classes
	if r == 0 {
		out.info = model.DescribeData(ds.Name, ds.X, ds.Y, ds.Classes)
	}
	return out, nil
}

// allLabels gathers every rank's labels on every rank (counts: the ranks'
// row counts).
func (m *mpiRows) allLabels(comm mpi.Comm, counts []int) ([]int, error) {
	send := make([]float64, len(m.yLocal))
	for i, v := range m.yLocal {
		send[i] = float64(v)
	}
	all := make([]float64, m.n)
	if err := comm.Allgatherv(send, all, counts); err != nil {
		return nil, err
	}
	y := make([]int, m.n)
	for i, v := range all {
		y[i] = int(v)
	}
	return y, nil
}
