package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
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
	noLabelsFlag(fs, "the output then has no label column (default: the last CSV column, or --label-col, is the label)")
	out := fs.String("out", stdoutName, "output CSV: columns z1..zr (Euclidean distances between rows are the metric's) and label; - for standard output")
	if err := parseFlags(fs, "transform", args); err != nil {
		return err
	}
	if *out == "" {
		*out = stdoutName
	}
	if *modelPath == "" || *spec == "" {
		return usagef("transform: --model and --data are required")
	}
	if *out == stdoutName && env.json {
		return usagef("transform: the CSV goes to standard output, where --json writes its summary: give --out a file name")
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
			hint := ""
			if d.Dim() == want-1 && !cur.noLabels {
				hint = " (one column is taken as the label: pass --no-labels for unlabelled data)"
			}
			return fmt.Errorf("transform: %s has %d features, the model expects %d%s", *spec, d.Dim(), want, hint)
		}
		if z, err = m.Transform(d.X); err != nil {
			return fmt.Errorf("transform: %w", err)
		}
	}
	if err := writeCSV(env, *out, z, d.Y, d.Classes, !cur.noLabels); err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	rows, cols := z.Dims()
	sum := transformSummary{Model: *modelPath, Kind: m.Kind, Data: *spec, Out: *out, Rows: rows, Cols: cols}
	if env.json {
		return emitJSON(env, sum)
	}
	if *out == stdoutName {
		return nil // stdout holds the CSV
	}
	label := " (+ label)"
	if cur.noLabels {
		label = ""
	}
	fmt.Fprintf(env.stdout, "wrote %d rows × %d coordinates%s to %s\n", rows, cols, label, *out)
	return nil
}

// writeCSV writes z with a header z1..zr and, when labels is set, a label
// column with the class names of y; path "-" is standard output.
func writeCSV(env *cmdEnv, path string, z *mat.Dense, y []int, classes []string, labels bool) error {
	f, err := createOutput(env, path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	w := csv.NewWriter(bw)
	rows, cols := z.Dims()
	width := cols
	if labels {
		width++
	}
	rec := make([]string, width)
	for j := 0; j < cols; j++ {
		rec[j] = "z" + strconv.Itoa(j+1)
	}
	if labels {
		rec[cols] = "label"
	}
	w.Write(rec)
	for i := 0; i < rows; i++ {
		for j, v := range z.RawRowView(i) {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if labels {
			rec[cols] = strconv.Itoa(y[i])
			if y[i] >= 0 && y[i] < len(classes) {
				rec[cols] = classes[y[i]]
			}
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
