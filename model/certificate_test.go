package model

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestCertificateRoundTrip saves models with and without a certificate and
// requires the certificate back exactly (NaN as NaN), and that a file
// written before certificates existed still loads, with none.
func TestCertificateRoundTrip(t *testing.T) {
	met, err := NewMetric(lowRankPSD(3, 3, 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Certificate{
		nil,
		{Converged: true, Gap: 3.5e-8, Tolerance: 1e-7, Reason: "duality gap"},
		{Converged: false, Gap: 0.27, Tolerance: 1e-7, Reason: "iteration limit", Warnings: []string{"frobmetric C=1: not certified"}},
		{Gap: math.NaN(), Tolerance: math.NaN(), Reason: "cancelled", Interrupted: true},
	} {
		var buf bytes.Buffer
		m := &Model{Kind: KindMetric, Algo: "frobmetric", Metric: met, Certificate: c}
		if err := m.Save(&buf); err != nil {
			t.Fatal(err)
		}
		got, err := Load(&buf)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if c == nil {
			if got.Certificate != nil {
				t.Errorf("no certificate saved, loaded %+v", got.Certificate)
			}
			continue
		}
		g := got.Certificate
		if g == nil {
			t.Fatalf("%+v: certificate lost", c)
		}
		same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
		if g.Converged != c.Converged || !same(g.Gap, c.Gap) || !same(g.Tolerance, c.Tolerance) || g.Reason != c.Reason ||
			g.Interrupted != c.Interrupted || strings.Join(g.Warnings, "|") != strings.Join(c.Warnings, "|") {
			t.Errorf("certificate %+v came back as %+v", c, g)
		}
	}
}

// TestCertificateRejects: a negative tolerance, an interrupted run marked
// converged and unknown certificate fields are invalid files.
func TestCertificateRejects(t *testing.T) {
	base := `{"format":"psdlearn-model","version":1,"kind":"metric","metric":{"dim":1,"m":[[2]]},"certificate":%s}`
	for _, c := range []string{
		`{"converged":true,"gap":0,"tolerance":-1}`,
		`{"converged":true,"gap":0,"tolerance":1e-7,"interrupted":true}`,
		`{"converged":true,"gap":0,"tolerance":1e-7,"bogus":1}`,
	} {
		_, err := Load(strings.NewReader(strings.Replace(base, "%s", c, 1)))
		if err == nil {
			t.Errorf("certificate %s accepted", c)
		}
	}
	ok := strings.Replace(base, "%s", `{"converged":false,"gap":null,"tolerance":null}`, 1)
	m, err := Load(strings.NewReader(ok))
	if err != nil || m.Certificate == nil || m.Certificate.Converged || !math.IsNaN(m.Certificate.Gap) {
		t.Errorf("null gap: %+v, %v", m, err)
	}
}
