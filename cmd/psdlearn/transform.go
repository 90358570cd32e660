package main

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/internal/npy"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

func init() {
	// Data specs npy:X.npy[:LABELS.npy] (docs/cli.md, "NumPy output").
	data.RegisterScheme(npy.Scheme, npy.LoadDataset)
	register(command{
		name:    "transform",
		summary: "map data into a learned metric's space (x ↦ Lᵀ·preprocess(x)) or a kernel's (V·diag(√λ)), or export a model's matrix; CSV or .npy",
		run:     runTransform,
	})
}

// transformSummary is the JSON output of psdlearn transform.
type transformSummary struct {
	Model string `json:"model"`
	Kind  string `json:"kind"`
	Data  string `json:"data,omitempty"` // omitted with --matrix
	Out   string `json:"out"`
	Rows  int    `json:"rows"`
	Cols  int    `json:"cols"`
	// Format is "csv" or "npy"; Matrix the model matrix exported by
	// --matrix (M, L, K or F), empty for transformed data.
	Format string `json:"format"`
	Matrix string `json:"matrix,omitempty"`
}

func runTransform(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "transform")
	modelPath := fs.String("model", "", "model file")
	spec := fs.String("data", "", "data SPEC with raw features (the model's preprocessing is applied)")
	var labelCol string
	labelColFlag(fs, &labelCol)
	noLabelsFlag(fs, "the output then has no label column (default: the last CSV column, or --label-col, is the label)")
	out := fs.String("out", stdoutName, "output: FILE.npy writes a NumPy float64 array (coordinates only), any other name CSV with columns z1..zr (Euclidean distances between rows are the metric's) and label; - for standard output (CSV)")
	matrix := fs.String("matrix", "", "instead of transforming --data, export a matrix of the model to --out FILE.npy: M or L (metric, M = L·Lᵀ), K or F (kernel, K = F·Fᵀ, F = V·diag(√λ))")
	if err := parseFlags(fs, "transform", args); err != nil {
		return err
	}
	if *out == "" {
		*out = stdoutName
	}
	if *matrix != "" {
		if *spec != "" {
			return usagef("transform: --matrix exports a matrix of the model: give it without --data")
		}
		return exportMatrix(env, *modelPath, *matrix, *out)
	}
	if err := requireFlags("transform", " (or --model and --matrix)", []string{"model", "data"}, *modelPath, *spec); err != nil {
		return err
	}
	if *out == stdoutName && env.json {
		return usagef("transform: the CSV goes to standard output, where --json writes its summary: give --out a file name")
	}
	m, err := model.LoadFile(*modelPath)
	if err != nil {
		return err
	}
	warnUser(modelWarning(m))
	d, err := loadDataFeatures(*spec, labelCol, m.InputDim(), "the input dimension of the model")
	if err != nil {
		return err
	}
	var z *mat.Dense
	switch m.Kind {
	case model.KindKernel:
		// A learned kernel is transductive: its feature-space points are the
		// rows of V·diag(√λ), one per training point.
		if d, _, err = kernelPoints(m, d, "transform"); err != nil {
			return err
		}
		z = m.Kernel.Factor()
	default:
		if err := checkModelDim(m, d, true); err != nil {
			return fmt.Errorf("transform: %w", err)
		}
		if z, err = m.Transform(d.X); err != nil {
			return fmt.Errorf("transform: %w", err)
		}
	}
	format := "csv"
	if npy.IsNPY(*out) {
		format = "npy"
		if err := npy.WriteFile(*out, z); err != nil {
			return fmt.Errorf("transform: %w", err)
		}
	} else if err := writeCSV(env, *out, z, d.Y, d.Classes, !cur.noLabels); err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	rows, cols := z.Dims()
	sum := transformSummary{Model: *modelPath, Kind: m.Kind, Data: *spec, Out: *out, Rows: rows, Cols: cols, Format: format}
	if env.json {
		return emitJSON(env, sum)
	}
	if *out == stdoutName {
		return nil // stdout holds the CSV
	}
	label := " (+ label)"
	if cur.noLabels || format == "npy" {
		label = ""
	}
	fmt.Fprintf(env.stdout, "wrote %d rows × %d coordinates%s to %s\n", rows, cols, label, *out)
	return nil
}

// exportMatrix writes matrix name of the model at modelPath to out (.npy):
// M or L of a metric model, K or F of a kernel model.
func exportMatrix(env *cmdEnv, modelPath, name, out string) error {
	if modelPath == "" {
		return usagef("transform: --matrix needs --model")
	}
	if !npy.IsNPY(out) {
		return usagef("transform: --matrix writes a NumPy array: give --out FILE.npy")
	}
	m, err := model.LoadFile(modelPath)
	if err != nil {
		return err
	}
	warnUser(modelWarning(m))
	var a mat.Matrix
	switch {
	case m.Kind == model.KindMetric && name == "M":
		a = m.Metric.M
	case m.Kind == model.KindMetric && name == "L":
		a = m.Metric.L
	case m.Kind == model.KindKernel && name == "K":
		if err := checkKernelOut("transform", out, m.Kernel.N()); err != nil {
			return err
		}
		a = kernelGram(m.Kernel)
	case m.Kind == model.KindKernel && name == "F":
		a = m.Kernel.Factor()
	default:
		want := "M or L"
		if m.Kind == model.KindKernel {
			want = "K or F"
		}
		return usagef("transform: --matrix %q: a %s model has %s", name, m.Kind, want)
	}
	if err := npy.WriteFile(out, a); err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	rows, cols := a.Dims()
	sum := transformSummary{Model: modelPath, Kind: m.Kind, Out: out, Rows: rows, Cols: cols, Format: "npy", Matrix: name}
	if env.json {
		return emitJSON(env, sum)
	}
	fmt.Fprintf(env.stdout, "wrote the %d×%d matrix %s of %s to %s\n", rows, cols, name, modelPath, out)
	return nil
}

// kernelPoints returns the rows of d that are the points of kernel model m,
// in the kernel's order, and says which they are. A kernel learned by
// SimpleNPKL, MEG or DefiniteBoost is transductive: it is defined on the
// objects it was learned on and nowhere else (none of them defines an
// out-of-sample extension), so d must be those objects — or, for a model of
// psdlearn kernel --objects, the whole data set they were sampled from
// (the model records the sampled rows).
func kernelPoints(m *model.Model, d *data.Dataset, cmd string) (*data.Dataset, string, error) {
	n := m.Kernel.N()
	if d.Len() == n {
		return d, fmt.Sprintf("all %d points of --data (a learned kernel is transductive)", n), nil
	}
	prov := m.Provenance
	if rows := kernelObjectRows(m); len(rows) == n && prov != nil && prov.Data != nil && d.Len() == prov.Data.Rows {
		if prov.Data.SHA256 != "" && model.DataSHA256(d.X, d.Y, d.Classes) != prov.Data.SHA256 {
			return nil, "", fmt.Errorf("%s: --data has the %d rows of the data the kernel's objects were sampled from (%s), but not its content (SHA-256 differs)", cmd, d.Len(), prov.Data.Name)
		}
		ok := true
		for _, r := range rows {
			ok = ok && r >= 0 && r < d.Len()
		}
		if ok {
			return d.Subset(rows), fmt.Sprintf("the %d objects of the kernel, rows of --data recorded in the model (of %d)", n, d.Len()), nil
		}
	}
	name := ""
	if prov != nil && prov.Data != nil {
		name = fmt.Sprintf(" (%s, %d rows)", prov.Data.Name, prov.Data.Rows)
	}
	return nil, "", fmt.Errorf("%s: the kernel is on %d points and --data has %d rows: a kernel learned by %s is transductive — defined only on the objects it was learned on, with no out-of-sample extension — so give the data it was learned on%s", cmd, n, d.Len(), m.Algo, name)
}

// kernelObjectRows returns the rows recorded in info.object_rows of a
// model written by psdlearn kernel --objects (nil if none).
func kernelObjectRows(m *model.Model) []int {
	v, ok := m.Info["object_rows"]
	if !ok {
		return nil
	}
	var rows []int
	switch x := v.(type) {
	case []int:
		rows = append(rows, x...)
	case []any:
		for _, e := range x {
			f, ok := e.(float64)
			if !ok || f != math.Trunc(f) {
				return nil
			}
			rows = append(rows, int(f))
		}
	default:
		return nil
	}
	return rows
}

// writeCSV writes z with a header z1..zr and, when labels is set, a label
// column with the class names of y; path "-" is standard output.
func writeCSV(env *cmdEnv, path string, z *mat.Dense, y []int, classes []string, labels bool) error {
	rows, cols := z.Dims()
	header := make([]string, cols, cols+1)
	for j := range header {
		header[j] = "z" + strconv.Itoa(j+1)
	}
	if labels {
		header = append(header, "label")
	}
	return writeRecords(env, path, header, rows, func(i int, rec []string) {
		for j, v := range z.RawRowView(i) {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if labels {
			rec[cols] = strconv.Itoa(y[i])
			if y[i] >= 0 && y[i] < len(classes) {
				rec[cols] = classes[y[i]]
			}
		}
	})
}
