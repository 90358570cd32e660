package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// sampleSDPReport is an SDP reference report with figures that are not
// known (NaN): a row without CSDP's side and a PSDBoost curve without
// CSDP's optimum.
func sampleSDPReport() *SDPReport {
	nan := math.NaN()
	return &SDPReport{CSDP: "/usr/bin/csdp", Machine: "test machine", Plots: []string{"plots/psdboost-fig1.png"},
		Rows: []SDPRow{
			{Problem: "mvu", Data: "swissroll:200:1", Size: 200, Detail: "k = 6", Constraints: 715, Objective: 3213.01, Seconds: 2.1, Iterations: 956, Certified: true,
				RefObjective: 3213.39, RefDual: 3213.39, RefSeconds: 0.99, RefIterations: 32, RefStatus: "success", Difference: 0.37, RelDiff: 1.2e-4,
				Bound: 29.3, Within: true, Ratio: 0.45, CPUSeconds: 2.4, RefCPUSeconds: 1.9, CPURatio: 0.8, Claim: "about 15× faster",
				Metrics: map[string]float64{"sigma": 1e5, "relative_gap": 8e-5}},
			{Problem: "npkl linear", Data: "iris", Size: 150, Objective: -12.5, Seconds: 0.01, RefObjective: nan, RefDual: nan, RefSeconds: nan,
				Difference: nan, RelDiff: nan, Bound: 0, Ratio: nan, CPUSeconds: 0.01, RefCPUSeconds: nan, CPURatio: nan,
				Metrics: map[string]float64{"psdlearn_accuracy": 0.97, "csdp_accuracy": nan}, Note: "csdp did not run"},
		},
		PSDBoost: &PSDBoostCurve{Paper: []float64{0.1, 0.2}, Default: []float64{0.15}, Optimum: nan},
	}
}

// sampleTable2Report is a Table 2 report with a cell that gave no kernel
// (NaN accuracy) and a row without the paper's figures.
func sampleTable2Report() *Table2Report {
	nan := math.NaN()
	return &Table2Report{Protocol: "k = 5, 3 runs", Machine: "test machine", Plots: []string{"plots/simplenpkl-fig2-time.png"},
		Rows: []Table2Row{
			{Data: "iris", N: 150, Dim: 4, Classes: 3, Paper: &Table2Paper{KMeans: MeanSD{84.5, 6.5}, Linear: MeanSD{97.4, 0}, Seconds: []float64{3.39}, Reading: "intact"},
				KMeans: MeanSD{83.1, 8.2}, Raw: map[string][]Table2Cell{"linear": {{C: 0.1, Accuracy: MeanSD{97.4, 0}, LearnSeconds: 0.05, Covered: true}}},
				Std:     map[string][]Table2Cell{"linear": {{C: 0.1, Accuracy: MeanSD{nan, nan}, LearnSeconds: nan, Bracket: nan, Error: "no kernel"}}},
				Verdict: map[string]string{"linear": "reproduced"}},
			{Data: "chessboard", N: 100, Dim: 2, Classes: 2, KMeans: MeanSD{50.1, nan}, Raw: map[string][]Table2Cell{}, Std: map[string][]Table2Cell{}},
		},
		Figure2: &Figure2{Data: "diabetes", Fractions: []float64{0.1}, All: Figure2Point{Constraints: 565, Accuracy: MeanSD{63.4, 9.2}, Seconds: nan},
			Active: []Figure2Point{{Constraints: 56.5, Accuracy: MeanSD{60, nan}, Seconds: 0.1}}, Random: []Figure2Point{{Constraints: 56.5, Accuracy: MeanSD{58, 1}, Seconds: 0.1}}},
	}
}

// TestReportJSONRoundTrip: a report written as JSON (NaN as null) reads
// back into its type with NaN restored, and writes again to the same JSON
// and the same markdown; the reader of the other kind refuses it.
func TestReportJSONRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name  string
		rep   Report
		read  func([]byte) (Report, error)
		other func([]byte) (Report, error)
		nan   func(Report) bool
	}{
		{"sdp", sampleSDPReport(),
			func(b []byte) (Report, error) { return ReadSDPReport(b) },
			func(b []byte) (Report, error) { return ReadTable2Report(b) },
			func(r Report) bool {
				s := r.(*SDPReport)
				return math.IsNaN(s.Rows[1].RefObjective) && math.IsNaN(s.Rows[1].Metrics["csdp_accuracy"]) && math.IsNaN(s.PSDBoost.Optimum)
			}},
		{"table2", sampleTable2Report(),
			func(b []byte) (Report, error) { return ReadTable2Report(b) },
			func(b []byte) (Report, error) { return ReadSDPReport(b) },
			func(r Report) bool {
				s := r.(*Table2Report)
				cell := s.Rows[0].Std["linear"][0]
				return math.IsNaN(cell.Accuracy.Mean) && math.IsNaN(cell.LearnSeconds) && math.IsNaN(s.Rows[1].KMeans.SD) && math.IsNaN(s.Figure2.All.Seconds)
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, err := json.Marshal(c.rep)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(first, []byte("null")) {
				t.Fatalf("no null in %s", first)
			}
			got, err := c.read(first)
			if err != nil {
				t.Fatal(err)
			}
			if !c.nan(got) {
				t.Errorf("NaN not restored: %+v", got)
			}
			second, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, second) {
				t.Errorf("JSON changed by the round trip:\n%s\n%s", first, second)
			}
			var md1, md2 strings.Builder
			if err := c.rep.Markdown(&md1); err != nil {
				t.Fatal(err)
			}
			if err := got.Markdown(&md2); err != nil {
				t.Fatal(err)
			}
			if md1.String() != md2.String() {
				t.Errorf("markdown changed by the round trip:\n%s\n%s", md1.String(), md2.String())
			}
			if _, err := c.other(first); err == nil {
				t.Errorf("the other reader accepts a %s report", c.name)
			}
		})
	}
	for _, in := range []string{`[1]`, `{"schema":"psdlearn/error/v1","error":"x"}`, `{"suite":"papers","tables":[]}`} {
		if _, err := ReadSDPReport([]byte(in)); err == nil {
			t.Errorf("ReadSDPReport(%s): no error", in)
		}
		if _, err := ReadTable2Report([]byte(in)); err == nil {
			t.Errorf("ReadTable2Report(%s): no error", in)
		}
	}
}

// TestMergeReports: a later report's row replaces the same row (problem,
// data and detail) of an earlier one, new rows are added in order (a row
// of the same problem and data with another detail, such as PSDBoost's
// default beside the paper's protocol, is a new row), and differing
// protocols are both named.
func TestMergeReports(t *testing.T) {
	a, b := sampleSDPReport(), sampleSDPReport()
	b.Rows = []SDPRow{{Problem: "mvu", Data: "swissroll:200:1", Detail: "k = 6", Objective: 1}, {Problem: "mvu", Data: "swissroll:2000:1", Objective: 2},
		{Problem: "mvu", Data: "swissroll:2000:1", Detail: "other", Objective: 3}}
	b.PSDBoost, b.Machine = nil, "other machine"
	m := MergeSDPReports(a, b)
	if len(m.Rows) != 4 || m.Rows[0].Objective != 1 || m.Rows[1].Data != "iris" || m.Rows[2].Data != "swissroll:2000:1" || m.Rows[3].Objective != 3 {
		t.Errorf("merged rows %+v", m.Rows)
	}
	if m.PSDBoost == nil || m.Machine != "test machine; other machine" || len(m.Plots) != 1 {
		t.Errorf("merged report %+v", m)
	}
	c, d := sampleTable2Report(), sampleTable2Report()
	d.Rows, d.Figure2, d.Protocol = d.Rows[1:], nil, "k = 5, 20 runs"
	d.Rows[0].N = 99
	n := MergeTable2Reports(c, d)
	if len(n.Rows) != 2 || n.Rows[1].N != 99 || n.Figure2 == nil || n.Protocol != "k = 5, 3 runs; k = 5, 20 runs" {
		t.Errorf("merged Table 2 %+v", n)
	}
}

// TestSDPMissing: the report names the problems of the full section it has
// no row for, and names none when it has them all.
func TestSDPMissing(t *testing.T) {
	r := sampleSDPReport()
	got := r.missing()
	for _, want := range []string{"mvu on the 500-point Swiss roll", "mvu on the 2000-point Swiss roll", "npkl sqhinge on iris", "npkl linear on sonar", "psdboost on its Figure 1 protocol"} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %v lacks %q", got, want)
		}
	}
	for _, not := range []string{"mvu on the 200-point Swiss roll", "npkl linear on iris"} {
		if slices.Contains(got, not) {
			t.Errorf("missing %v names %q, which has a row", got, not)
		}
	}
	full := &SDPReport{}
	for _, n := range MVUSizes {
		full.Rows = append(full.Rows, SDPRow{Problem: "mvu", Size: n})
	}
	for _, name := range NPKLReferenceData {
		full.Rows = append(full.Rows, SDPRow{Problem: "npkl linear", Data: name}, SDPRow{Problem: "npkl sqhinge", Data: name})
	}
	full.Rows = append(full.Rows, SDPRow{Problem: "psdboost"})
	if m := full.missing(); len(m) != 0 {
		t.Errorf("full report: missing %v", m)
	}
	var md strings.Builder
	if err := r.Markdown(&md); err != nil || !strings.Contains(md.String(), "Not measured in this report") {
		t.Errorf("markdown does not name the missing problems (%v):\n%s", err, md.String())
	}
}
