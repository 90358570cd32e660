package papers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Result is what a run of the suite, or a merge of earlier runs, holds:
// the tables of the table sections and the reports of the report sections.
type Result struct {
	Tables []*Table
	// Reports maps a report section's key to its report.
	Reports map[string]Report
	// Machine describes where the tables were measured (each report names
	// its own machine).
	Machine string
	// Plots are the files drawn from the tables (see Plot).
	Plots []string
}

// MarshalJSON writes r as the suite's JSON output: "suite", "machine",
// "tables", "plots", and each report under its section's key.
func (r *Result) MarshalJSON() ([]byte, error) {
	m := map[string]any{"suite": "papers", "machine": r.Machine, "tables": r.Tables, "plots": r.Plots}
	for k, rep := range r.Reports {
		m[k] = rep
	}
	return json.Marshal(m)
}

// ReadResult decodes an earlier JSON output of the suite (`psdlearn bench
// --suite papers --json`) or of a report section's own suite (`psdlearn
// bench --suite sdp --json`, `--suite table2`). Any other input — an error
// object, another suite's output — is an error that says what it is.
func ReadResult(data []byte) (*Result, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("papers: not a JSON object: %w", err)
	}
	var suite, machine, failure string
	_ = json.Unmarshal(top["suite"], &suite)
	_ = json.Unmarshal(top["machine"], &machine)
	_ = json.Unmarshal(top["error"], &failure)
	kinds := "the JSON output of psdlearn bench --suite " + orList(reportKeys("papers")) + " --json"
	switch {
	case failure != "":
		return nil, fmt.Errorf("papers: an error output (%q), not %s", failure, kinds)
	case suite == "papers":
		return readSuite(top, machine)
	case suite != "":
		return nil, fmt.Errorf("papers: the output of --suite %s, not %s", suite, kinds)
	}
	for _, s := range Sections() {
		if s.ReadReport == nil {
			continue
		}
		if r, err := s.ReadReport(data); err == nil {
			return &Result{Reports: map[string]Report{s.Key: r}}, nil
		}
	}
	return nil, fmt.Errorf("papers: not %s", kinds)
}

// readSuite decodes the suite's own JSON output.
func readSuite(top map[string]json.RawMessage, machine string) (*Result, error) {
	res := &Result{Reports: map[string]Report{}, Machine: machine}
	if raw, ok := top["tables"]; ok {
		if err := json.Unmarshal(raw, &res.Tables); err != nil {
			return nil, fmt.Errorf("papers: reading tables: %w", err)
		}
	}
	for _, s := range Sections() {
		raw, ok := top[s.Key]
		if !ok || s.ReadReport == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		r, err := s.ReadReport(raw)
		if err != nil {
			return nil, fmt.Errorf("papers: %s: %w", s.Key, err)
		}
		res.Reports[s.Key] = r
	}
	if len(res.Tables) == 0 && len(res.Reports) == 0 {
		return nil, fmt.Errorf("papers: the output of --suite papers holds no table and no report")
	}
	return res, nil
}

// MergeResults combines results of earlier runs: the tables by Merge, the
// reports of each section by its MergeReports (or the last one), the
// distinct machines joined.
func MergeResults(results ...*Result) *Result {
	out := &Result{Reports: map[string]Report{}}
	var tables [][]*Table
	reports := map[string][]Report{}
	var machines []string
	for _, r := range results {
		tables = append(tables, r.Tables)
		for k, rep := range r.Reports {
			reports[k] = append(reports[k], rep)
		}
		if r.Machine != "" && !slices.Contains(machines, r.Machine) {
			machines = append(machines, r.Machine)
		}
	}
	out.Tables, out.Machine = Merge(tables...), strings.Join(machines, "; ")
	for k, list := range reports {
		s, ok := sectionByKey(k)
		switch {
		case ok && s.MergeReports != nil:
			out.Reports[k] = s.MergeReports(list...)
		default:
			out.Reports[k] = list[len(list)-1]
		}
	}
	return out
}

// reportKeys lists the keys of the report sections after first.
func reportKeys(first ...string) []string {
	out := first
	for _, s := range Sections() {
		if s.RunReport != nil {
			out = append(out, s.Key)
		}
	}
	return out
}

// orList joins items as "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// Merge combines tables of earlier runs (as decoded from the suite's JSON)
// section by section: the rows and columns of every table in order of
// first appearance, a cell of a later table replacing the same cell of an
// earlier one, skipped columns and notes united. It lets the page be
// generated from runs of single columns or rows, and again when the
// section's notes change, without running anything.
func Merge(runs ...[]*Table) []*Table {
	var out []*Table
	index := map[string]*Table{}
	for _, tables := range runs {
		for _, t := range tables {
			m := index[t.Section]
			if m == nil {
				m = &Table{Section: t.Section, Title: t.Title, Intro: t.Intro, Skipped: map[string]string{}}
				index[t.Section] = m
				out = append(out, m)
			}
			for _, r := range t.Rows {
				if !slices.Contains(m.Rows, r) {
					m.Rows = append(m.Rows, r)
				}
			}
			for _, c := range t.Columns {
				if !slices.Contains(m.Columns, c) {
					m.Columns = append(m.Columns, c)
				}
			}
			for _, c := range t.Cells {
				if old := m.Cell(c.Row, c.Column); old != nil {
					*old = c
				} else {
					m.Cells = append(m.Cells, c)
				}
			}
			for k, v := range t.Skipped {
				m.Skipped[k] = v
			}
			for _, n := range t.Notes {
				if !slices.Contains(m.Notes, n) {
					m.Notes = append(m.Notes, n)
				}
			}
		}
	}
	for _, t := range out {
		// A column skipped in one run and run in another is not skipped.
		for col := range t.Skipped {
			for _, c := range t.Cells {
				if c.Column == col && c.Status != Skipped {
					delete(t.Skipped, col)
					break
				}
			}
		}
		if s, ok := sectionByKey(t.Section); ok && s.Refresh != nil {
			s.Refresh(t)
		}
	}
	return out
}

func sectionByKey(key string) (Section, bool) {
	for _, s := range Sections() {
		if s.Key == key {
			return s, true
		}
	}
	return Section{}, false
}
