package bench

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// fillNaN sets every float in v (a settable value) to NaN, giving every
// slice and map one element and every nil pointer a value, so that a
// report encodes each of its numbers at least once.
func fillNaN(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		v.SetFloat(math.NaN())
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillNaN(v.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillNaN(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillNaN(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fillNaN(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		m := reflect.MakeMap(v.Type())
		e := reflect.New(v.Type().Elem()).Elem()
		fillNaN(e, depth+1)
		m.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), e)
		v.Set(m)
	}
}

// TestReportsEncodeUnknownNumbers: every report suite's result encodes as
// JSON (psdlearn bench --json) when every one of its numbers is not known
// (NaN: a C that BoostMetric does not have, a run that failed), writing
// them as null, never failing the whole output.
func TestReportsEncodeUnknownNumbers(t *testing.T) {
	for _, r := range []Report{&BoostFig2Report{}, &MPIScaling{}, &Table2Report{}, &PhasesReport{}, &SDPReport{}} {
		fillNaN(reflect.ValueOf(r), 0)
		b, err := json.Marshal(r)
		name := reflect.TypeOf(r).Elem().Name()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if strings.Contains(string(b), "NaN") || !strings.Contains(string(b), "null") {
			t.Errorf("%s: not-known numbers not written as null: %s", name, b)
		}
	}
	// The reports that --from reads back restore every null as NaN.
	for _, c := range []struct {
		r    Report
		read func([]byte) (Report, error)
	}{
		{&SDPReport{}, func(b []byte) (Report, error) { return ReadSDPReport(b) }},
		{&Table2Report{}, func(b []byte) (Report, error) { return ReadTable2Report(b) }},
	} {
		fillNaN(reflect.ValueOf(c.r), 0)
		name := reflect.TypeOf(c.r).Elem().Name()
		b, err := json.Marshal(c.r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := c.read(b)
		if err != nil {
			t.Fatalf("%s: reading back: %v", name, err)
		}
		if n, bad := countFloats(reflect.ValueOf(got), 0); bad > 0 || n == 0 {
			t.Errorf("%s: %d of %d numbers not NaN after a round trip", name, bad, n)
		}
	}
}

// countFloats counts the floats reachable in v and those among them that
// are not NaN.
func countFloats(v reflect.Value, depth int) (n, notNaN int) {
	if depth > 8 {
		return 0, 0
	}
	add := func(a, b int) { n, notNaN = n+a, notNaN+b }
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if !math.IsNaN(v.Float()) {
			return 1, 1
		}
		return 1, 0
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			add(countFloats(v.Elem(), depth+1))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				add(countFloats(v.Field(i), depth+1))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			add(countFloats(v.Index(i), depth+1))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			add(countFloats(v.MapIndex(k), depth+1))
		}
	}
	return n, notNaN
}
