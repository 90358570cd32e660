package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/psdlearn/psdlearn/algos/constraints"
	"github.com/psdlearn/psdlearn/algos/data"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/engine"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	c, _ := strconv.ParseFloat(os.Args[2], 64)
	ho, _ := strconv.ParseFloat(os.Args[3], 64)
	F := "/usr/share/datasets/fashion-mnist/"
	d, err := data.Load("idx:"+F+"train-images-idx3-ubyte.gz:"+F+"train-labels-idx1-ubyte.gz", data.LoadOptions{})
	if err != nil {
		panic(err)
	}
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	tr := d.Subset(rows)
	b := engine.Default()
	t0 := time.Now()
	pipe, err := data.FitPipeline(b, tr.X, true, 164)
	if err != nil {
		panic(err)
	}
	tr, _ = pipe.ApplyDataset(tr)
	t1 := time.Now()
	ts, err := constraints.TripletsBLAS(b.BLAS(), tr.X, tr.Y, 3)
	if err != nil {
		panic(err)
	}
	t2 := time.Now()
	fmt.Printf("preprocess %.1fs triplets %.1fs (%d)\n", t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), ts.Len())
	prog := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "[%.1fs] "+f+"\n", append([]any{time.Since(t2).Seconds()}, a...)...) }
	res, err := frob.Learn(context.Background(), tr.X, ts, frob.MetricOptions{C: c, HandoverGap: ho, Backend: b, Progress: prog})
	if err != nil {
		panic(err)
	}
	fmt.Printf("C=%g handover=%g: %.1fs iters %d evals %d full %d rounds %d gap %.3g certified %v (%s) viol %d\n", c, ho, time.Since(t2).Seconds(), res.Iterations, res.Evaluations, res.FullEvaluations, res.Rounds, res.RelGap, res.Certified, res.Reason, res.Violations)
}
