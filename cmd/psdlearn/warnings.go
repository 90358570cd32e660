package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/warn"
	"gonum.org/v1/gonum/mat"
)

// Warnings of a command line take one path: warnUser prints each on stderr
// as "psdlearn: warning: …" (also under --quiet) and records it, and
// emitJSON puts the record into the "warnings" array of the JSON output.
// A command that writes a model adds them to its certificate as well. The
// messages come from package warn (numbers in, message out).

// warnUser reports msg as a warning of the running command line; "" and a
// repeat do nothing.
func warnUser(msg string) {
	if msg == "" {
		return
	}
	for _, w := range cur.warnings {
		if w == msg {
			return
		}
	}
	cur.warnings = append(cur.warnings, msg)
	if cur.env != nil {
		fmt.Fprintf(cur.env.stderr, "psdlearn: warning: %s\n", strings.ReplaceAll(msg, "\n", " "))
	}
}

// withWarnings returns v with the recorded warnings added to its
// "warnings" field ([]string), when it has one, and whether it had one.
func withWarnings(v any, ws []string) (any, bool) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return v, false
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return v, false
	}
	t := rv.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "warnings" || f.Type != reflect.TypeOf([]string(nil)) || !f.IsExported() {
			continue
		}
		cp := reflect.New(t).Elem()
		cp.Set(rv)
		have := cp.Field(i).Interface().([]string)
		merged := append([]string{}, have...)
		for _, w := range ws {
			dup := false
			for _, h := range have {
				dup = dup || h == w
			}
			if !dup {
				merged = append(merged, w)
			}
		}
		cp.Field(i).Set(reflect.ValueOf(merged))
		return cp.Interface(), true
	}
	return v, false
}

// warningsJSON is the "warnings" member for an object without the field.
func warningsJSON(ws []string) []byte {
	b, _ := json.Marshal(ws)
	return append([]byte(`"warnings":`), b...)
}

// splitWarnings returns the warnings about the parts a data set d was
// split into (val and test may be nil; sep says the test rows come from
// another file): classes the training rows lack, rows in no part, and
// test rows that are training rows.
func splitWarnings(d, tr, val, test *data.Dataset, sep bool) []string {
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	for _, p := range []struct {
		name string
		ds   *data.Dataset
	}{{"validation", val}, {"test", test}} {
		if p.ds == nil {
			continue
		}
		classes, rows := data.MissingClasses(tr, p.ds)
		add(warn.MissingClasses(p.name, classes, rows))
	}
	used := tr.Len() + val.Len()
	if !sep {
		used += test.Len()
	}
	add(warn.UnusedRows(used, d.Len()))
	if sep && test != nil {
		add(warn.Resubstitution(data.SharedRows(tr, test), test.Len()))
	}
	return out
}

// modelWarning returns the warning about a degenerate model (zero metric
// or kernel), or "".
func modelWarning(m *model.Model) string {
	switch {
	case m == nil:
	case m.Metric != nil:
		return warn.DegenerateMetric(mat.Trace(m.Metric.M), m.Metric.Dim())
	case m.Kernel != nil:
		return warn.DegenerateKernel(kernelTrace(m.Kernel), m.Kernel.N())
	}
	return ""
}

// kernelTrace returns Σ_i K_ii = Σ_c λ_c ‖V_c‖² of a kernel.
func kernelTrace(k *model.Kernel) float64 {
	n, r := k.V.Dims()
	tr := 0.0
	for c := 0; c < r; c++ {
		s := 0.0
		for i := 0; i < n; i++ {
			v := k.V.At(i, c)
			s += v * v
		}
		tr += k.Lambda[c] * s
	}
	return tr
}
