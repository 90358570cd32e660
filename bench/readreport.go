package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ReadSDPReport decodes the JSON output of `psdlearn bench --suite sdp
// --json`, restoring as NaN the figures written as null. Input that is not
// such a report (an object without "csdp" and "rows") is an error.
func ReadSDPReport(data []byte) (*SDPReport, error) {
	if err := hasKeys(data, "csdp", "rows"); err != nil {
		return nil, fmt.Errorf("bench: not an SDP reference report: %w", err)
	}
	var r SDPReport
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("bench: reading the SDP reference report: %w", err)
	}
	return &r, nil
}

// ReadTable2Report decodes the JSON output of `psdlearn bench --suite
// table2 --json`, restoring as NaN the figures written as null. Input that
// is not such a report (an object without "protocol" and "rows") is an
// error.
func ReadTable2Report(data []byte) (*Table2Report, error) {
	if err := hasKeys(data, "protocol", "rows"); err != nil {
		return nil, fmt.Errorf("bench: not a Table 2 report: %w", err)
	}
	var r Table2Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("bench: reading the Table 2 report: %w", err)
	}
	return &r, nil
}

// hasKeys checks that data is a JSON object with every one of keys.
func hasKeys(data []byte, keys ...string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("no %q in the input", k)
		}
	}
	return nil
}

// MergeSDPReports combines SDP reference reports of earlier runs: the rows
// of all in order of first appearance, a row of a later report replacing
// the row of the same problem and data of an earlier one, the PSDBoost
// curve of the last report that has one, the plots united, the distinct
// machines and skip reasons joined.
func MergeSDPReports(reports ...*SDPReport) *SDPReport {
	out := &SDPReport{}
	var machines, skipped []string
	for _, r := range reports {
		if r.CSDP != "" {
			out.CSDP = r.CSDP
		}
		machines, skipped = appendNew(machines, r.Machine), appendNew(skipped, r.Skipped)
		for _, row := range r.Rows {
			i := slices.IndexFunc(out.Rows, func(o SDPRow) bool {
				return o.Problem == row.Problem && o.Data == row.Data && o.Detail == row.Detail
			})
			if i >= 0 {
				out.Rows[i] = row
			} else {
				out.Rows = append(out.Rows, row)
			}
		}
		if r.PSDBoost != nil {
			out.PSDBoost = r.PSDBoost
		}
		for _, p := range r.Plots {
			out.Plots = appendNew(out.Plots, p)
		}
	}
	out.Machine, out.Skipped = strings.Join(machines, "; "), strings.Join(skipped, "; ")
	return out
}

// MergeTable2Reports combines Table 2 reports of earlier runs: the rows of
// all in order of first appearance, a row of a later report replacing the
// row of the same data set of an earlier one, the Figure 2 of the last
// report that has one, the plots united, the distinct protocols and
// machines joined (so that a page merged from runs of different protocols
// says so).
func MergeTable2Reports(reports ...*Table2Report) *Table2Report {
	out := &Table2Report{}
	var protocols, machines []string
	for _, r := range reports {
		protocols, machines = appendNew(protocols, r.Protocol), appendNew(machines, r.Machine)
		for _, row := range r.Rows {
			i := slices.IndexFunc(out.Rows, func(o Table2Row) bool { return o.Data == row.Data })
			if i >= 0 {
				out.Rows[i] = row
			} else {
				out.Rows = append(out.Rows, row)
			}
		}
		if r.Figure2 != nil {
			out.Figure2 = r.Figure2
		}
		for _, p := range r.Plots {
			out.Plots = appendNew(out.Plots, p)
		}
	}
	out.Protocol, out.Machine = strings.Join(protocols, "; "), strings.Join(machines, "; ")
	return out
}

// appendNew appends s to list unless it is empty or already there.
func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
