package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"strconv"

	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

func init() {
	register(command{
		name:    "transform",
		summary: "map data into a learned metric's space (x ↦ Lᵀ·preprocess(x)) and write it as CSV",
		run:     runTransform,
	})
}

// transformSummary is the JSON output of psdlearn transform.
type transformSummary struct {
	Model string `json:"model"`
	Kind  string `json:"kind"`
	Data  string `json:"data"`
	Out   string `json:"out"`
	Rows  int    `json:"rows"`
	Cols  int    `json:"cols"`
}

func runTransform(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "transform")
	modelPath := fs.String("model", "", "model file")
	spec := fs.String("data", "", "data SPEC with raw features (the model's preprocessing is applied)")
	var labelCol string
	labelColFlag(fs, &labelCol)
	out := fs.String("out", "", "output CSV: columns z1..zr (Euclidean distances between rows are the metric's) and label")
	if err := parseFlags(fs, "transform", args); err != nil {
		return err
	}
	if *modelPath == "" || *spec == "" || *out == "" {
		return fmt.Errorf("transform: --model, --data and --out are required")
	}
	m, err := model.LoadFile(*modelPath)
	if err != nil {
		return err
	}
	d, err := loadDataFeatures(*spec, labelCol, m.InputDim(), "the input dimension of the model")
	if err != nil {
		return err
	}
	var z *mat.Dense
	switch m.Kind {
	case model.KindKernel:
		// A learned kernel is transductive: its feature-space points are the
		// rows of V·diag(√λ), one per training point.
		if d.Len() != m.Kernel.N() {
			return fmt.Errorf("transform: the kernel is on %d points, --data has %d", m.Kernel.N(), d.Len())
		}
		z = m.Kernel.Factor()
	default:
		if want := m.InputDim(); d.Dim() != want {
			return fmt.Errorf("transform: %s has %d features, the model expects %d", *spec, d.Dim(), want)
		}
		if z, err = m.Transform(d.X); err != nil {
			return fmt.Errorf("transform: %w", err)
		}
	}
	if err := writeCSV(*out, z, d.Y, d.Classes); err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	rows, cols := z.Dims()
	sum := transformSummary{Model: *modelPath, Kind: m.Kind, Data: *spec, Out: *out, Rows: rows, Cols: cols}
	if env.json {
		return emitJSON(env, sum)
	}
	fmt.Fprintf(env.stdout, "wrote %d rows × %d coordinates (+ label) to %s\n", rows, cols, *out)
	return nil
}

// writeCSV writes z with a header z1..zr,label and the class names of y.
func writeCSV(path string, z *mat.Dense, y []int, classes []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	w := csv.NewWriter(bw)
	rows, cols := z.Dims()
	rec := make([]string, cols+1)
	for j := 0; j < cols; j++ {
		rec[j] = "z" + strconv.Itoa(j+1)
	}
	rec[cols] = "label"
	w.Write(rec)
	for i := 0; i < rows; i++ {
		for j, v := range z.RawRowView(i) {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		rec[cols] = strconv.Itoa(y[i])
		if y[i] >= 0 && y[i] < len(classes) {
			rec[cols] = classes[y[i]]
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
