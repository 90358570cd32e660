package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// runKernelJSON runs `psdlearn kernel args... --json` in-process and decodes
// the JSON object it prints.
func runKernelJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"kernel"}, append(args, "--json")...)
	if st := runMain(context.Background(), args, &out, &errb); st != 0 {
		t.Fatalf("psdlearn %s: status %d, stdout %s, stderr %s", strings.Join(args, " "), st, out.String(), errb.String())
	}
	var m map[string]any
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decoding JSON: %v (stdout %q)", err, out.String())
	}
	if dec.More() {
		t.Fatalf("more than one JSON value on stdout")
	}
	return m
}

func num(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	v, ok := m[key].(float64)
	if !ok {
		t.Fatalf("field %q missing or not a number in %v", key, m)
	}
	return v
}

func TestKernelMEG(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"noiseless", []string{"--objects", "10", "--steps", "3000"}},
		{"noisy auto c", []string{"--objects", "10", "--steps", "3000", "--noise", "0.01"}},
		{"noisy c=2 go", []string{"--objects", "9", "--steps", "2000", "--noise", "0.01", "--c", "2", "--backend", "go"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := runKernelJSON(t, append([]string{"--algo", "meg"}, c.args...)...)
			if m["algo"] != "meg" {
				t.Fatalf("algo %v", m["algo"])
			}
			total, bound := num(t, m, "total_loss"), num(t, m, "loss_bound")
			if !(total > 0) || total > bound {
				t.Fatalf("total loss %g, bound %g", total, bound)
			}
			if num(t, m, "r") != 1 || num(t, m, "iterations") != num(t, m, "steps") {
				t.Fatalf("r %v, iterations %v, steps %v", m["r"], m["iterations"], m["steps"])
			}
			for _, k := range []string{"nn_error", "nn_error_loo", "target_nn_error", "target_nn_error_loo"} {
				if v := num(t, m, k); v < 0 || v > 1 {
					t.Fatalf("%s = %g", k, v)
				}
			}
			if num(t, m, "divergence_final") >= num(t, m, "divergence_initial") && num(t, m, "noise") == 0 {
				t.Fatalf("noiseless run moved away from the target: Δ %v → %v", m["divergence_initial"], m["divergence_final"])
			}
			cps, _ := m["checkpoints"].([]any)
			if len(cps) < 3 {
				t.Fatalf("%d checkpoints", len(cps))
			}
			prev := 0.0
			for _, cp := range cps {
				cp := cp.(map[string]any)
				tl, lb := num(t, cp, "total_loss"), num(t, cp, "loss_bound")
				if tl < prev || tl > lb {
					t.Fatalf("checkpoint %v: total loss %g (previous %g), bound %g", cp["step"], tl, prev, lb)
				}
				prev = tl
			}
		})
	}
}

func TestKernelDefiniteBoost(t *testing.T) {
	m := runKernelJSON(t, "--algo", "definiteboost", "--objects", "30", "--gamma-scale", "0.25", "--projection", "both")
	runs, _ := m["runs"].([]any)
	if len(runs) != 2 {
		t.Fatalf("%d runs, want approx and exact", len(runs))
	}
	tol := num(t, m, "tol")
	if num(t, m, "constraints") < 10 || tol <= 0 {
		t.Fatalf("constraints %v, tol %v", m["constraints"], m["tol"])
	}
	for i, want := range []string{"approx", "exact"} {
		r := runs[i].(map[string]any)
		if r["projection"] != want || r["converged"] != true {
			t.Fatalf("run %d: projection %v converged %v", i, r["projection"], r["converged"])
		}
		if v := num(t, r, "max_violation"); v > tol {
			t.Fatalf("%s: max violation %g > tol %g", want, v, tol)
		}
		if d, b := num(t, r, "dual_objective"), num(t, r, "dual_bound"); !(d < 0) || d > b {
			t.Fatalf("%s: dual %g, Theorem 4.1 bound %g", want, d, b)
		}
		if num(t, r, "iterations") < 1 || num(t, r, "duality_gap") < -1e-9 {
			t.Fatalf("%s: iterations %v, gap %v", want, r["iterations"], r["duality_gap"])
		}
	}
	if num(t, m, "iterations") != num(t, runs[0].(map[string]any), "iterations") {
		t.Fatalf("top-level iterations differ from the first run")
	}
}

func TestKernelErrors(t *testing.T) {
	for _, args := range [][]string{
		{"kernel", "--json"},
		{"kernel", "--algo", "nope", "--json"},
		{"kernel", "--algo", "meg", "--c", "-1", "--objects", "5", "--steps", "10", "--json"},
		{"kernel", "--algo", "definiteboost", "--projection", "sideways", "--objects", "10", "--json"},
		{"kernel", "--algo", "definiteboost", "--objects", "10", "--eps", "1e-9", "--json"},
	} {
		var out, errb bytes.Buffer
		if st := runMain(context.Background(), args, &out, &errb); st == 0 {
			t.Errorf("%v: status 0", args)
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil || m["error"] == nil {
			t.Errorf("%v: want one JSON error object, got %q", args, out.String())
		}
	}
}
