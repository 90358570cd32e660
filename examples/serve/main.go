// Command serve is a model service: it loads a model file written by
// `psdlearn train --out` and, optionally, a labelled reference set, and
// answers transform, distance and k-NN predict requests over HTTP with
// JSON in and out (package serve documents the endpoints).
//
//	go run ./examples/serve -model model.json -ref train.csv -addr 127.0.0.1:8080
//	curl -d '{"rows": [[13.2, 1.78, …]]}' http://127.0.0.1:8080/v1/predict
//
// The reference set is a CSV file with one row per line and the label in
// the last column (or -label-col); a header line is skipped. Its rows
// are mapped into the learned space once, at start. Without -ref the
// predict endpoint answers 404.
//
// The server has timeouts on reading and writing, a request body limit
// and a limit on the rows of a request and on the requests computing at
// once; on SIGINT or SIGTERM it stops accepting connections, lets the
// requests in progress finish (for up to -grace) and exits.
//
// It imports only packages model and serve, which use gonum and no
// native library: built with cgo on, the binary links none of OpenBLAS,
// arpack-ng, CLP or gfortran (internal/layout checks this with ldd), and
// its answers are the same whichever engine backend trained the model.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/serve"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	modelPath := fs.String("model", "", "model file (required)")
	refPath := fs.String("ref", "", "reference set for k-NN predictions: CSV, label in the last column")
	labelCol := fs.Int("label-col", -1, "column of the reference set's label: 0-based, negative from the end (as psdlearn's --label-col)")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	var opt serve.Options
	fs.Int64Var(&opt.MaxBodyBytes, "max-body", 1<<20, "largest request body in bytes")
	fs.IntVar(&opt.MaxRows, "max-rows", 256, "most rows (or pairs) in one request")
	fs.IntVar(&opt.K, "k", 3, "neighbours of a prediction when the request names none")
	fs.IntVar(&opt.MaxK, "max-k", 100, "largest k a request may ask for")
	fs.IntVar(&opt.MaxInFlight, "max-inflight", 0, "requests computing at once (0: one per CPU)")
	fs.DurationVar(&opt.RequestTimeout, "timeout", 10*time.Second, "time budget of one request, waiting included")
	grace := fs.Duration("grace", 10*time.Second, "on SIGINT or SIGTERM, how long the requests in progress may still run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *modelPath == "" || fs.NArg() > 0 {
		return errors.New("usage: serve -model MODEL.json [-ref REFERENCE.csv] [-addr HOST:PORT] [flags]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	m, err := model.LoadFile(*modelPath)
	if err != nil {
		return err
	}
	var ix *serve.Index
	if *refPath != "" {
		f, err := os.Open(*refPath)
		if err != nil {
			return err
		}
		col := *labelCol // 0-based → ReadOptions' 1-based; negative ones agree
		if col >= 0 {
			col++
		}
		ref, err := serve.ReadCSV(f, serve.ReadOptions{LabelColumn: col})
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *refPath, err)
		}
		if ix, err = serve.NewIndex(ctx, m, ref); err != nil {
			return fmt.Errorf("%s: %w", *refPath, err)
		}
	}
	h, err := serve.NewHandler(m, ix, opt)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	refRows := 0
	if ix != nil {
		refRows = ix.Len()
	}
	fmt.Fprintf(os.Stderr, "serve: %s model, %d features → %d coordinates, %d reference rows; listening on http://%s\n",
		m.Algo, m.InputDim(), m.OutputDim(), refRows, ln.Addr())
	err = serve.Serve(ctx, serve.NewServer(*addr, h), ln, *grace)
	if err == nil {
		fmt.Fprintln(os.Stderr, "serve: shut down")
	}
	return err
}
