// Command serve is the smallest service built on psdlearn: it loads a model
// file written by `psdlearn train --out` and maps raw feature rows, read as
// comma-separated numbers from standard input, into the learned metric's
// coordinates (one output row per input row), in which Euclidean distances
// are the metric's distances.
//
//	go run ./examples/serve model.json < rows.csv
//
// It imports only package model, which uses gonum and no native library:
// built with cgo on, the binary links none of OpenBLAS, arpack-ng, CLP or
// gfortran (internal/layout checks this with ldd), and its output is the
// same whichever engine backend trained the model.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: serve MODEL.json < rows.csv")
	}
	m, err := model.LoadFile(os.Args[1])
	if err != nil {
		return err
	}
	var rows [][]float64
	sc := bufio.NewScanner(os.Stdin)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var row []float64
		for _, f := range strings.Split(text, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			row = append(row, v)
		}
		if len(rows) > 0 && len(row) != len(rows[0]) {
			return fmt.Errorf("line %d: %d values, the first row has %d", line, len(row), len(rows[0]))
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	x := mat.NewDense(len(rows), len(rows[0]), nil)
	for i, r := range rows {
		x.SetRow(i, r)
	}
	z, err := m.Transform(x)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	n, r := z.Dims()
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			if j > 0 {
				w.WriteByte(',')
			}
			w.WriteString(strconv.FormatFloat(z.At(i, j), 'g', -1, 64))
		}
		w.WriteByte('\n')
	}
	return nil
}
