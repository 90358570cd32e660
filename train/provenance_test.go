package train_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	_ "github.com/psdlearn/psdlearn/algos/boost" // registers boostmetric
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/train"
)

// TestReportProvenance checks the provenance RunExperiment hands back for
// the model file: the backend, seed and split of the run and the data set
// as read before the split (its hash included), a separate test set, or
// the training rows when the caller gives no source.
func TestReportProvenance(t *testing.T) {
	d, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := data.ParseSplit("0.7,0.15,0.15")
	parts, err := spec.Apply(d, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := engine.Get("go")
	e := train.Experiment{
		Algo: "boostmetric", Train: parts[0], Val: parts[1], Test: parts[2], Standardize: true, Seed: 5, Backend: b,
		Options: train.Options{Iters: 3},
		Source:  &train.Source{Name: "builtin:iris", Data: d, Split: spec.String()},
	}
	before := time.Now().UTC().Add(-time.Second)
	rep, err := train.RunExperiment(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Provenance
	if p == nil {
		t.Fatal("no provenance")
	}
	want := model.DataInfo{Name: "builtin:iris", Rows: 150, Features: 4, SHA256: model.DataSHA256(d.X, d.Y, d.Classes)}
	if p.Backend != "go" || p.Seed != 5 || p.Split != "0.7,0.15,0.15" || p.Data == nil || *p.Data != want || p.Test != nil {
		t.Errorf("provenance %+v, data %+v", p, p.Data)
	}
	if p.Module == "" || p.GoVersion != runtime.Version() || p.Created.Before(before) || p.Created.After(time.Now().UTC()) {
		t.Errorf("provenance versions and time: %+v", p)
	}

	// A separate test set, and no source at all.
	e.Source = &train.Source{Name: "train.csv", Data: d, Split: "0.8,0.2", TestName: "test.csv", Test: parts[2]}
	if rep, err = train.RunExperiment(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if p := rep.Provenance; p.Test == nil || p.Test.Name != "test.csv" || p.Test.Rows != parts[2].Len() || p.Data.Name != "train.csv" || p.Split != "0.8,0.2" {
		t.Errorf("with a test set: %+v %+v", p, p.Test)
	}
	e.Source = nil
	if rep, err = train.RunExperiment(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if p := rep.Provenance; p.Split != "" || p.Data.Rows != parts[0].Len() || p.Data.SHA256 != model.DataSHA256(parts[0].X, parts[0].Y, parts[0].Classes) {
		t.Errorf("without a source: %+v %+v", p, p.Data)
	}
}
